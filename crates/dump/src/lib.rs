//! `quince dump` and `quince restore`: logical backups over HTTP, as arangodump and
//! arangorestore make and read them.
//!
//! What it is: the two tools and the pieces they share: the command lines ([`options`], with
//! ArangoDB's dotted option names), the one place a connection to the server is opened
//! ([`server`]), arangodump's directory format ([`format`]: `dump.json`, `ENCRYPTION`, one
//! `NAME_MD5.structure.json` and `NAME_MD5.data.json[.gz]` per collection), the data files
//! themselves ([`files`]: plain or gzip JSON Lines), the dump ([`dump`]) and the restore
//! ([`restore`]), and the progress display and summary they print ([`progress`]).
//!
//! What it is not: part of the server. Both tools speak only HTTP (the cursor, collection,
//! index, database, transaction and import APIs), so they dump and restore ArangoDB 3.12 as
//! well as Quince; they never link the storage or database crates. Not a hot backup either:
//! `/_admin/backup` is the server's own, consistent across collections.
//!
//! Invariants: a dump of a collection is a consistent state of that collection (see
//! [`dump`]); memory is bounded by `--batch-size` per thread, not by a collection's size; every
//! failure is reported with the collection it concerns, and makes the exit status 1.

pub mod dump;
pub mod files;
pub mod format;
pub mod options;
pub mod progress;
pub mod restore;
pub mod server;

use std::ffi::OsString;
use std::process::ExitCode;

/// The entry point of `quince dump`: `args` are the arguments after `dump`.
pub fn dump_main(args: &[OsString]) -> ExitCode {
    use clap::Parser;
    let command = std::iter::once(OsString::from("quince dump")).chain(args.iter().cloned());
    dump::run(options::DumpCommand::parse_from(command).args)
}

/// The entry point of `quince restore`: `args` are the arguments after `restore`.
pub fn restore_main(args: &[OsString]) -> ExitCode {
    use clap::Parser;
    let command = std::iter::once(OsString::from("quince restore")).chain(args.iter().cloned());
    restore::run(options::RestoreCommand::parse_from(command).args)
}
