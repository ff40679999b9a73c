//! Static files: `--http.static-dir DIR` served below `--http.static-prefix` (`/_static`).
//!
//! What it is: [`StaticFiles`]: GET and HEAD of the files inside one directory, with content
//! types ([`mime`]), `ETag`/`Last-Modified` and 304 answers, single `Range` requests (206,
//! 416) ([`conditional`]), and an in-memory cache ([`cache`]) so a repeated request for a
//! small file is answered without a system call.
//!
//! What it is not: authenticated. Like ArangoDB's web interface assets, static files are
//! served to anyone who can reach the port; put only public files in the directory. Not a
//! directory lister either: a directory is 404.
//!
//! Invariants: nothing outside the directory is ever read: a path with a `..` or `.`
//! segment, an encoded separator (`%2f`, `%5c`), a backslash or a NUL is refused with 403
//! before the file system is asked, and the resolved path (symlinks followed) must lie
//! inside the canonical directory, else 403; a file larger than [`FILE_SERVE_MAX`] is served
//! only in ranges of at most that size.

pub(crate) mod cache;
pub(crate) mod conditional;
pub(crate) mod mime;

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use http::header::{
    HeaderValue, ACCEPT_RANGES, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG, LAST_MODIFIED,
};
use http::{HeaderMap, Method, StatusCode};
use percent_encoding::percent_decode_str;
use quince_errors::{ArangoError, HTTP_FORBIDDEN, HTTP_NOT_FOUND, INTERNAL};

use self::cache::{FileCache, FileEntry, CACHED_FILE_MAX};
use self::conditional::{select, Selection};
use crate::error::method_not_allowed;
use crate::response::{ApiResponse, ApiResult};

/// The default mount point (`--http.static-prefix`).
pub const PREFIX_DEFAULT: &str = "/_static";

/// The largest file (or range) sent in one reply; replies are whole in memory.
pub(crate) const FILE_SERVE_MAX: u64 = 256 * 1024 * 1024;

/// A directory mounted below a path prefix.
pub(crate) struct StaticFiles {
    /// The mount point, without a trailing slash (`/_static`).
    prefix: String,
    /// The canonical directory.
    root: PathBuf,
    /// Entries by raw path below the mount.
    cache: FileCache,
}

impl StaticFiles {
    /// A mount of `dir` at `prefix`. The directory is resolved now (symlinks followed); if it
    /// cannot be, requests get 404 until it can (the server checks it exists at start).
    pub(crate) fn new(dir: &Path, prefix: &str) -> StaticFiles {
        let prefix = prefix.trim_end_matches('/');
        assert!(
            prefix.starts_with('/') && prefix.len() > 1,
            "the static prefix is a path below the root"
        );
        StaticFiles {
            prefix: prefix.to_string(),
            root: std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf()),
            cache: FileCache::default(),
        }
    }

    /// The raw path below the mount when `path` (no query) is inside it.
    pub(crate) fn mounted_path<'a>(&self, path: &'a str) -> Option<&'a str> {
        let rest = path.strip_prefix(self.prefix.as_str())?;
        if rest.is_empty() {
            return Some(rest);
        }
        rest.strip_prefix('/')
    }

    /// Answers GET or HEAD for `raw` (the raw path below the mount).
    pub(crate) async fn serve(&self, method: &Method, raw: &str, headers: &HeaderMap) -> ApiResult {
        let head = match *method {
            Method::GET => false,
            Method::HEAD => true,
            _ => return Err(method_not_allowed()),
        };
        let entry = match self.cache.get(raw) {
            Some((entry, true)) => entry,
            stale => {
                let relative = relative_path(raw)?;
                let known = stale.map(|(entry, _)| entry);
                self.load(raw, relative, known).await?
            }
        };
        self.reply(entry, headers, head).await
    }

    /// Resolves, checks and (when small) reads a file, refreshing its cache entry.
    async fn load(
        &self,
        key: &str,
        relative: PathBuf,
        known: Option<Arc<FileEntry>>,
    ) -> Result<Arc<FileEntry>, ArangoError> {
        let candidate = self.root.join(&relative);
        let root = self.root.clone();
        let (path, len, mtime) = blocking(move || resolve(&root, &candidate)).await?;
        if let Some(entry) = known.filter(|e| e.unchanged(&path, len, mtime)) {
            self.cache.touch(&entry);
            return Ok(entry);
        }
        let data = if len <= CACHED_FILE_MAX {
            let path = path.clone();
            Some(Bytes::from(blocking(move || read_all(&path)).await?))
        } else {
            None
        };
        // The bytes read are the truth if the file changed between the stat and the read.
        let len = data.as_ref().map_or(len, |d| d.len() as u64);
        let name = relative.to_string_lossy().into_owned();
        let entry = Arc::new(FileEntry::new(
            &self.cache,
            path,
            len,
            mtime,
            data,
            mime::content_type(&name),
        ));
        self.cache.insert(key, entry.clone());
        Ok(entry)
    }

    /// Builds the reply for a resolved file.
    async fn reply(&self, entry: Arc<FileEntry>, headers: &HeaderMap, head: bool) -> ApiResult {
        let selection = select(headers, entry.etag_text(), entry.modified_secs, entry.len);
        let mut reply = ApiResponse::empty(200);
        reply.headers.insert(ETAG, entry.etag.clone());
        reply
            .headers
            .insert(LAST_MODIFIED, entry.last_modified.clone());
        let (start, end) = match selection {
            Selection::NotModified => {
                reply.status = StatusCode::NOT_MODIFIED;
                return Ok(reply);
            }
            Selection::Unsatisfiable => {
                reply.status = StatusCode::RANGE_NOT_SATISFIABLE;
                reply
                    .headers
                    .insert(CONTENT_RANGE, header(&format!("bytes */{}", entry.len)));
                return Ok(reply);
            }
            Selection::Full => (0, entry.len),
            Selection::Partial { start, end } => {
                reply.status = StatusCode::PARTIAL_CONTENT;
                reply.headers.insert(
                    CONTENT_RANGE,
                    header(&format!("bytes {start}-{end}/{}", entry.len)),
                );
                (start, end + 1)
            }
        };
        reply
            .headers
            .insert(CONTENT_TYPE, entry.content_type.clone());
        reply
            .headers
            .insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
        let length = end - start;
        if length > FILE_SERVE_MAX {
            return Err(ArangoError::with_message(
                HTTP_FORBIDDEN,
                format!("file too large to send whole (over {FILE_SERVE_MAX} bytes): use a Range request"),
            ));
        }
        reply.body = match &entry.data {
            Some(data) => data.slice(usize_of(start)..usize_of(end)),
            None if head => {
                // A HEAD reply announces the length it would send without reading the file.
                reply
                    .headers
                    .insert(CONTENT_LENGTH, header(&length.to_string()));
                Bytes::new()
            }
            None => {
                let path = entry.path.clone();
                Bytes::from(blocking(move || read_range(&path, start, length)).await?)
            }
        };
        Ok(reply)
    }
}

