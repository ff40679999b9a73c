//! Hot backups of the local engine: create, list, delete and restore, as
//! `/_admin/backup/*` asks for them.
//!
//! What it is: the [`Catalog`] methods. A backup is a directory `<data>/backups/<id>/` laid out
//! like the data directory (`catalog.json`, `databases/database-<id>/parameter.json`,
//! `databases/database-<id>/collection-<id>/{parameter.json, manifest.db, datafiles, hints,
//! journals}`) plus `backup.json`; so a backup is opened exactly as a data directory is.
//!
//! Taking one (`docs/safety.md`, "Hot backups", states the rule for operators):
//! 1. one backup operation at a time (`Catalog::backups`); leftover `tmp-*` directories (a
//!    create a crash cut short) are removed;
//! 2. catalog changes stop: the catalog's DDL lock, then every database's (create, drop and
//!    rename wait, for the seconds the backup takes);
//! 3. every collection's upkeep is paused (ascending collection id): no seal, hint, spare
//!    journal, compaction or close renames or deletes a file until the backup is written;
//! 4. **the barrier**: every collection's writer lock, in ascending collection id (the order
//!    transactions take them in), then each store's image (files, each journal's length), then
//!    every lock is released. Writes wait for at most the time it takes to record the images
//!    (no I/O but a few `stat`s). Every write acknowledged before the barrier is in the images,
//!    no write after it is, and a transaction is in all of them or none (its commit holds its
//!    collections' writer locks);
//! 5. outside the barrier, into `<data>/backups/tmp-<id>/`: sealed datafiles and hints
//!    hard-linked, each journal's imaged prefix copied, a manifest naming exactly the imaged
//!    files, the parameter files and `catalog.json` copied (read whole: they are replaced
//!    atomically), every file and directory fsynced;
//! 6. upkeep and DDL resume; `backup.json` is written and fsynced, then `tmp-<id>` is renamed
//!    to `<id>` (fsynced): only now is the backup listed.
//!
//! With `allowInconsistent`, when the barrier cannot be had before the timeout, each
//! collection's image is taken alone (each whole, not all at one instant) and the backup says
//! `potentiallyInconsistent`.
//!
//! What it is not: HTTP (the api's `admin/backup` family), or the restore's file protocol
//! (`swap.rs`).
//!
//! Invariants: a backup directory under its id is complete; nothing the engine did not write
//! as a temporary (`tmp-*`, `restore-staging`) is ever deleted by it, but for a backup that
//! an operator deletes.

pub(crate) mod layout;
pub(crate) mod swap;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quince_errors::{
    ArangoError, Result, BAD_PARAMETER, HOT_BACKUP_CONFLICT, HOT_RESTORE_INTERNAL, LOCK_TIMEOUT,
};
use quince_ops::{BackupInfo, BackupRequest, BACKUP_TIMEOUT_MAX};
use quince_storage::backup::{image_together, StoreImage, UpkeepPause};

use crate::catalog::Catalog;
use crate::collection::Collection;
use crate::database::Database;
use crate::params::{catalog_file, PARAMETER_FILE};
use layout::{
    backups_dir, check_label, copy_file, create_dir, datetime_now, remove_durably, rename_durably,
    sync_dir, tree_size, write_json_new, BackupMeta, META_FILE, TEMP_PREFIX,
};

/// 408 (errorNum 18): the barrier or a pause could not be had in time.
fn timed_out(what: &str) -> ArangoError {
    ArangoError::with_message(
        LOCK_TIMEOUT,
        format!("hot backup: {what} could not be acquired within the timeout"),
    )
    .with_status(408)
}

/// Removes the backups a crash left half-written (`<data>/backups/tmp-*`): their name proves
/// they were never complete.
pub(crate) fn remove_unfinished(data_dir: &Path) -> Result<()> {
    let dir = backups_dir(data_dir);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(());
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_str().is_some_and(|n| n.starts_with(TEMP_PREFIX)) {
            tracing::info!(event = "backup.unfinished_removed", dir = %entry.path().display());
            remove_durably(&entry.path())?;
        }
    }
    Ok(())
}

