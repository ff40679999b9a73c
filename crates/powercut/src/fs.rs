//! [`PowercutFs`]: the FUSE face of the model: every kernel request becomes one [`Tree`] call.
//!
//! What it is: the `fuser::Filesystem` implementation. It translates inode numbers, handles,
//! flags and errors, and nothing else: what is live and what is durable is decided in the
//! model. Every reply gives the kernel no cache time (entry and attribute TTL 0) and every
//! open is `FOPEN_DIRECT_IO`, so no read is ever answered from the page cache and a power cut
//! (which replaces the model's state under the kernel's feet) is seen by the next request.
//! Writes reach the model one FUSE write at a time; a large `pwrite` that the kernel splits is
//! several writes, each of which a cut may keep or drop in order, as a disk would.
//!
//! What it is not: a lock manager. `flock` and POSIX locks are not implemented here, so the
//! kernel keeps them locally (fuser does not negotiate `FUSE_FLOCK_LOCKS` or
//! `FUSE_POSIX_LOCKS`); they work between processes on this machine, which is all the server's
//! `LOCK` file needs.
//!
//! Invariants: the model's lock is held for the whole of each request, so a cut (taken under
//! the same lock) falls between two requests, never inside one.

use std::ffi::OsStr;
use std::io;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fuser::{
    Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, Generation, INodeNo,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};
use parking_lot::Mutex;

use crate::tree::{Attr, FsError, Ino, Kind, Meta, MetaUpdate, Tree, NAME_BYTES_MAX};

/// No caching in the kernel: every lookup and getattr asks the model.
const TTL: Duration = Duration::ZERO;

/// The block size reported to `stat` and `statfs`.
const BLOCK_BYTES: u32 = 4096;

/// The capacity `statfs` reports (the model holds everything in memory; this is only what
/// `df` shows).
const CAPACITY_BLOCKS: u64 = 1 << 28;

/// The inode capacity `statfs` reports.
const CAPACITY_INODES: u64 = 1 << 24;

/// The file system, sharing its model with the control channel.
pub struct PowercutFs {
    tree: Arc<Mutex<Tree>>,
}

impl PowercutFs {
    /// A file system over `tree`.
    pub fn new(tree: Arc<Mutex<Tree>>) -> PowercutFs {
        PowercutFs { tree }
    }
}

fn errno(error: FsError) -> Errno {
    match error {
        FsError::NotFound => Errno::ENOENT,
        FsError::Exists => Errno::EEXIST,
        FsError::NotDir => Errno::ENOTDIR,
        FsError::IsDir => Errno::EISDIR,
        FsError::NotEmpty => Errno::ENOTEMPTY,
        FsError::Invalid => Errno::EINVAL,
        FsError::NameTooLong => Errno::ENAMETOOLONG,
        FsError::TooBig => Errno::EFBIG,
        FsError::BadHandle => Errno::EBADF,
    }
}

fn file_attr(attr: &Attr) -> FileAttr {
    FileAttr {
        ino: INodeNo(attr.ino),
        size: attr.size,
        blocks: attr.size.div_ceil(512),
        atime: attr.meta.atime,
        mtime: attr.meta.mtime,
        ctime: attr.meta.ctime,
        crtime: attr.meta.ctime,
        kind: file_type(attr.kind),
        perm: u16::try_from(attr.meta.mode & 0o7777).expect("masked to 12 bits"),
        nlink: attr.nlink,
        uid: attr.meta.uid,
        gid: attr.meta.gid,
        rdev: 0,
        blksize: BLOCK_BYTES,
        flags: 0,
    }
}

fn file_type(kind: Kind) -> FileType {
    match kind {
        Kind::File => FileType::RegularFile,
        Kind::Dir => FileType::Directory,
    }
}

fn time(value: TimeOrNow) -> SystemTime {
    match value {
        TimeOrNow::SpecificTime(time) => time,
        TimeOrNow::Now => SystemTime::now(),
    }
}

/// The mode a new inode gets: the request's permission bits less the umask.
fn new_meta(req: &Request, mode: u32, umask: u32) -> Meta {
    Meta::new(mode & !umask & 0o7777, req.uid(), req.gid())
}

/// Replies with an entry for `ino`, or the error.
fn reply_entry(tree: &Tree, result: Result<Ino, FsError>, reply: ReplyEntry) {
    match result.and_then(|ino| tree.attr(ino)) {
        Ok(attr) => reply.entry(&TTL, &file_attr(&attr), Generation(0)),
        Err(error) => reply.error(errno(error)),
    }
}

fn reply_empty(result: Result<(), FsError>, reply: ReplyEmpty) {
    match result {
        Ok(()) => reply.ok(),
        Err(error) => reply.error(errno(error)),
    }
}