/// The relative path of a raw request path, or 403 for anything that could leave the
/// directory (and 404 for what names no file).
fn relative_path(raw: &str) -> Result<PathBuf, ArangoError> {
    let lowered = raw.to_ascii_lowercase();
    if ["%2f", "%5c", "%00", "\\"]
        .iter()
        .any(|bad| lowered.contains(bad))
    {
        return Err(forbidden());
    }
    let decoded = percent_decode_str(raw)
        .decode_utf8()
        .map_err(|_| not_found())?;
    if decoded.contains('\0') {
        return Err(forbidden());
    }
    let mut path = PathBuf::new();
    for segment in decoded.split('/').filter(|s| !s.is_empty()) {
        if segment == ".." || segment == "." {
            return Err(forbidden());
        }
        path.push(segment);
    }
    if path.as_os_str().is_empty() {
        return Err(not_found());
    }
    Ok(path)
}

/// Follows symlinks and checks the result is a regular file inside `root`.
fn resolve(
    root: &Path,
    candidate: &Path,
) -> Result<(PathBuf, u64, std::time::SystemTime), ArangoError> {
    let path = std::fs::canonicalize(candidate).map_err(io_error)?;
    if !path.starts_with(root) {
        return Err(forbidden());
    }
    let meta = std::fs::metadata(&path).map_err(io_error)?;
    if !meta.is_file() {
        return Err(not_found());
    }
    let mtime = meta.modified().map_err(io_error)?;
    Ok((path, meta.len(), mtime))
}

fn read_all(path: &Path) -> Result<Vec<u8>, ArangoError> {
    let mut data = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(CACHED_FILE_MAX + 1).read_to_end(&mut data))
        .map_err(io_error)?;
    Ok(data)
}

fn read_range(path: &Path, start: u64, length: u64) -> Result<Vec<u8>, ArangoError> {
    let mut file = std::fs::File::open(path).map_err(io_error)?;
    file.seek(SeekFrom::Start(start)).map_err(io_error)?;
    let mut data = Vec::with_capacity(usize_of(length));
    file.take(length).read_to_end(&mut data).map_err(io_error)?;
    Ok(data)
}

/// Runs file system work on the blocking pool, off the request threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ArangoError> + Send + 'static,
) -> Result<T, ArangoError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ArangoError::with_message(INTERNAL, format!("file task failed: {e}")))?
}

