//! Where hot backups live in the data directory, how they are named and described, and the
//! file operations every backup step shares.
//!
//! What it is: the names (`<data>/backups/<id>/`, its temporary name `tmp-<id>`, its
//! `backup.json`), ids (`<datetime>_<label>`, the datetime with dots for colons as ArangoDB
//! names them) and labels, [`BackupMeta`], listing, and the tree operations: walking a tree
//! for its size, cloning a tree (hard links for sealed datafiles and hints, copies of
//! everything else), and durable renames and removals.
//!
//! What it is not: the barrier or the restore protocol (`mod.rs`, `swap.rs`).
//!
//! Invariants: an entry of `<data>/backups` is a complete backup exactly when its name is an
//! id (it does not start with `tmp-` or a dot) and it holds `backup.json`; a backup is renamed
//! to its id only after every file in it, `backup.json` last, and every directory in it were
//! fsynced. Only files of the engine's own shapes are ever linked (`datafile-<fid>.db` and
//! `datafile-<fid>.hint`, which are never written in place): everything else is copied, so a
//! live store never appends to a file a backup holds.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use quince_errors::{ArangoError, Result, BAD_PARAMETER, NO_SUCH_HOT_BACKUP};
use quince_ops::BackupInfo;
use quince_storage::io::{DIR_MODE, FILE_MODE};
use serde::{Deserialize, Serialize};

use crate::params::io_error;

/// `<data>/backups`.
pub(crate) const BACKUPS_DIR: &str = "backups";

/// The prefix of a backup being written (`<data>/backups/tmp-<id>`): debris if found on open
/// or by the next create.
pub(crate) const TEMP_PREFIX: &str = "tmp-";

/// The description every complete backup holds.
pub(crate) const META_FILE: &str = "backup.json";

/// The entries of the data directory a backup holds and a restore replaces.
pub(crate) const STATE_ENTRIES: [&str; 2] = ["databases", "catalog.json"];

/// The longest label accepted.
const LABEL_BYTES_MAX: usize = 128;

/// The most backups listed.
const BACKUPS_LISTED_MAX: usize = 100_000;

/// `backup.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BackupMeta {
    pub id: String,
    pub datetime: String,
    pub potentially_inconsistent: bool,
    pub size_in_bytes: u64,
    pub nr_files: u64,
}

impl BackupMeta {
    pub(crate) fn info(&self) -> BackupInfo {
        BackupInfo {
            id: self.id.clone(),
            datetime: self.datetime.clone(),
            potentially_inconsistent: self.potentially_inconsistent,
            size_in_bytes: self.size_in_bytes,
            nr_files: self.nr_files,
            nr_db_servers: 1,
        }
    }
}

/// `<data>/backups`.
pub(crate) fn backups_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(BACKUPS_DIR)
}

/// Checks a label: 1 to 128 bytes of letters, digits, `_`, `-` and `.` (it becomes part of a
/// directory name). 400/10 otherwise.
pub(crate) fn check_label(label: &str) -> Result<()> {
    let fine = !label.is_empty()
        && label.len() <= LABEL_BYTES_MAX
        && !label.starts_with('.')
        && label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if fine {
        Ok(())
    } else {
        Err(ArangoError::with_message(
            BAD_PARAMETER,
            "a backup label is 1 to 128 letters, digits, '_', '-' or '.' (not first)",
        ))
    }
}

/// True when `id` could name a backup (so it is safe as a directory name): a datetime, `_`,
/// a label. Anything else cannot exist, and is answered as an unknown id.
pub(crate) fn is_id(id: &str) -> bool {
    match id.split_once('_') {
        Some((datetime, label)) => {
            datetime.len() == 20
                && datetime
                    .bytes()
                    .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'.' | b'T' | b'Z'))
                && check_label(label).is_ok()
        }
        None => false,
    }
}

/// The datetime and the id's datetime part of `now`: `2026-11-25T20:55:12Z` and
/// `2026-11-25T20.55.12Z`.
pub(crate) fn datetime_now() -> (String, String) {
    let datetime = quince_aql::service::registry::iso8601(std::time::SystemTime::now());
    let for_id = datetime.replace(':', ".");
    (datetime, for_id)
}

/// 404/7007 naming `id`.
pub(crate) fn no_such_backup(id: &str) -> ArangoError {
    ArangoError::with_message(
        NO_SUCH_HOT_BACKUP,
        format!("no such hot backup set can be found: {id}"),
    )
}