impl Filesystem for PowercutFs {
    fn init(&mut self, _req: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Big writes are fine, but keep the request size bounded (1 MiB) whatever the kernel
        // offers; a smaller value is also fine, so a refusal is not an error.
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let tree = self.tree.lock();
        let found = tree.lookup(parent.0, name);
        reply_entry(&tree, found, reply);
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.tree.lock().attr(ino.0) {
            Ok(attr) => reply.attr(&TTL, &file_attr(&attr)),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut tree = self.tree.lock();
        let update = MetaUpdate {
            mode,
            uid,
            gid,
            atime: atime.map(time),
            mtime: mtime.map(time),
        };
        let result = size
            .map_or(Ok(()), |len| tree.set_len(ino.0, len))
            .and_then(|()| tree.set_meta(ino.0, update))
            .and_then(|()| tree.attr(ino.0));
        match result {
            Ok(attr) => reply.attr(&TTL, &file_attr(&attr)),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn mknod(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _rdev: u32,
        reply: ReplyEntry,
    ) {
        // Regular files only: the model has no devices, fifos or sockets.
        if mode & libc::S_IFMT != libc::S_IFREG {
            reply.error(Errno::EPERM);
            return;
        }
        let mut tree = self.tree.lock();
        let created = tree.create_file(parent.0, name, new_meta(req, mode, umask));
        reply_entry(&tree, created, reply);
    }

    fn mkdir(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let mut tree = self.tree.lock();
        let created = tree.mkdir(parent.0, name, new_meta(req, mode, umask));
        reply_entry(&tree, created, reply);
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(self.tree.lock().unlink(parent.0, name), reply);
    }

    fn rmdir(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(self.tree.lock().rmdir(parent.0, name), reply);
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        if flags.intersects(RenameFlags::RENAME_EXCHANGE | RenameFlags::RENAME_WHITEOUT) {
            reply.error(Errno::EINVAL);
            return;
        }
        let no_replace = flags.contains(RenameFlags::RENAME_NOREPLACE);
        let result = self
            .tree
            .lock()
            .rename(parent.0, name, newparent.0, newname, no_replace);
        reply_empty(result, reply);
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.tree.lock().open(ino.0) {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::FOPEN_DIRECT_IO),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        match self.tree.lock().read(ino.0, offset, size) {
            Ok(bytes) => reply.data(&bytes),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let Ok(written) = u32::try_from(data.len()) else {
            reply.error(Errno::EINVAL);
            return;
        };
        match self.tree.lock().write(ino.0, offset, data) {
            Ok(()) => reply.written(written),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close() is not a sync: nothing becomes durable here.
        reply.ok();
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.tree.lock().release(fh.0);
        reply.ok();
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(self.tree.lock().fsync(ino.0, datasync), reply);
    }

    fn opendir(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let mut tree = self.tree.lock();
        let opened = tree.parent_of(ino.0).and_then(|_| tree.open(ino.0));
        match opened {
            Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn readdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let offset = usize::try_from(offset).unwrap_or(usize::MAX);
        let entries = match self.tree.lock().read_dir(fh.0, offset) {
            Ok(entries) => entries,
            Err(error) => {
                reply.error(errno(error));
                return;
            }
        };
        for (index, entry) in entries.iter().enumerate() {
            let next = (offset + index + 1) as u64;
            if reply.add(INodeNo(entry.ino), next, file_type(entry.kind), &entry.name) {
                break;
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.tree.lock().release(fh.0);
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(self.tree.lock().fsync_dir(ino.0), reply);
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let (inodes, bytes) = self.tree.lock().usage();
        let used_blocks = bytes.div_ceil(u64::from(BLOCK_BYTES));
        let free_blocks = CAPACITY_BLOCKS.saturating_sub(used_blocks);
        reply.statfs(
            CAPACITY_BLOCKS,
            free_blocks,
            free_blocks,
            CAPACITY_INODES,
            CAPACITY_INODES.saturating_sub(inodes),
            BLOCK_BYTES,
            NAME_BYTES_MAX as u32,
            BLOCK_BYTES,
        );
    }

    fn access(&self, _req: &Request, ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        // Permissions are not modelled (the harness runs as root): existence is enough.
        reply_empty(self.tree.lock().attr(ino.0).map(|_| ()), reply);
    }

    fn create(
        &self,
        req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let mut tree = self.tree.lock();
        let ino = match tree.lookup(parent.0, name) {
            // A create racing with another: O_EXCL refuses, otherwise open what is there.
            Ok(_) if flags & libc::O_EXCL != 0 => Err(FsError::Exists),
            Ok(ino) => {
                if flags & libc::O_TRUNC != 0 {
                    tree.set_len(ino, 0).map(|()| ino)
                } else {
                    Ok(ino)
                }
            }
            Err(FsError::NotFound) => tree.create_file(parent.0, name, new_meta(req, mode, umask)),
            Err(error) => Err(error),
        };
        let opened = ino.and_then(|ino| Ok((tree.attr(ino)?, tree.open(ino)?)));
        match opened {
            Ok((attr, fh)) => reply.created(
                &TTL,
                &file_attr(&attr),
                Generation(0),
                FileHandle(fh),
                FopenFlags::FOPEN_DIRECT_IO,
            ),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn fallocate(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _offset: u64,
        _length: u64,
        _mode: i32,
        reply: ReplyEmpty,
    ) {
        reply.error(Errno::EOPNOTSUPP);
    }
}
