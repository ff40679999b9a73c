//! The control channel: a Unix socket outside the mount, one command per line.
//!
//! What it is: the way a test drives the file system. Commands and answers, each one line:
//!
//! | command      | answer                                                                  |
//! |--------------|-------------------------------------------------------------------------|
//! | `cut <seed>` | `ok <json>`: the [`crate::cut::CutReport`] of a power cut drawn from `seed` |
//! | `stats`      | `ok <json>`: counters, inodes and bytes in use, the last cut's summary  |
//! | `ping`       | `ok`                                                                    |
//! | `unmount`    | `ok`, then the process unmounts and exits                               |
//!
//! anything else answers `error <message>`. A connection may send several commands.
//!
//! What it is not: authenticated or concurrent. The socket is created with the process's
//! umask in a directory the test owns; connections are served one at a time.
//!
//! Invariants: a `cut` runs under the model's lock, so it is atomic with respect to every
//! file-system request; its answer is written only after the new state is in place.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::json;

use crate::tree::Tree;

/// How long a connection may stay silent before it is dropped, so one stuck client cannot
/// block the channel for good.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest command line read.
const LINE_BYTES_MAX: u64 = 1024;

/// One parsed command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// A power cut with this seed.
    Cut(u64),
    /// Counters.
    Stats,
    /// Liveness.
    Ping,
    /// Unmount and exit.
    Unmount,
}

/// Parses one command line.
pub fn parse(line: &str) -> Result<Command, String> {
    let mut words = line.split_whitespace();
    let command = match (words.next(), words.next()) {
        (Some("cut"), Some(seed)) => Command::Cut(
            seed.parse()
                .map_err(|_| format!("bad seed {seed:?}: want an unsigned 64-bit integer"))?,
        ),
        (Some("stats"), None) => Command::Stats,
        (Some("ping"), None) => Command::Ping,
        (Some("unmount"), None) => Command::Unmount,
        _ => return Err(format!("unknown command {line:?}")),
    };
    if words.next().is_some() {
        return Err(format!("trailing words in {line:?}"));
    }
    Ok(command)
}

/// Runs a command other than `unmount` and returns its answer line (without newline).
pub fn answer(tree: &Mutex<Tree>, command: Command) -> String {
    match command {
        Command::Cut(seed) => {
            let report = tree.lock().cut(seed);
            eprintln!(
                "quince-powercut: cut seed {seed}: {} files, {} lost, {} restored, {}/{} unsynced \
                 ops kept, {} torn, {} bytes dropped",
                report.files_kept,
                report.lost,
                report.restored,
                report.ops_kept,
                report.ops_total,
                report.torn_writes,
                report.bytes_dropped
            );
            format!("ok {}", report.to_json())
        }
        Command::Stats => {
            let tree = tree.lock();
            let (inodes, bytes) = tree.usage();
            let last_cut = tree.last_cut().map(|cut| {
                json!({
                    "seed": cut.seed,
                    "files_kept": cut.files_kept,
                    "lost": cut.lost,
                    "restored": cut.restored,
                    "ops_total": cut.ops_total,
                    "ops_kept": cut.ops_kept,
                    "torn_writes": cut.torn_writes,
                    "bytes_dropped": cut.bytes_dropped,
                })
            });
            let stats = json!({
                "counters": tree.stats().to_json(),
                "inodes": inodes,
                "bytes": bytes,
                "last_cut": last_cut,
            });
            format!("ok {stats}")
        }
        Command::Ping | Command::Unmount => "ok".to_owned(),
    }
}

/// Serves connections until an `unmount` arrives, which it passes on through `unmount`.
pub fn serve(listener: &UnixListener, tree: &Arc<Mutex<Tree>>, unmount: &Sender<()>) {
    for stream in listener.incoming() {
        let Ok(stream) = stream else {
            continue;
        };
        match serve_connection(stream, tree) {
            Ok(true) => {
                // The receiver is gone only if the process is already on its way out.
                let _ = unmount.send(());
                return;
            }
            Ok(false) => {}
            Err(error) => eprintln!("quince-powercut: control connection failed: {error}"),
        }
    }
}

/// Serves one connection; true when it asked to unmount.
fn serve_connection(stream: UnixStream, tree: &Mutex<Tree>) -> std::io::Result<bool> {
    stream.set_read_timeout(Some(IDLE_TIMEOUT))?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    loop {
        let mut line = String::new();
        if (&mut reader).take(LINE_BYTES_MAX).read_line(&mut line)? == 0 {
            return Ok(false);
        }
        let (reply, unmount) = match parse(line.trim()) {
            Ok(Command::Unmount) => ("ok".to_owned(), true),
            Ok(command) => (answer(tree, command), false),
            Err(message) => (format!("error {message}"), false),
        };
        writer.write_all(reply.as_bytes())?;
        writer.write_all(b"\n")?;
        writer.flush()?;
        if unmount {
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    use crate::tree::{Meta, ROOT};

    #[test]
    fn parses_commands() {
        assert_eq!(parse("cut 42"), Ok(Command::Cut(42)));
        assert_eq!(
            parse("  cut   18446744073709551615 "),
            Ok(Command::Cut(u64::MAX))
        );
        assert_eq!(parse("stats"), Ok(Command::Stats));
        assert_eq!(parse("ping"), Ok(Command::Ping));
        assert_eq!(parse("unmount"), Ok(Command::Unmount));
        assert!(parse("cut").is_err());
        assert!(parse("cut -1").is_err());
        assert!(parse("cut 1 2").is_err());
        assert!(parse("stats now").is_err());
        assert!(parse("").is_err());
        assert!(parse("reboot").is_err());
    }

    #[test]
    fn answers_are_one_line_of_json() {
        let tree = Mutex::new(Tree::new());
        let ino = tree
            .lock()
            .create_file(ROOT, OsStr::new("f"), Meta::new(0o644, 0, 0))
            .unwrap();
        tree.lock().write(ino, 0, b"unsynced").unwrap();
        let cut = answer(&tree, Command::Cut(3));
        let json: serde_json::Value =
            serde_json::from_str(cut.strip_prefix("ok ").unwrap()).unwrap();
        assert_eq!(json["seed"], 3);
        assert_eq!(
            json["lost"], 1,
            "the file's entry was never made durable: {json}"
        );
        assert_eq!(json["lost_paths"][0], "/f");
        let stats = answer(&tree, Command::Stats);
        assert!(!stats.contains('\n'));
        let json: serde_json::Value =
            serde_json::from_str(stats.strip_prefix("ok ").unwrap()).unwrap();
        assert_eq!(json["counters"]["cuts"], 1);
        assert_eq!(json["counters"]["writes"], 1);
        assert_eq!(json["last_cut"]["lost"], 1);
        assert_eq!(answer(&tree, Command::Ping), "ok");
    }
}
