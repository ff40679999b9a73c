//! Restoring a backup over the live state: staging, the commit point, the swap, and the
//! recovery that finishes or discards an interrupted restore when the catalog opens.
//!
//! What it is: the rule, in the order it runs (`docs/storage-format.md`, "Hot backups"):
//! 1. [`stage`]: the backup's state (`databases/`, `catalog.json`) is cloned into
//!    `<data>/restore-staging/` (sealed datafiles and hints hard-linked, everything else
//!    copied, `catalog.json` given an id counter no lower than the live one), every file and
//!    directory fsynced. Debris until step 2: a crash leaves the old state, and the staging
//!    directory is removed by the next open or restore.
//! 2. [`commit`] (with the catalog closed): `restore-staging` is renamed `restore-ready` and the
//!    data directory fsynced. **The commit point**: from here on the backup's state wins.
//! 3. [`finish`]: `restore-old/` is created; then per entry of the state, the live one is
//!    renamed into `restore-old/` and the ready one into its place (each rename fsynced on
//!    both directories); `restore-ready` (empty) is removed. A crash anywhere here leaves
//!    `restore-ready`, and the next open runs [`finish`] again: an entry already moved is
//!    skipped, so it completes whatever step was cut.
//! 4. [`keep_previous`]: `restore-old/` gets a `backup.json` and is renamed into
//!    `<data>/backups/<id>`: the state before the restore is kept as a backup (its id is what
//!    the restore answers as `previous`); nothing is deleted. A crash before the rename leaves
//!    `restore-old` alone, which the next open adopts the same way.
//!
//! What it is not: closing or opening the catalog (the caller's), or the backup's layout
//! (`layout.rs`).
//!
//! Invariants: at every instant the data directory holds the whole old state (before the
//! commit point) or, after recovery, the whole new one; an entry is never in two places that
//! both count; nothing but `restore-staging` (proven debris by its name) is deleted.

use std::path::{Path, PathBuf};

use quince_errors::Result;
use quince_storage::io::OsFileIo;

use super::layout::{
    self, backups_dir, clone_tree, copy_file, create_dir, remove_durably, rename_durably, sync_dir,
    BackupMeta, META_FILE, STATE_ENTRIES,
};
use crate::params::{write_atomic, CatalogParams};

/// A backup's state being cloned for a restore (debris until renamed).
const STAGING: &str = "restore-staging";
/// A staged state past the commit point.
const READY: &str = "restore-ready";
/// The state a restore replaced, until it is kept as a backup.
const OLD: &str = "restore-old";

/// The label of the backup that keeps the state a restore replaced.
const PREVIOUS_LABEL: &str = "before-restore";

fn path(data_dir: &Path, name: &str) -> PathBuf {
    data_dir.join(name)
}

/// Step 1: clones the backup `id` into `restore-staging` (a stale one is removed first), with
/// an id counter of at least `id_last`.
pub(crate) fn stage(data_dir: &Path, id: &str, id_last: u64) -> Result<()> {
    let staging = path(data_dir, STAGING);
    remove_durably(&staging)?;
    let source = backups_dir(data_dir).join(id);
    create_dir(&staging)?;
    let staged = (|| {
        for entry in STATE_ENTRIES {
            let from = source.join(entry);
            let to = staging.join(entry);
            if from.is_dir() {
                clone_tree(&from, &to)?;
            } else if from.exists() {
                copy_file(&from, &to)?;
            }
        }
        let catalog = staging.join("catalog.json");
        let io = OsFileIo::new();
        let backup_last =
            crate::params::read_json::<CatalogParams>(&io, &catalog)?.map_or(0, |p| p.id_last);
        write_atomic(
            &io,
            &catalog,
            &CatalogParams {
                id_last: backup_last.max(id_last),
            },
        )?;
        sync_dir(&staging)
    })();
    if staged.is_err() {
        let _ = remove_durably(&staging);
    }
    staged
}

/// Step 2, the commit point: `restore-staging` becomes `restore-ready`.
pub(crate) fn commit(data_dir: &Path) -> Result<()> {
    rename_durably(&path(data_dir, STAGING), &path(data_dir, READY))
}

/// Step 3: swaps every entry of the ready state into place (the live one into `restore-old`),
/// then removes the empty `restore-ready`. Idempotent: it finishes an interrupted run.
pub(crate) fn finish(data_dir: &Path) -> Result<()> {
    let ready = path(data_dir, READY);
    let old = path(data_dir, OLD);
    if !old.exists() {
        create_dir(&old)?;
    }
    for entry in STATE_ENTRIES {
        let staged = ready.join(entry);
        if !staged.exists() {
            // Moved into place before a crash.
            continue;
        }
        let live = data_dir.join(entry);
        if live.exists() {
            rename_durably(&live, &old.join(entry))?;
        }
        rename_durably(&staged, &live)?;
    }
    std::fs::remove_dir(&ready).map_err(|e| crate::params::io_error(&ready, e))?;
    sync_dir(data_dir)
}

/// Step 4: keeps `restore-old` as a backup; its id. `None` when there is no `restore-old`.
pub(crate) fn keep_previous(data_dir: &Path) -> Result<Option<String>> {
    let old = path(data_dir, OLD);
    if !old.exists() {
        return Ok(None);
    }
    let meta_path = old.join(META_FILE);
    // A description a crash cut short never counted: it is written again.
    let written: Option<BackupMeta> = std::fs::read(&meta_path)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok());
    let meta = match written {
        Some(meta) => meta,
        None => {
            let (files, bytes) = layout::tree_size(&old)?;
            let (datetime, for_id) = layout::datetime_now();
            let suffix = uuid::Uuid::new_v4().simple().to_string();
            let meta = BackupMeta {
                id: format!("{for_id}_{PREVIOUS_LABEL}-{}", &suffix[..8]),
                datetime,
                potentially_inconsistent: false,
                size_in_bytes: bytes,
                nr_files: files + 1,
            };
            if meta_path.exists() {
                // A description whose write a crash cut short: it never counted.
                remove_durably(&meta_path)?;
            }
            layout::write_json_new(&meta_path, &meta)?;
            sync_dir(&old)?;
            meta
        }
    };
    let backups = backups_dir(data_dir);
    if !backups.exists() {
        create_dir(&backups)?;
    }
    rename_durably(&old, &backups.join(&meta.id))?;
    tracing::info!(event = "backup.previous_kept", id = %meta.id);
    Ok(Some(meta.id))
}

/// On open: finishes a restore past its commit point (and keeps the state it replaced),
/// removes a staging directory (a restore that never committed).
pub(crate) fn recover(data_dir: &Path) -> Result<()> {
    let staging = path(data_dir, STAGING);
    if staging.exists() {
        tracing::info!(event = "backup.restore_staging_removed", dir = %staging.display());
        remove_durably(&staging)?;
    }
    if path(data_dir, READY).exists() {
        tracing::warn!(
            event = "backup.restore_finished",
            "finishing an interrupted restore"
        );
        finish(data_dir)?;
    }
    keep_previous(data_dir)?;
    Ok(())
}