impl Catalog {
    /// Takes a hot backup of every database (see the module's documentation).
    pub fn create_backup(&self, request: &BackupRequest) -> Result<BackupInfo> {
        if request.timeout > BACKUP_TIMEOUT_MAX {
            return Err(ArangoError::with_message(
                BAD_PARAMETER,
                format!(
                    "timeout is at most {} seconds",
                    BACKUP_TIMEOUT_MAX.as_secs()
                ),
            ));
        }
        let label = match &request.label {
            Some(label) => {
                check_label(label)?;
                label.clone()
            }
            None => uuid::Uuid::new_v4().to_string(),
        };
        let _backups = self.backups_lock();
        self.shared().check_open()?;
        let data_dir = self.data_dir().to_path_buf();
        let (datetime, for_id) = datetime_now();
        let id = format!("{for_id}_{label}");
        let backups = backups_dir(&data_dir);
        if !backups.exists() {
            create_dir(&backups)?;
        }
        remove_unfinished(&data_dir)?;
        if backups.join(&id).exists() {
            return Err(ArangoError::with_message(
                HOT_BACKUP_CONFLICT,
                format!("a backup with id {id} exists already"),
            ));
        }
        let temp = backups.join(format!("{TEMP_PREFIX}{id}"));
        let deadline = Instant::now() + request.timeout;
        let written = self.write_backup(&temp, request.allow_inconsistent, deadline);
        let finished = written.and_then(|potentially_inconsistent| {
            let (files, bytes) = tree_size(&temp)?;
            let meta = BackupMeta {
                id: id.clone(),
                datetime,
                potentially_inconsistent,
                size_in_bytes: bytes,
                nr_files: files + 1,
            };
            write_json_new(&temp.join(META_FILE), &meta)?;
            sync_dir(&temp)?;
            rename_durably(&temp, &backups.join(&id))?;
            Ok(meta)
        });
        match finished {
            Ok(meta) => {
                tracing::info!(
                    event = "backup.created",
                    id = %meta.id,
                    files = meta.nr_files,
                    bytes = meta.size_in_bytes,
                    inconsistent = meta.potentially_inconsistent
                );
                Ok(meta.info())
            }
            Err(e) => {
                if let Err(cleanup) = remove_durably(&temp) {
                    tracing::warn!(event = "backup.cleanup_failed", error = %cleanup);
                }
                Err(e)
            }
        }
    }

    /// Steps 2 to 5: writes the backup into `temp`; true when it is potentially inconsistent.
    fn write_backup(
        &self,
        temp: &Path,
        allow_inconsistent: bool,
        deadline: Instant,
    ) -> Result<bool> {
        create_dir(temp)?;
        let _ddl = self.ddl_lock();
        let databases: Vec<Arc<Database>> = self.databases_now();
        let _database_ddl: Vec<_> = databases.iter().map(|d| d.ddl_lock()).collect();
        let mut collections: Vec<(u64, Arc<Collection>)> = databases
            .iter()
            .flat_map(|d| d.collections().into_iter().map(move |c| (d.id(), c)))
            .collect();
        collections.sort_by_key(|(_, c)| c.id());
        let pauses: Vec<UpkeepPause<'_>> = collections
            .iter()
            .map(|(_, c)| c.store.pause_upkeep(deadline))
            .collect::<Option<_>>()
            .ok_or_else(|| timed_out("the collections' maintenance"))?;
        let (images, inconsistent) = match image_together(&pauses, deadline)? {
            Some(images) => (images, false),
            None if allow_inconsistent => {
                // Each collection alone; the writer locks are short, so a generous wait.
                let alone = Instant::now() + Duration::from_secs(60);
                let images = pauses
                    .iter()
                    .map(|p| p.image(alone)?.ok_or_else(|| timed_out("a collection")))
                    .collect::<Result<Vec<StoreImage>>>()?;
                (images, true)
            }
            None => return Err(timed_out("the global write barrier")),
        };
        let root = temp.join("databases");
        create_dir(&root)?;
        for database in &databases {
            let dir = root.join(format!("database-{}", database.id()));
            create_dir(&dir)?;
            copy_file(
                &database.dir().join(PARAMETER_FILE),
                &dir.join(PARAMETER_FILE),
            )?;
        }
        for ((database_id, collection), image) in collections.iter().zip(&images) {
            let dir = root
                .join(format!("database-{database_id}"))
                .join(format!("collection-{}", collection.id()));
            image.write_to(&dir)?;
            copy_file(
                &collection.dir().join(PARAMETER_FILE),
                &dir.join(PARAMETER_FILE),
            )?;
            sync_dir(&dir)?;
        }
        drop(pauses);
        for database in &databases {
            sync_dir(&root.join(format!("database-{}", database.id())))?;
        }
        sync_dir(&root)?;
        let catalog = catalog_file(self.data_dir());
        if catalog.exists() {
            copy_file(&catalog, &temp.join("catalog.json"))?;
        }
        sync_dir(temp)?;
        Ok(inconsistent)
    }

