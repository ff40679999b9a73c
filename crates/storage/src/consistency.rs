//! [`Store::check_consistency`]: an exhaustive check of the store's in-memory invariants against
//! each other and against its files, for tests (after every step of the property tests) and
//! for debugging.
//!
//! What it is: one pass over the index (reading every live record back), the file set, the
//! writer's state, group commit's hand-off list and the manifest on disk, with writers and
//! upkeep held off so nothing moves meanwhile. O(keys + files) reads: not for a hot path.
//!
//! What it is not: recovery's checks of what is on disk (`recovery.rs`, `chain.rs`), nor a
//! repair: it reports the first broken invariant and changes nothing.
//!
//! Invariants checked: listed in [`Store::check_consistency`]'s documentation.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::Ordering;

use crate::format;
use crate::store::{value_len, Store};

impl Store {
    /// Checks the store's invariants and returns the first one broken, as text:
    /// - every index entry names a file of the store, inside the file's written length, and
    ///   the record there verifies and matches its key, `seq`, revision and size;
    /// - each file's live count and live bytes equal what the index points into it; the
    ///   store's live value bytes equal the index's; the index's size is `figures`' alive count;
    /// - `seq_written` is the writer's next `seq` minus one, no index entry, metadata record,
    ///   newest commit record or durable mark (`synced`) is past it, and no entry's revision is
    ///   past `last_tick`; a pending group lies inside the active journal;
    /// - journals: the active one (at most one) is in the file set and not sealed, and is what
    ///   `sync` would fsync; every other journal is either handed off (older than the active
    ///   one, in fid order, ending with its footer) or the spare (newer than every journal used,
    ///   holding its header only); sealed files are not on the hand-off list;
    /// - no compaction output is in progress;
    /// - unless poisoned: every file's written length is its length on disk, and the manifest
    ///   on disk is the one the store last wrote (when it knows it wrote one), names only files
    ///   of the store, and names the spare.
    ///
    /// Takes the upkeep lock and then the writer lock (the store's lock order); waits for a
    /// maintenance pass or a compaction in progress.
    pub fn check_consistency(&self) -> Result<(), String> {
        let _upkeep = self.upkeep.lock();
        let writer = self.writer.lock();
        let files = self.files.read().clone();
        let poisoned = self.poison.reason().is_some();

        // The index against the files.
        let mut live: BTreeMap<u64, (u64, u64)> = BTreeMap::new();
        let mut value_bytes = 0u64;
        let mut entries = 0u64;
        let mut problem = None;
        let seq_written = self.seq_written.load(Ordering::Acquire);
        let last_tick = self.last_tick.load(Ordering::Relaxed);
        self.index.for_each_location(&mut |key, location| {
            if problem.is_some() {
                return;
            }
            entries += 1;
            let fid = u64::from(location.fid);
            let counted = live.entry(fid).or_default();
            counted.0 += 1;
            counted.1 += u64::from(location.size);
            value_bytes += value_len(key, location);
            let Some(file) = files.get(&fid) else {
                problem = Some(format!(
                    "key {key:?} names file {fid}, which the store lacks"
                ));
                return;
            };
            let end = location.offset + format::padded(u64::from(location.size));
            if location.offset < format::FILE_HEADER_RECORD_SIZE
                || end > file.len.load(Ordering::Acquire)
            {
                problem = Some(format!(
                    "key {key:?} names {}..{end} of file {fid}, outside its written length {}",
                    location.offset,
                    file.len.load(Ordering::Acquire)
                ));
                return;
            }
            if location.seq > seq_written || location.rev > last_tick {
                problem = Some(format!(
                    "key {key:?} has seq {} / rev {} past seq_written {seq_written} / \
                     last_tick {last_tick}",
                    location.seq, location.rev
                ));
                return;
            }
            if let Err(e) = self.read_at(file, location, key) {
                problem = Some(format!("key {key:?}: {e}"));
            }
        });
        if let Some(problem) = problem {
            return Err(problem);
        }
        if entries != self.index.len() {
            return Err(format!(
                "the index visits {entries} entries but counts {}",
                self.index.len()
            ));
        }
        for (fid, file) in &files {
            let c = file.counts();
            let (count, bytes) = live.get(fid).copied().unwrap_or_default();
            if (c.live_count, c.live_bytes) != (count, bytes) {
                return Err(format!(
                    "file {fid} counts {} live records of {} bytes, the index {count} of {bytes}",
                    c.live_count, c.live_bytes
                ));
            }
        }
        if let Some(fid) = live.keys().find(|fid| !files.contains_key(fid)) {
            return Err(format!(
                "the index points into file {fid}, not in the store"
            ));
        }
        let stored = self.live_value_bytes.load(Ordering::Relaxed);
        if stored != value_bytes {
            return Err(format!(
                "live value bytes are {stored}, the index's values {value_bytes}"
            ));
        }
        if self.figures().alive_count != self.index.len() {
            return Err("figures' alive count differs from the index".into());
        }

        // Sequence numbers.
        if writer.seq_next != seq_written + 1 {
            return Err(format!(
                "the next seq is {}, but seq_written is {seq_written}",
                writer.seq_next
            ));
        }
        if self.group_commit.synced() > seq_written {
            return Err(format!(
                "synced {} is past seq_written {seq_written}",
                self.group_commit.synced()
            ));
        }
        if let Some((seq, _)) = &*self.meta.lock() {
            if *seq > seq_written {
                return Err(format!("the metadata's seq {seq} is past {seq_written}"));
            }
        }
        if let Some((seq, trx)) = *self.newest_commit.lock() {
            if seq > seq_written || trx == 0 {
                return Err(format!(
                    "the newest commit record (seq {seq}, transaction {trx}) is past \
                     {seq_written} or names no transaction"
                ));
            }
        }
        if let Some(pending) = self.pending_at() {
            let end = writer
                .journal
                .as_ref()
                .map(|j| (j.fid, j.len.load(Ordering::Acquire)));
            if end.is_none_or(|(fid, len)| fid != pending.fid || pending.offset >= len) {
                return Err(format!(
                    "the pending group at {} of file {} is not inside the active journal {end:?}",
                    pending.offset, pending.fid
                ));
            }
        }

        // Journals.
        let handed_off = self.group_commit.handed_off();
        let mut journals: BTreeSet<u64> = files
            .values()
            .filter(|f| !f.is_sealed())
            .map(|f| f.fid)
            .collect();
        let active = self.active.read().fid;
        match &writer.journal {
            Some(journal) => {
                if !journals.remove(&journal.fid) {
                    return Err(format!("active journal {} is not a journal", journal.fid));
                }
                if active != journal.fid || journal.fid > writer.fid_last {
                    return Err(format!(
                        "active journal {}: `active` names {active}, last fid used {}",
                        journal.fid, writer.fid_last
                    ));
                }
            }
            None if active != 0 => {
                return Err(format!("no active journal, but `active` names {active}"));
            }
            None => {}
        }
        let mut previous = 0;
        for (journal, _) in &handed_off {
            let sealed = journal.is_sealed();
            if sealed || !journals.remove(&journal.fid) || journal.fid <= previous {
                return Err(format!(
                    "handed-off journal {} (sealed: {sealed}) is not a journal of the store \
                     in order",
                    journal.fid
                ));
            }
            if writer
                .journal
                .as_ref()
                .is_some_and(|j| j.fid <= journal.fid)
            {
                return Err(format!(
                    "handed-off journal {} is not older than the active one",
                    journal.fid
                ));
            }
            let end = journal.len.load(Ordering::Acquire);
            let mut footer = vec![0u8; format::FOOTER_RECORD_SIZE as usize];
            let read = end
                .checked_sub(format::FOOTER_RECORD_SIZE)
                .ok_or_else(|| "too short".to_string())
                .and_then(|at| {
                    journal
                        .handle
                        .read_exact_at(&mut footer, at)
                        .map_err(|e| e.to_string())
                });
            let is_footer = read.is_ok()
                && format::decode(&footer).is_ok_and(|r| r.kind == format::RecordType::Footer);
            if !poisoned && !is_footer {
                return Err(format!(
                    "handed-off journal {} ends without its footer",
                    journal.fid
                ));
            }
            previous = journal.fid;
        }
        let spare = self.spare_fid.load(Ordering::Relaxed);
        match &writer.spare {
            Some(file) => {
                let len = file.len.load(Ordering::Acquire);
                if file.fid != spare
                    || !journals.remove(&file.fid)
                    || file.fid <= writer.fid_last
                    || len != format::FILE_HEADER_RECORD_SIZE
                    || !file.entry_durable()
                {
                    return Err(format!(
                        "spare journal {} (spare_fid {spare}, last fid used {}, length {len}) \
                         is not a durable, unused journal newer than the active one",
                        file.fid, writer.fid_last
                    ));
                }
            }
            None if spare != 0 => return Err(format!("no spare, but spare_fid is {spare}")),
            None => {}
        }
        // A journal whose footer could not be appended is left behind by a poisoned store.
        if !journals.is_empty() && !poisoned {
            return Err(format!(
                "journals {journals:?} are neither active, handed off nor the spare"
            ));
        }
        if self.compactors.load(Ordering::Relaxed) != 0 {
            return Err("a compaction output is in progress under the upkeep lock".into());
        }
        drop(writer);

        // The files on disk.
        if poisoned {
            return Ok(());
        }
        for (fid, file) in &files {
            let written = file.len.load(Ordering::Acquire);
            let on_disk = file.handle.len().map_err(|e| e.to_string())?;
            if written != on_disk {
                return Err(format!(
                    "file {fid}: {written} bytes written, {on_disk} on disk"
                ));
            }
        }
        let listed = self.files.listed.lock().clone();
        if let Some(listed) = listed {
            let on_disk =
                crate::manifest::read(self.io.as_ref(), &self.dir).map_err(|e| e.to_string())?;
            if on_disk.as_ref() != Some(&listed) {
                return Err(format!(
                    "the manifest names {on_disk:?}, the store wrote {listed:?}"
                ));
            }
            if let Some(fid) = listed.iter().find(|fid| !files.contains_key(fid)) {
                return Err(format!("the manifest names file {fid}, not in the store"));
            }
            if spare != 0 && !listed.contains(&spare) {
                return Err(format!(
                    "the manifest does not name the spare journal {spare}"
                ));
            }
        }
        Ok(())
    }
}
