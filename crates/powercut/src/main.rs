//! `quince-powercut MOUNTPOINT --control SOCKET`: mounts the power-loss file system and serves
//! its control socket until told to unmount.
//!
//! What it is: the process around [`quince_powercut`]: it binds the control socket, mounts
//! (as root fuser calls mount(2) itself, so no `fusermount3` is needed), prints
//! `quince-powercut: mounted <mountpoint> control <socket>` on stdout once both are ready, and
//! unmounts on `unmount`, SIGTERM, SIGINT or SIGHUP, or (with `--watch-stdin`) when its stdin
//! closes. If someone unmounts it from outside (`umount`), it notices and exits too. A busy
//! mount (files still open) is detached lazily (`umount -l`) rather than left dead.
//!
//! What it is not: a daemon. It stays in the foreground, logs to stderr, and holds all data in
//! memory; when it exits, the file system's contents are gone.
//!
//! Invariants: the ready line is printed only when a request on the mount would be served; the
//! exit status is 0 only after a clean unmount.

use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use fuser::{Config, MountOption};
use parking_lot::Mutex;
use quince_powercut::control;
use quince_powercut::fs::PowercutFs;
use quince_powercut::tree::Tree;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// How often the main thread checks whether the mount went away from outside.
const SESSION_POLL: Duration = Duration::from_millis(200);

/// A power-loss FUSE file system for tests (see the crate documentation).
#[derive(Parser, Debug)]
#[command(name = "quince-powercut", version)]
struct Args {
    /// Where to mount (an existing, empty directory).
    mountpoint: PathBuf,
    /// The control socket to create (outside the mount; replaced if it exists).
    #[arg(long)]
    control: PathBuf,
    /// FUSE worker threads.
    #[arg(long, default_value_t = 2)]
    threads: usize,
    /// Unmount and exit when stdin reaches its end: a harness that holds the other end of a
    /// pipe takes the mount with it even when it is killed.
    #[arg(long)]
    watch_stdin: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("quince-powercut: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let listener = bind(&args.control)?;
    let tree = Arc::new(Mutex::new(Tree::new()));
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName("quince-powercut".into()),
        MountOption::Subtype("powercut".into()),
        MountOption::RW,
        MountOption::NoAtime,
    ];
    config.n_threads = Some(args.threads.max(1));
    let session = fuser::Session::new(
        PowercutFs::new(Arc::clone(&tree)),
        &args.mountpoint,
        &config,
    )
    .and_then(fuser::Session::spawn)
    .map_err(|e| format!("cannot mount at {}: {e}", args.mountpoint.display()))?;

    let (stop, stopped) = mpsc::channel::<()>();
    let mut signals = Signals::new([SIGTERM, SIGINT, SIGHUP])
        .map_err(|e| format!("cannot catch signals: {e}"))?;
    let on_signal = stop.clone();
    std::thread::Builder::new()
        .name("powercut-signals".into())
        .spawn(move || {
            if signals.forever().next().is_some() {
                let _ = on_signal.send(());
            }
        })
        .map_err(|e| format!("cannot start the signal thread: {e}"))?;
    if args.watch_stdin {
        let on_eof = stop.clone();
        std::thread::Builder::new()
            .name("powercut-stdin".into())
            .spawn(move || {
                // Whatever arrives is ignored; only the end of the stream matters.
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                let _ = on_eof.send(());
            })
            .map_err(|e| format!("cannot start the stdin thread: {e}"))?;
    }
    let control_tree = Arc::clone(&tree);
    std::thread::Builder::new()
        .name("powercut-control".into())
        .spawn(move || control::serve(&listener, &control_tree, &stop))
        .map_err(|e| format!("cannot start the control thread: {e}"))?;

    println!(
        "quince-powercut: mounted {} control {}",
        args.mountpoint.display(),
        args.control.display()
    );

    loop {
        match stopped.recv_timeout(SESSION_POLL) {
            Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) if session.guard.is_finished() => break,
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
    let _ = std::fs::remove_file(&args.control);
    if let Err(error) = session.umount_and_join() {
        // Busy (a process still has files open there): detach it lazily rather than leave a
        // dead mount behind when this process exits.
        let lazy = Command::new("umount")
            .arg("-l")
            .arg(&args.mountpoint)
            .status();
        return Err(format!(
            "unmounting {} failed ({error}); lazy umount: {lazy:?}",
            args.mountpoint.display()
        ));
    }
    eprintln!("quince-powercut: unmounted {}", args.mountpoint.display());
    Ok(())
}

/// Binds the control socket, replacing a stale one.
fn bind(path: &Path) -> Result<UnixListener, String> {
    if path.exists() {
        std::fs::remove_file(path)
            .map_err(|e| format!("cannot remove the old socket {}: {e}", path.display()))?;
    }
    UnixListener::bind(path).map_err(|e| format!("cannot bind {}: {e}", path.display()))
}
