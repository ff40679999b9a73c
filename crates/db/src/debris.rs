//! Which directories of a data directory are live, and which are debris that the catalog may
//! delete: the one place that decides, on open, that something on disk may go.
//!
//! What it is: [`classify`], for one entry of `<data>/databases` (databases) or of a database
//! directory (collections), and [`dropped_path`], the name a drop renames a directory to.
//!
//! The rules (`docs/safety.md` states them for operators). Only the engine's own markers prove
//! that a directory is debris:
//! - `<prefix><id>.dropped`: a drop renamed the directory as its commit point, and was
//!   interrupted before the directory was deleted; deleting it finishes the drop;
//! - `<prefix><id>` without `parameter.json` that holds nothing, or nothing but the temporary
//!   file of an interrupted `parameter.json` write: a create interrupted before its first
//!   durable step (the parameters are written before any data, so such a directory holds no
//!   data).
//!
//! Anything else is live, or refused: a directory that holds files but no `parameter.json`, or
//! a damaged one, stops the catalog from opening with 1101 and is left as it is, for an operator
//! to restore or move away.
//!
//! What it is not: the deletion itself (the catalog does it) or the parameters' format
//! (`crate::params`).
//!
//! Invariants: no directory that may hold documents is ever classified as debris.

use std::path::{Path, PathBuf};

use quince_errors::{ArangoError, Result, ARANGO_ILLEGAL_PARAMETER_FILE};
use quince_storage::io::FileIo;
use serde::de::DeserializeOwned;

use crate::params::{io_error, read_json, temp_path, PARAMETER_FILE};

/// The suffix a drop gives a directory before deleting it.
const DROPPED_SUFFIX: &str = ".dropped";

/// What the parameters of a database or collection directory have in common.
pub(crate) trait DirParams: DeserializeOwned {
    /// The id (also in the directory's name).
    fn id(&self) -> u64;
}

/// What an entry of a catalog directory is.
pub(crate) enum Classified<P> {
    /// A live database or collection with its parameters.
    Live {
        /// Its directory.
        dir: PathBuf,
        /// Its parameters.
        params: P,
    },
    /// Debris the catalog deletes, and why.
    Debris {
        /// The directory.
        dir: PathBuf,
        /// What proves it is debris (for the log).
        why: &'static str,
    },
}

/// The path a drop renames `dir` to.
pub(crate) fn dropped_path(dir: &Path) -> PathBuf {
    let mut name = dir
        .file_name()
        .expect("catalog directories have a name")
        .to_os_string();
    name.push(DROPPED_SUFFIX);
    dir.with_file_name(name)
}

/// Classifies the entry `name` of `parent`, whose live directories are `<prefix><id>`; `None`
/// for entries that are not the catalog's (they are left alone).
pub(crate) fn classify<P: DirParams>(
    io: &dyn FileIo,
    parent: &Path,
    name: &Path,
    prefix: &str,
) -> Result<Option<Classified<P>>> {
    let Some(text) = name.to_str() else {
        return Ok(None);
    };
    let Some(rest) = text.strip_prefix(prefix) else {
        return Ok(None);
    };
    let dir = parent.join(name);
    if let Some(id) = rest.strip_suffix(DROPPED_SUFFIX) {
        if id.parse::<u64>().is_ok() {
            return Ok(Some(Classified::Debris {
                dir,
                why: "an interrupted drop (renamed as dropped)",
            }));
        }
        return Ok(None);
    }
    let Ok(id) = rest.parse::<u64>() else {
        return Ok(None);
    };
    let params_path = dir.join(PARAMETER_FILE);
    match read_json::<P>(io, &params_path)? {
        Some(params) if params.id() != id => Err(ArangoError::with_message(
            ARANGO_ILLEGAL_PARAMETER_FILE,
            format!(
                "{} names id {}, but its directory is {}: refusing to open",
                params_path.display(),
                params.id(),
                dir.display()
            ),
        )),
        Some(params) => Ok(Some(Classified::Live { dir, params })),
        None => {
            let temp = temp_path(&params_path);
            let temp_name = temp.file_name().expect("a file name");
            let entries = io.list_dir(&dir).map_err(|e| io_error(&dir, e))?;
            if entries.iter().all(|entry| entry.as_os_str() == temp_name) {
                return Ok(Some(Classified::Debris {
                    dir,
                    why: "an interrupted create (no parameters, no data)",
                }));
            }
            Err(ArangoError::with_message(
                ARANGO_ILLEGAL_PARAMETER_FILE,
                format!(
                    "{} holds {} files but no {PARAMETER_FILE}: it is not debris the server \
                     made, so it is left as it is; restore its {PARAMETER_FILE} or move the \
                     directory out of the data directory, then start again",
                    dir.display(),
                    entries.len()
                ),
            ))
        }
    }
}
