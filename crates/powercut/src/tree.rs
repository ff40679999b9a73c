//! [`Tree`]: the file system's state, inode by inode, with a live and a durable namespace.
//!
//! What it is: the inode table (regular files holding a [`FileImage`], directories holding
//! *live* entries, which lookups see, and *durable* entries, which a reboot would find), open
//! handles, and the plain operations on them: lookup, create, mkdir, unlink, rmdir, read,
//! write, set_len, fsync of a file, readdir. Creating, unlinking and removing change only the
//! live entries; a directory's durable entries change when it is fsynced or when a rename that
//! touches it is committed (`namespace.rs`). The power cut is in `cut.rs`.
//!
//! What it is not: FUSE. Nothing here knows about requests or kernels, so the model is tested
//! as plain Rust (`fs.rs` adapts it). No hard links, symlinks or special files.
//!
//! Invariants (checked by [`Tree::check_invariants`] after every change in debug builds):
//! the root exists and is a directory; every live entry names an existing inode and every
//! live directory is named by exactly one live entry, its `parent`'s; an inode has at most one
//! durable name; inode numbers and handle numbers are never reused, not even across cuts.
//! An inode is kept while anything can still reach it: a live or durable entry of a kept
//! directory, an open handle, or a pending rename.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::time::SystemTime;

use crate::cut::CutReport;
use crate::file_image::FileImage;
use crate::stats::Stats;

/// An inode number.
pub type Ino = u64;

/// The root directory's inode (FUSE's `FUSE_ROOT_ID`).
pub const ROOT: Ino = 1;

/// Longest name of a directory entry, in bytes.
pub const NAME_BYTES_MAX: usize = 255;

/// Why an operation was refused; `fs.rs` maps each to an errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FsError {
    /// ENOENT.
    NotFound,
    /// EEXIST.
    Exists,
    /// ENOTDIR.
    NotDir,
    /// EISDIR.
    IsDir,
    /// ENOTEMPTY.
    NotEmpty,
    /// EINVAL (a bad name, a directory moved into itself).
    Invalid,
    /// ENAMETOOLONG.
    NameTooLong,
    /// EFBIG (past `FILE_BYTES_MAX`).
    TooBig,
    /// EBADF (a handle this state does not know, such as one opened before a cut).
    BadHandle,
}

/// The result of a model operation.
pub type FsResult<T> = Result<T, FsError>;

/// What an inode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
}

/// An inode's metadata besides its size and links.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    /// Permission bits (`0o7777` at most).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Last access.
    pub atime: SystemTime,
    /// Last data change.
    pub mtime: SystemTime,
    /// Last inode change.
    pub ctime: SystemTime,
}

impl Meta {
    /// Metadata of a new inode, all times now.
    pub fn new(mode: u32, uid: u32, gid: u32) -> Meta {
        let now = SystemTime::now();
        Meta {
            mode: mode & 0o7777,
            uid,
            gid,
            atime: now,
            mtime: now,
            ctime: now,
        }
    }
}

/// What `getattr` reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attr {
    /// The inode.
    pub ino: Ino,
    /// File or directory.
    pub kind: Kind,
    /// Live length in bytes (a directory reports 4096).
    pub size: u64,
    /// Live links (0 for an unlinked file still open).
    pub nlink: u32,
    /// Mode, owner and times.
    pub meta: Meta,
}

/// One live directory entry, as `readdir` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The name.
    pub name: OsString,
    /// The inode it names.
    pub ino: Ino,
    /// File or directory.
    pub kind: Kind,
}

/// A directory's two namespaces.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dir {
    /// The directory holding this one's live entry (the root is its own parent).
    pub(crate) parent: Ino,
    /// What lookups see.
    pub(crate) live: BTreeMap<OsString, Ino>,
    /// What a reboot finds (if the directory itself is found).
    pub(crate) durable: BTreeMap<OsString, Ino>,
}

/// A file's bytes or a directory's entries.
#[derive(Clone, Debug)]
pub(crate) enum Body {
    File(FileImage),
    Dir(Dir),
}

