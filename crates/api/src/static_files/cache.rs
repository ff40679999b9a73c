//! The static file cache: small files' bytes and every served file's validators in memory.
//!
//! What it is: [`FileCache`], a map from the request's raw path (below the mount) to a
//! [`FileEntry`]: the file's canonical path, size, modification time, precomputed `ETag`,
//! `Last-Modified` and `Content-Type` header values, and (for files up to
//! [`CACHED_FILE_MAX`]) its bytes. An entry is trusted without touching the file system for
//! [`REVALIDATE_AFTER`]; after that the next request checks the file again (path resolution,
//! size and modification time) and replaces the entry when the file changed.
//!
//! What it is not: path validation or HTTP (`super`).
//!
//! Invariants: a cache hit within the revalidation window makes no system call (the clock
//! read is vDSO); the bytes held stay within [`CACHE_BYTES_MAX`] and the entries within
//! [`CACHE_ENTRIES_MAX`] (inserting evicts other entries first); a file changed on disk is
//! served changed at most [`REVALIDATE_AFTER`] later.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http::HeaderValue;
use parking_lot::RwLock;

/// How long an entry is trusted before the file is checked again.
pub(crate) const REVALIDATE_AFTER: Duration = Duration::from_secs(1);

/// Files up to this size are kept in memory; larger ones are read for each request.
pub(crate) const CACHED_FILE_MAX: u64 = 1024 * 1024;

/// The most file bytes the cache holds.
pub(crate) const CACHE_BYTES_MAX: usize = 64 * 1024 * 1024;

/// The most entries the cache holds.
pub(crate) const CACHE_ENTRIES_MAX: usize = 16 * 1024;

/// What the cache knows about one file.
pub(crate) struct FileEntry {
    /// The canonical path (symlinks resolved, inside the mount).
    pub path: PathBuf,
    /// The size in bytes.
    pub len: u64,
    /// The modification time, for change detection.
    pub mtime: SystemTime,
    /// The modification time in whole Unix seconds, for `If-Modified-Since`.
    pub modified_secs: u64,
    /// The contents, for files up to [`CACHED_FILE_MAX`].
    pub data: Option<Bytes>,
    /// The quoted entity tag, from size and modification time.
    pub etag: HeaderValue,
    /// The `Last-Modified` value.
    pub last_modified: HeaderValue,
    /// The `Content-Type` value.
    pub content_type: HeaderValue,
    /// When the file was last checked, in milliseconds since the cache's epoch.
    checked_ms: AtomicU64,
}

impl FileEntry {
    /// An entry for a file just checked.
    pub(crate) fn new(
        cache: &FileCache,
        path: PathBuf,
        len: u64,
        mtime: SystemTime,
        data: Option<Bytes>,
        content_type: &'static str,
    ) -> FileEntry {
        let since_epoch = mtime.duration_since(UNIX_EPOCH).unwrap_or_default();
        let etag = format!("\"{:x}-{:x}\"", len, since_epoch.as_nanos());
        FileEntry {
            path,
            len,
            mtime,
            modified_secs: since_epoch.as_secs(),
            data,
            etag: HeaderValue::from_str(&etag).expect("hex digits and quotes are header text"),
            last_modified: HeaderValue::from_str(&httpdate::fmt_http_date(mtime))
                .expect("an HTTP date is header text"),
            content_type: HeaderValue::from_static(content_type),
            checked_ms: AtomicU64::new(cache.now_ms()),
        }
    }

    /// True when the file on disk still has this entry's size and modification time.
    pub(crate) fn unchanged(&self, path: &std::path::Path, len: u64, mtime: SystemTime) -> bool {
        self.path == path && self.len == len && self.mtime == mtime
    }

    /// The entity tag as text.
    pub(crate) fn etag_text(&self) -> &str {
        self.etag.to_str().expect("built from ASCII")
    }
}

struct Inner {
    entries: HashMap<Box<str>, Arc<FileEntry>>,
    bytes: usize,
}

/// The cache; shared by every request.
pub(crate) struct FileCache {
    inner: RwLock<Inner>,
    epoch: Instant,
}

impl Default for FileCache {
    fn default() -> Self {
        FileCache {
            inner: RwLock::new(Inner {
                entries: HashMap::new(),
                bytes: 0,
            }),
            epoch: Instant::now(),
        }
    }
}

impl FileCache {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// The entry for a raw path, and whether it is still within its revalidation window.
    pub(crate) fn get(&self, key: &str) -> Option<(Arc<FileEntry>, bool)> {
        let entry = self.inner.read().entries.get(key).cloned()?;
        let age = self
            .now_ms()
            .saturating_sub(entry.checked_ms.load(Ordering::Relaxed));
        let fresh = u128::from(age) < REVALIDATE_AFTER.as_millis();
        Some((entry, fresh))
    }

    /// Records that an entry was checked against the file and found current.
    pub(crate) fn touch(&self, entry: &FileEntry) {
        entry.checked_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// Stores an entry, evicting others as needed to stay within the bounds. An entry whose
    /// bytes alone pass the bound is not stored.
    pub(crate) fn insert(&self, key: &str, entry: Arc<FileEntry>) {
        let size = entry.data.as_ref().map_or(0, Bytes::len);
        if size > CACHE_BYTES_MAX {
            return;
        }
        let mut inner = self.inner.write();
        if let Some(old) = inner.entries.remove(key) {
            inner.bytes -= old.data.as_ref().map_or(0, Bytes::len);
        }
        while !inner.entries.is_empty()
            && (inner.bytes + size > CACHE_BYTES_MAX || inner.entries.len() >= CACHE_ENTRIES_MAX)
        {
            let victim = inner
                .entries
                .keys()
                .next()
                .cloned()
                .expect("the map is not empty");
            let old = inner
                .entries
                .remove(&victim)
                .expect("the key was just read");
            inner.bytes -= old.data.as_ref().map_or(0, Bytes::len);
        }
        inner.bytes += size;
        inner.entries.insert(key.into(), entry);
    }

    /// (entries, bytes held).
    #[cfg(test)]
    pub(crate) fn usage(&self) -> (usize, usize) {
        let inner = self.inner.read();
        (inner.entries.len(), inner.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(cache: &FileCache, bytes: usize) -> Arc<FileEntry> {
        Arc::new(FileEntry::new(
            cache,
            PathBuf::from("/x"),
            bytes as u64,
            UNIX_EPOCH + Duration::from_secs(5),
            Some(Bytes::from(vec![b'a'; bytes])),
            "text/plain; charset=utf-8",
        ))
    }

    #[test]
    fn entries_are_fresh_then_bounded() {
        let cache = FileCache::default();
        cache.insert("a", entry(&cache, 10));
        let (hit, fresh) = cache.get("a").unwrap();
        assert!(fresh);
        assert_eq!(hit.etag_text(), "\"a-12a05f200\"");
        assert_eq!(hit.last_modified, "Thu, 01 Jan 1970 00:00:05 GMT");
        assert!(hit.unchanged(std::path::Path::new("/x"), 10, hit.mtime));
        assert!(!hit.unchanged(std::path::Path::new("/x"), 11, hit.mtime));
        assert!(cache.get("b").is_none());
        cache.insert("a", entry(&cache, 20));
        assert_eq!(cache.usage(), (1, 20));
        cache.insert("big", entry(&cache, CACHE_BYTES_MAX));
        // The big one fits only once the others are gone.
        assert_eq!(cache.usage(), (1, CACHE_BYTES_MAX));
        cache.insert("c", entry(&cache, 1));
        assert_eq!(cache.usage(), (1, 1));
    }
}
