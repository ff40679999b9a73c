//! How directory entries become durable: renames and the fsync of a directory.
//!
//! What it is: [`Tree::rename`] and [`Tree::fsync_dir`], the two places where the durable
//! namespace is decided.
//!
//! The model, precisely:
//!
//! * Create, mkdir, unlink, rmdir and rename change *live* entries only. A directory's
//!   *durable* entries are what a reboot finds in it, if the reboot finds the directory.
//! * `fsync_dir(D)` (FUSE `fsyncdir`, or `fsync` on a directory handle) first commits pending
//!   cross-directory renames (below), then makes D's durable entries equal to its live ones.
//!   Nothing else changes D's durable entries.
//! * A new directory starts with no durable entries and is itself only a live entry of its
//!   parent. If the parent is not fsynced before the cut, the directory disappears in the cut
//!   with everything in it, even files whose bytes and entries inside it were fsynced: a reboot
//!   reaches inodes only from the root through durable entries.
//! * A rename within one directory is one change of that directory's entries: durable when the
//!   directory is fsynced, atomically (the old name and the new one never both survive, and the
//!   target replaced by it comes back if the rename does not survive).
//! * A rename from directory S into directory T (a file or a whole directory) is recorded as
//!   pending, in one global order. `fsync_dir(X)` commits every pending rename up to and
//!   including the last one that has S = X or T = X (a *prefix* of that order, as a journaling
//!   file system commits its transactions in order). Committing moves the inode's one durable
//!   name, wherever it is, to `T/new name`, replacing what was durable there. So a cross-
//!   directory rename is atomic on both sides and becomes durable with an fsync of *either*
//!   directory (ext4, XFS and btrfs behave so); an inode is never durable under two names, and
//!   a rename never loses one. A pending rename whose directories are not fsynced is lost in a
//!   cut: the inode comes back under its old durable name (or not at all if it had none).
//!
//! What it is not: a model of a file system that persists namespace changes without being
//! asked (a real one may keep some unsynced creates or unlinks; this model keeps none, the
//! strictest allowed outcome), or of hard links.
//!
//! Invariants: see `tree.rs`; after `fsync_dir(D)`, D's durable entries equal its live ones and
//! no pending rename touches D.

use std::ffi::OsStr;
use std::time::SystemTime;

use crate::tree::{check_name, FsError, FsResult, Ino, Kind, PendingRename, Tree, ROOT};

impl Tree {
    /// `rename(parent/name, new_parent/new_name)`; `no_replace` is `RENAME_NOREPLACE`.
    pub fn rename(
        &mut self,
        parent: Ino,
        name: &OsStr,
        new_parent: Ino,
        new_name: &OsStr,
        no_replace: bool,
    ) -> FsResult<()> {
        check_name(new_name)?;
        let ino = self.lookup(parent, name)?;
        let kind = self.node(ino)?.kind();
        let target = self.dir(new_parent)?.live.get(new_name).copied();
        if target == Some(ino) {
            // Two names of one inode: POSIX says rename does nothing.
            return Ok(());
        }
        if let Some(target) = target {
            if no_replace {
                return Err(FsError::Exists);
            }
            match (kind, self.node(target)?.kind()) {
                (Kind::Dir, Kind::File) => return Err(FsError::NotDir),
                (Kind::File, Kind::Dir) => return Err(FsError::IsDir),
                (Kind::Dir, Kind::Dir) if !self.dir(target)?.live.is_empty() => {
                    return Err(FsError::NotEmpty)
                }
                _ => {}
            }
        }
        if kind == Kind::Dir && self.is_within(new_parent, ino) {
            return Err(FsError::Invalid);
        }

        self.dir_mut(parent)?.live.remove(name);
        if let Some(target) = target {
            let replaced = self.node_mut(target)?;
            replaced.links = replaced.links.saturating_sub(1);
        }
        self.dir_mut(new_parent)?
            .live
            .insert(new_name.to_owned(), ino);
        if kind == Kind::Dir {
            self.dir_mut(ino)?.parent = new_parent;
        }
        self.node_mut(ino)?.meta.ctime = SystemTime::now();
        self.touch_dir(parent);
        self.touch_dir(new_parent);
        if parent == new_parent {
            self.stats.renames += 1;
        } else {
            self.stats.cross_dir_renames += 1;
            self.renames.push(PendingRename {
                ino,
                src_dir: parent,
                dst_dir: new_parent,
                dst_name: new_name.to_owned(),
            });
        }
        self.collect_garbage();
        Ok(())
    }

    /// fsync of a directory: commits the pending cross-directory renames up to the last one
    /// touching it, then makes its durable entries its live ones.
    pub fn fsync_dir(&mut self, dir: Ino) -> FsResult<()> {
        self.dir(dir)?;
        let last_touching = self
            .renames
            .iter()
            .rposition(|rename| rename.src_dir == dir || rename.dst_dir == dir);
        if let Some(last) = last_touching {
            let committed: Vec<PendingRename> = self.renames.drain(..=last).collect();
            for rename in &committed {
                self.commit_rename(rename);
            }
        }
        let entries = self.dir(dir)?.live.clone();
        self.dir_mut(dir)?.durable = entries;
        self.stats.fsyncdirs += 1;
        self.collect_garbage();
        Ok(())
    }

    /// Moves the renamed inode's durable name (wherever it is) to the rename's target.
    fn commit_rename(&mut self, rename: &PendingRename) {
        for node in self.nodes.values_mut() {
            if let Ok(dir) = node.dir_mut() {
                dir.durable.retain(|_, child| *child != rename.ino);
            }
        }
        let target = self
            .dir_mut(rename.dst_dir)
            .expect("pending renames keep their directories");
        target.durable.insert(rename.dst_name.clone(), rename.ino);
    }

    /// True when `ino` is `ancestor` or lies (live) below it.
    fn is_within(&self, mut ino: Ino, ancestor: Ino) -> bool {
        // Bounded: a removed directory's stale parent chain cannot loop us forever.
        for _ in 0..=self.nodes.len() {
            if ino == ancestor {
                return true;
            }
            match self.dir(ino) {
                Ok(dir) if ino != ROOT => ino = dir.parent,
                _ => return false,
            }
        }
        false
    }
}