/// One inode.
#[derive(Clone, Debug)]
pub(crate) struct Node {
    pub(crate) meta: Meta,
    /// Live entries naming a file (0 or 1: no hard links); unused for directories.
    pub(crate) links: u32,
    pub(crate) body: Body,
}

impl Node {
    pub(crate) fn kind(&self) -> Kind {
        match self.body {
            Body::File(_) => Kind::File,
            Body::Dir(_) => Kind::Dir,
        }
    }

    pub(crate) fn dir(&self) -> FsResult<&Dir> {
        match &self.body {
            Body::Dir(dir) => Ok(dir),
            Body::File(_) => Err(FsError::NotDir),
        }
    }

    pub(crate) fn dir_mut(&mut self) -> FsResult<&mut Dir> {
        match &mut self.body {
            Body::Dir(dir) => Ok(dir),
            Body::File(_) => Err(FsError::NotDir),
        }
    }

    fn file(&self) -> FsResult<&FileImage> {
        match &self.body {
            Body::File(file) => Ok(file),
            Body::Dir(_) => Err(FsError::IsDir),
        }
    }

    fn file_mut(&mut self) -> FsResult<&mut FileImage> {
        match &mut self.body {
            Body::File(file) => Ok(file),
            Body::Dir(_) => Err(FsError::IsDir),
        }
    }
}

/// An open file or directory.
#[derive(Clone, Debug)]
pub(crate) struct Handle {
    pub(crate) ino: Ino,
    /// A directory's entries as of the `readdir` at offset 0, so that a listing stays
    /// consistent while entries are removed (as `remove_dir_all` does).
    pub(crate) listing: Option<Vec<DirEntry>>,
}

/// A rename from one directory into another that no fsync has committed yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingRename {
    pub(crate) ino: Ino,
    pub(crate) src_dir: Ino,
    pub(crate) dst_dir: Ino,
    pub(crate) dst_name: OsString,
}

/// The whole file system.
#[derive(Clone, Debug)]
pub struct Tree {
    pub(crate) nodes: HashMap<Ino, Node>,
    /// The next inode number; never reused.
    pub(crate) ino_next: Ino,
    /// Cross-directory renames not yet committed, oldest first.
    pub(crate) renames: Vec<PendingRename>,
    pub(crate) handles: HashMap<u64, Handle>,
    /// The next handle number; never reused, so a handle from before a cut is just unknown.
    pub(crate) fh_next: u64,
    pub(crate) stats: Stats,
    pub(crate) last_cut: Option<CutReport>,
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

impl Tree {
    /// An empty file system: the root directory, durable and empty.
    pub fn new() -> Tree {
        let root = Node {
            meta: Meta::new(0o755, 0, 0),
            links: 0,
            body: Body::Dir(Dir {
                parent: ROOT,
                ..Dir::default()
            }),
        };
        Tree {
            nodes: HashMap::from([(ROOT, root)]),
            ino_next: ROOT + 1,
            renames: Vec::new(),
            handles: HashMap::new(),
            fh_next: 1,
            stats: Stats::default(),
            last_cut: None,
        }
    }

    /// Counters so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// The report of the last cut, if any.
    pub fn last_cut(&self) -> Option<&CutReport> {
        self.last_cut.as_ref()
    }

    /// Inodes and live bytes in use (for `statfs`).
    pub fn usage(&self) -> (u64, u64) {
        let bytes = self
            .nodes
            .values()
            .map(|node| match &node.body {
                Body::File(file) => file.len(),
                Body::Dir(_) => 0,
            })
            .sum();
        (self.nodes.len() as u64, bytes)
    }

    pub(crate) fn node(&self, ino: Ino) -> FsResult<&Node> {
        self.nodes.get(&ino).ok_or(FsError::NotFound)
    }

    pub(crate) fn node_mut(&mut self, ino: Ino) -> FsResult<&mut Node> {
        self.nodes.get_mut(&ino).ok_or(FsError::NotFound)
    }