    /// Every complete backup, sorted by id; only `id` when given (404/7007 if none).
    pub fn list_backups(&self, id: Option<&str>) -> Result<Vec<BackupInfo>> {
        match id {
            Some(id) => Ok(vec![layout::read_meta(self.data_dir(), id)?.info()]),
            None => Ok(layout::list(self.data_dir())?
                .iter()
                .map(BackupMeta::info)
                .collect()),
        }
    }

    /// Deletes a backup (404/7007 if none).
    pub fn delete_backup(&self, id: &str) -> Result<()> {
        let _backups = self.backups_lock();
        layout::read_meta(self.data_dir(), id)?;
        remove_durably(&backups_dir(self.data_dir()).join(id))?;
        tracing::info!(event = "backup.deleted", id);
        Ok(())
    }

    /// Replaces every database by the backup's state and restarts the engine in place
    /// (`swap.rs` has the file protocol): the backup is staged while the engine runs; then
    /// the engine closes (maintenance stopped, transactions aborted, every collection
    /// closed: requests holding its handles answer 503/30 from then on), the staged state
    /// is committed and swapped in, and the catalog reopens it. Answers the id of the backup
    /// that now holds the state before. A backup that does not open (damaged on disk after it
    /// was taken) is answered with 500/7002 after the state before was brought back the same
    /// way (the damaged state is kept as a backup too: nothing is deleted).
    pub fn restore_backup(&self, id: &str) -> Result<String> {
        let _backups = self.backups_lock();
        let _ddl = self.ddl_lock();
        // Every schema change in progress finishes first, in the state before (its databases'
        // and collections' locks, in the order their own operations take them); those that
        // wait for these locks find the state closed after the restore and answer 503/30.
        let databases: Vec<Arc<Database>> = self.databases_now();
        let _database_ddl: Vec<_> = databases.iter().map(|d| d.ddl_lock()).collect();
        let collections: Vec<Arc<Collection>> =
            databases.iter().flat_map(|d| d.collections()).collect();
        let _collection_ddl: Vec<_> = collections.iter().map(|c| c.index_ddl.lock()).collect();
        let data_dir = self.data_dir().to_path_buf();
        layout::read_meta(&data_dir, id)?;
        let shared = self.shared();
        shared.check_open()?;
        swap::stage(&data_dir, id, shared.id_last())?;
        if let Some(Err(e)) = self.close_state() {
            // A poisoned collection could not close cleanly: its state is being replaced.
            tracing::warn!(event = "backup.restore_close_failed", error = %e);
        }
        let previous = self.swap_staged(&data_dir)?;
        let Err(failure) = self.reopen_state() else {
            tracing::info!(event = "backup.restored", id, previous = %previous);
            return Ok(previous);
        };
        tracing::error!(
            event = "backup.restore_open_failed",
            id,
            error = %failure,
            "the backup does not open; bringing back the state before it"
        );
        swap::stage(&data_dir, &previous, shared.id_last())?;
        // Nothing of the new state serves (a reopen that failed installed nothing, unless only
        // maintenance failed to start).
        let _ = self.close_state();
        let damaged = self.swap_staged(&data_dir)?;
        self.reopen_state()?;
        Err(ArangoError::with_message(
            HOT_RESTORE_INTERNAL,
            format!(
                "backup {id} does not open ({failure}); the state before the restore is back, \
                 and the state that did not open is kept as backup {damaged}"
            ),
        ))
    }

    /// Commits the staged state (serving the old one again if the commit fails), swaps it in
    /// and keeps the replaced state as a backup; its id. The state is closed.
    fn swap_staged(&self, data_dir: &Path) -> Result<String> {
        if let Err(e) = swap::commit(data_dir) {
            // Before the commit point: the old state is whole; serve it again.
            tracing::error!(event = "backup.restore_commit_failed", error = %e);
            self.reopen_state()?;
            return Err(e);
        }
        let previous = swap::finish(data_dir)
            .and_then(|()| swap::keep_previous(data_dir))
            .inspect_err(|e| {
                tracing::error!(
                    event = "backup.restore_swap_failed",
                    error = %e,
                    "the restore is committed; a restart finishes it"
                );
            })?;
        Ok(previous.unwrap_or_default())
    }
}