fn io_error(error: std::io::Error) -> ArangoError {
    match error.kind() {
        std::io::ErrorKind::PermissionDenied => forbidden(),
        _ => not_found(),
    }
}

fn not_found() -> ArangoError {
    ArangoError::with_message(HTTP_NOT_FOUND, "file not found")
}

fn forbidden() -> ArangoError {
    ArangoError::with_message(HTTP_FORBIDDEN, "path not allowed")
}

fn header(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).expect("digits and ASCII are header text")
}

fn usize_of(n: u64) -> usize {
    usize::try_from(n).expect("bounded by the file size limits")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traversal_is_refused_before_the_file_system() {
        for bad in [
            "../etc/passwd",
            "a/../../x",
            "%2e%2e/x",
            "a%2f..%2fb",
            "a%5Cb",
            "a\\b",
            "a%00b",
            "./a",
        ] {
            assert_eq!(relative_path(bad).unwrap_err().status, 403, "{bad}");
        }
        assert_eq!(relative_path("").unwrap_err().status, 404);
        assert_eq!(relative_path("%ff").unwrap_err().status, 404);
        assert_eq!(
            relative_path("css//site%20a.css").unwrap(),
            PathBuf::from("css/site a.css")
        );
    }

    #[test]
    fn the_mount_is_a_path_prefix() {
        let dir = tempfile::tempdir().unwrap();
        let files = StaticFiles::new(dir.path(), "/_static/");
        assert_eq!(files.mounted_path("/_static/a.js"), Some("a.js"));
        assert_eq!(files.mounted_path("/_static"), Some(""));
        assert_eq!(files.mounted_path("/_staticx/a.js"), None);
        assert_eq!(files.mounted_path("/_api/version"), None);
    }

    #[tokio::test]
    async fn files_are_served_cached_and_kept_inside_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), b"hello world").unwrap();
        std::fs::write(outside.path().join("secret.txt"), b"secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("leak"))
            .unwrap();
        std::os::unix::fs::symlink(dir.path().join("a.txt"), dir.path().join("alias.txt")).unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let files = StaticFiles::new(dir.path(), "/_static");
        let none = HeaderMap::new();

        let ok = files.serve(&Method::GET, "a.txt", &none).await.unwrap();
        assert_eq!(ok.status, 200);
        assert_eq!(&ok.body[..], b"hello world");
        assert_eq!(ok.headers[CONTENT_TYPE], "text/plain; charset=utf-8");
        assert_eq!(files.cache.usage(), (1, 11));
        let alias = files.serve(&Method::GET, "alias.txt", &none).await.unwrap();
        assert_eq!(&alias.body[..], b"hello world");

        let leak = files.serve(&Method::GET, "leak", &none).await.unwrap_err();
        assert_eq!(leak.status, 403);
        let missing = files.serve(&Method::GET, "nope", &none).await.unwrap_err();
        assert_eq!(missing.status, 404);
        let directory = files.serve(&Method::GET, "sub", &none).await.unwrap_err();
        assert_eq!(directory.status, 404);
        let post = files
            .serve(&Method::POST, "a.txt", &none)
            .await
            .unwrap_err();
        assert_eq!(post.status, 405);

        let mut range = HeaderMap::new();
        range.insert(http::header::RANGE, HeaderValue::from_static("bytes=6-"));
        let part = files.serve(&Method::GET, "a.txt", &range).await.unwrap();
        assert_eq!(part.status, 206);
        assert_eq!(&part.body[..], b"world");
        assert_eq!(part.headers[CONTENT_RANGE], "bytes 6-10/11");
    }

    #[tokio::test]
    async fn large_files_are_read_per_request() {
        let dir = tempfile::tempdir().unwrap();
        let big: Vec<u8> = (0..(CACHED_FILE_MAX + 10))
            .map(|i| (i % 251) as u8)
            .collect();
        std::fs::write(dir.path().join("big.bin"), &big).unwrap();
        let files = StaticFiles::new(dir.path(), "/_static");
        let whole = files
            .serve(&Method::GET, "big.bin", &HeaderMap::new())
            .await
            .unwrap();
        assert_eq!(whole.body.len(), big.len());
        assert_eq!(
            files.cache.usage().1,
            0,
            "large files' bytes are not cached"
        );
        let mut range = HeaderMap::new();
        range.insert(http::header::RANGE, HeaderValue::from_static("bytes=-5"));
        let tail = files.serve(&Method::GET, "big.bin", &range).await.unwrap();
        assert_eq!(&tail.body[..], &big[big.len() - 5..]);
        let head = files
            .serve(&Method::HEAD, "big.bin", &HeaderMap::new())
            .await
            .unwrap();
        assert!(head.body.is_empty());
        assert_eq!(head.headers[CONTENT_LENGTH], big.len().to_string().as_str());
    }
}