    pub(crate) fn dir(&self, ino: Ino) -> FsResult<&Dir> {
        self.node(ino)?.dir()
    }

    pub(crate) fn dir_mut(&mut self, ino: Ino) -> FsResult<&mut Dir> {
        self.node_mut(ino)?.dir_mut()
    }

    /// What `getattr` reports for an inode.
    pub fn attr(&self, ino: Ino) -> FsResult<Attr> {
        let node = self.node(ino)?;
        let (size, nlink) = match &node.body {
            Body::File(file) => (file.len(), node.links),
            Body::Dir(dir) => {
                let subdirs = dir
                    .live
                    .values()
                    .filter(|child| self.nodes.get(child).map(Node::kind) == Some(Kind::Dir))
                    .count();
                (4096, 2 + u32::try_from(subdirs).unwrap_or(u32::MAX - 2))
            }
        };
        Ok(Attr {
            ino,
            kind: node.kind(),
            size,
            nlink,
            meta: node.meta,
        })
    }

    /// The inode a live entry names.
    pub fn lookup(&self, parent: Ino, name: &OsStr) -> FsResult<Ino> {
        check_name(name)?;
        self.dir(parent)?
            .live
            .get(name)
            .copied()
            .ok_or(FsError::NotFound)
    }

    /// Creates an empty regular file (live only until its directory is fsynced).
    pub fn create_file(&mut self, parent: Ino, name: &OsStr, meta: Meta) -> FsResult<Ino> {
        self.add_node(parent, name, meta, Body::File(FileImage::new()))
    }

    /// Creates an empty directory (live only until its parent is fsynced; it is empty and
    /// durable in itself, so fsyncing it alone keeps nothing).
    pub fn mkdir(&mut self, parent: Ino, name: &OsStr, meta: Meta) -> FsResult<Ino> {
        let dir = Dir {
            parent,
            ..Dir::default()
        };
        self.add_node(parent, name, meta, Body::Dir(dir))
    }

    fn add_node(&mut self, parent: Ino, name: &OsStr, meta: Meta, body: Body) -> FsResult<Ino> {
        check_name(name)?;
        if self.dir(parent)?.live.contains_key(name) {
            return Err(FsError::Exists);
        }
        let ino = self.ino_next;
        self.ino_next += 1;
        let links = u32::from(matches!(body, Body::File(_)));
        self.nodes.insert(ino, Node { meta, links, body });
        self.dir_mut(parent)?.live.insert(name.to_owned(), ino);
        self.touch_dir(parent);
        self.stats.creates += 1;
        self.check_invariants();
        Ok(ino)
    }

    /// Removes a file's live entry (its bytes stay reachable through open handles and
    /// durable entries until those go).
    pub fn unlink(&mut self, parent: Ino, name: &OsStr) -> FsResult<()> {
        let ino = self.lookup(parent, name)?;
        let node = self.node_mut(ino)?;
        if node.kind() == Kind::Dir {
            return Err(FsError::IsDir);
        }
        node.links = node.links.saturating_sub(1);
        node.meta.ctime = SystemTime::now();
        self.dir_mut(parent)?.live.remove(name);
        self.touch_dir(parent);
        self.stats.removes += 1;
        self.collect_garbage();
        Ok(())
    }

    /// Removes an empty directory's live entry.
    pub fn rmdir(&mut self, parent: Ino, name: &OsStr) -> FsResult<()> {
        let ino = self.lookup(parent, name)?;
        if !self.dir(ino)?.live.is_empty() {
            return Err(FsError::NotEmpty);
        }
        self.dir_mut(parent)?.live.remove(name);
        self.touch_dir(parent);
        self.stats.removes += 1;
        self.collect_garbage();
        Ok(())
    }

    /// The live entries of a directory, sorted by name.
    pub fn list(&self, ino: Ino) -> FsResult<Vec<DirEntry>> {
        let dir = self.dir(ino)?;
        dir.live
            .iter()
            .map(|(name, &child)| {
                Ok(DirEntry {
                    name: name.clone(),
                    ino: child,
                    kind: self.node(child)?.kind(),
                })
            })
            .collect()
    }