/// The description of the complete backup `<data>/backups/<id>`; 404/7007 if there is none.
pub(crate) fn read_meta(data_dir: &Path, id: &str) -> Result<BackupMeta> {
    if !is_id(id) {
        return Err(no_such_backup(id));
    }
    let path = backups_dir(data_dir).join(id).join(META_FILE);
    let bytes = match fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(no_such_backup(id)),
        Err(e) => return Err(io_error(&path, e)),
    };
    serde_json::from_slice(&bytes).map_err(|e| {
        ArangoError::with_message(
            quince_errors::HOT_BACKUP_INTERNAL,
            format!("{} is unreadable: {e}", path.display()),
        )
    })
}

/// Every complete backup, sorted by id.
pub(crate) fn list(data_dir: &Path) -> Result<Vec<BackupMeta>> {
    let dir = backups_dir(data_dir);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_error(&dir, e)),
    };
    let mut metas = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_error(&dir, e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !is_id(&name) {
            continue;
        }
        match read_meta(data_dir, &name) {
            Ok(meta) => metas.push(meta),
            // Not a backup the engine finished (no description): not listed.
            Err(e) if e.is(NO_SUCH_HOT_BACKUP) => {}
            Err(e) => return Err(e),
        }
        if metas.len() >= BACKUPS_LISTED_MAX {
            break;
        }
    }
    metas.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(metas)
}

/// Writes `value` as JSON into the new file `path`, fsynced.
pub(crate) fn write_json_new<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let bytes = serde_json::to_vec_pretty(value).expect("backup metadata serialises");
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
        .map_err(|e| io_error(path, e))?;
    file.write_all(&bytes).map_err(|e| io_error(path, e))?;
    file.sync_all().map_err(|e| io_error(path, e))
}

/// Creates the directory `dir` (its parent must exist) and fsyncs the parent.
pub(crate) fn create_dir(dir: &Path) -> Result<()> {
    fs::DirBuilder::new()
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|e| io_error(dir, e))?;
    sync_parent(dir)
}

/// Fsyncs a directory.
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_error(dir, e))
}

/// Fsyncs the directory holding `path`.
pub(crate) fn sync_parent(path: &Path) -> Result<()> {
    sync_dir(path.parent().expect("backup paths have a parent"))
}

/// Renames `from` to `to` and fsyncs both parents.
pub(crate) fn rename_durably(from: &Path, to: &Path) -> Result<()> {
    fs::rename(from, to).map_err(|e| io_error(from, e))?;
    sync_parent(to)?;
    if from.parent() != to.parent() {
        sync_parent(from)?;
    }
    Ok(())
}

/// Removes `path` (a directory tree or a file) if it exists, and fsyncs its parent.
pub(crate) fn remove_durably(path: &Path) -> Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => Err(e),
    };
    removed.map_err(|e| io_error(path, e))?;
    sync_parent(path)
}

/// The files under `root` and their bytes.
pub(crate) fn tree_size(root: &Path) -> Result<(u64, u64)> {
    let mut files = 0;
    let mut bytes = 0;
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| io_error(&dir, e))? {
            let entry = entry.map_err(|e| io_error(&dir, e))?;
            let meta = entry.metadata().map_err(|e| io_error(&entry.path(), e))?;
            if meta.is_dir() {
                pending.push(entry.path());
            } else {
                files += 1;
                bytes += meta.len();
            }
        }
    }
    Ok((files, bytes))
}

/// True for the files a clone may share by a hard link: sealed datafiles and their hints,
/// which are never written in place.
fn linkable(name: &str) -> bool {
    quince_storage::backup::is_immutable_file(name)
}

/// Clones the tree `from` into the new `to`: sealed datafiles and hints hard-linked, every
/// other file copied; each file and directory fsynced (the parent of `to` too).
pub(crate) fn clone_tree(from: &Path, to: &Path) -> Result<()> {
    create_dir(to)?;
    for entry in fs::read_dir(from).map_err(|e| io_error(from, e))? {
        let entry = entry.map_err(|e| io_error(from, e))?;
        let source = entry.path();
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(|e| io_error(&source, e))?;
        if kind.is_dir() {
            clone_tree(&source, &target)?;
        } else if entry.file_name().to_str().is_some_and(linkable) {
            fs::hard_link(&source, &target).map_err(|e| io_error(&source, e))?;
        } else {
            copy_file(&source, &target)?;
        }
    }
    sync_dir(to)
}

/// Copies the file `from` into the new file `to`, fsynced. The source is opened once and read
/// to its end, so a file replaced by a rename meanwhile (a parameter file rewritten by an index
/// creation) is copied whole, as the old or the new version.
pub(crate) fn copy_file(from: &Path, to: &Path) -> Result<()> {
    let mut source = File::open(from).map_err(|e| io_error(from, e))?;
    let mut target = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(to)
        .map_err(|e| io_error(to, e))?;
    std::io::copy(&mut source, &mut target).map_err(|e| io_error(to, e))?;
    target.sync_all().map_err(|e| io_error(to, e))
}