    /// The live parent of a directory (the root's is itself).
    pub fn parent_of(&self, ino: Ino) -> FsResult<Ino> {
        Ok(self.dir(ino)?.parent)
    }

    /// Up to `size` live bytes of a file from `offset`.
    pub fn read(&self, ino: Ino, offset: u64, size: usize) -> FsResult<Vec<u8>> {
        Ok(self.node(ino)?.file()?.read(offset, size).to_vec())
    }

    /// `pwrite`.
    pub fn write(&mut self, ino: Ino, offset: u64, data: &[u8]) -> FsResult<()> {
        let node = self.node_mut(ino)?;
        if !node.file_mut()?.write(offset, data) {
            return Err(FsError::TooBig);
        }
        let now = SystemTime::now();
        node.meta.mtime = now;
        node.meta.ctime = now;
        self.stats.writes += 1;
        self.stats.bytes_written += data.len() as u64;
        Ok(())
    }

    /// `ftruncate` (or `O_TRUNC`).
    pub fn set_len(&mut self, ino: Ino, len: u64) -> FsResult<()> {
        let node = self.node_mut(ino)?;
        if !node.file_mut()?.set_len(len) {
            return Err(FsError::TooBig);
        }
        let now = SystemTime::now();
        node.meta.mtime = now;
        node.meta.ctime = now;
        self.stats.set_lens += 1;
        Ok(())
    }

    /// `chmod`, `chown`, `utimens`; `None` leaves a field as it is.
    pub fn set_meta(&mut self, ino: Ino, update: MetaUpdate) -> FsResult<()> {
        let node = self.node_mut(ino)?;
        if let Some(mode) = update.mode {
            node.meta.mode = mode & 0o7777;
        }
        if let Some(uid) = update.uid {
            node.meta.uid = uid;
        }
        if let Some(gid) = update.gid {
            node.meta.gid = gid;
        }
        if let Some(atime) = update.atime {
            node.meta.atime = atime;
        }
        if let Some(mtime) = update.mtime {
            node.meta.mtime = mtime;
        }
        node.meta.ctime = SystemTime::now();
        Ok(())
    }

    /// `fsync` / `fdatasync` of an inode: a file's bytes become durable; for a directory it
    /// is [`Tree::fsync_dir`].
    pub fn fsync(&mut self, ino: Ino, datasync: bool) -> FsResult<()> {
        if self.node(ino)?.kind() == Kind::Dir {
            return self.fsync_dir(ino);
        }
        self.node_mut(ino)?.file_mut()?.sync();
        if datasync {
            self.stats.fdatasyncs += 1;
        } else {
            self.stats.fsyncs += 1;
        }
        Ok(())
    }

    /// Opens an inode; the handle keeps it (even unlinked) until [`Tree::release`].
    pub fn open(&mut self, ino: Ino) -> FsResult<u64> {
        self.node(ino)?;
        let fh = self.fh_next;
        self.fh_next += 1;
        self.handles.insert(fh, Handle { ino, listing: None });
        Ok(fh)
    }

    /// The inode a handle was opened on.
    pub fn handle_ino(&self, fh: u64) -> FsResult<Ino> {
        self.handles
            .get(&fh)
            .map(|handle| handle.ino)
            .ok_or(FsError::BadHandle)
    }

    /// Closes a handle (unknown handles, from before a cut, are ignored).
    pub fn release(&mut self, fh: u64) {
        if self.handles.remove(&fh).is_some() {
            self.collect_garbage();
        }
    }

    /// A directory handle's listing from entry `offset` on (`.` and `..` first); offset 0
    /// takes a fresh snapshot.
    pub fn read_dir(&mut self, fh: u64, offset: usize) -> FsResult<Vec<DirEntry>> {
        let ino = self.handle_ino(fh)?;
        let stale = self.handles.get(&fh).is_some_and(|h| h.listing.is_none());
        if offset == 0 || stale {
            let mut listing = vec![
                DirEntry {
                    name: ".".into(),
                    ino,
                    kind: Kind::Dir,
                },
                DirEntry {
                    name: "..".into(),
                    ino: self.parent_of(ino)?,
                    kind: Kind::Dir,
                },
            ];
            listing.extend(self.list(ino)?);
            self.handles.get_mut(&fh).expect("checked above").listing = Some(listing);
        }
        let listing = self.handles[&fh].listing.as_deref().unwrap_or_default();
        Ok(listing.iter().skip(offset).cloned().collect())
    }

    pub(crate) fn touch_dir(&mut self, ino: Ino) {
        if let Some(node) = self.nodes.get_mut(&ino) {
            let now = SystemTime::now();
            node.meta.mtime = now;
            node.meta.ctime = now;
        }
    }

    /// Drops every inode nothing can reach any more: not the root, no open handle, no
    /// pending rename, and no live or durable entry of a kept directory.
    pub(crate) fn collect_garbage(&mut self) {
        let mut kept: HashSet<Ino> = HashSet::new();
        let mut stack: Vec<Ino> = vec![ROOT];
        stack.extend(self.handles.values().map(|handle| handle.ino));
        for rename in &self.renames {
            stack.extend([rename.ino, rename.src_dir, rename.dst_dir]);
        }
        while let Some(ino) = stack.pop() {
            if !kept.insert(ino) {
                continue;
            }
            if let Some(Node {
                body: Body::Dir(dir),
                ..
            }) = self.nodes.get(&ino)
            {
                stack.extend(dir.live.values().chain(dir.durable.values()));
            }
        }
        self.nodes.retain(|ino, _| kept.contains(ino));
        self.check_invariants();
    }

    /// Asserts the invariants of the module header (debug builds only; O(inodes)).
    pub fn check_invariants(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        assert!(matches!(self.node(ROOT).map(Node::kind), Ok(Kind::Dir)));
        let mut durable_names: HashMap<Ino, (Ino, &OsStr)> = HashMap::new();
        let mut live_parent: HashMap<Ino, Ino> = HashMap::new();
        for (&ino, node) in &self.nodes {
            let Body::Dir(dir) = &node.body else {
                continue;
            };
            for (name, &child) in &dir.live {
                let child_node = self
                    .nodes
                    .get(&child)
                    .unwrap_or_else(|| panic!("live entry {name:?} of {ino} names gone {child}"));
                if child_node.kind() == Kind::Dir {
                    let previous = live_parent.insert(child, ino);
                    assert!(previous.is_none(), "directory {child} has two live names");
                }
            }
            for (name, &child) in &dir.durable {
                if let Some((other_dir, other_name)) = durable_names.insert(child, (ino, name)) {
                    panic!(
                        "inode {child} is durable as {ino}/{name:?} and {other_dir}/{other_name:?}"
                    );
                }
            }
        }
        for (&ino, node) in &self.nodes {
            if let (Body::Dir(dir), Some(&parent)) = (&node.body, live_parent.get(&ino)) {
                assert_eq!(dir.parent, parent, "directory {ino} has a stale parent");
            }
        }
    }
}

/// A `setattr` without a size.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetaUpdate {
    /// New permission bits.
    pub mode: Option<u32>,
    /// New owner.
    pub uid: Option<u32>,
    /// New group.
    pub gid: Option<u32>,
    /// New access time.
    pub atime: Option<SystemTime>,
    /// New modification time.
    pub mtime: Option<SystemTime>,
}

/// Refuses names a directory entry cannot have.
pub(crate) fn check_name(name: &OsStr) -> FsResult<()> {
    let bytes = name.as_bytes();
    if bytes.len() > NAME_BYTES_MAX {
        return Err(FsError::NameTooLong);
    }
    if bytes.is_empty() || bytes == b"." || bytes == b".." || bytes.contains(&b'/') {
        return Err(FsError::Invalid);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
