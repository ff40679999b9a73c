//! One child process of the starter: spawning it so that it cannot outlive the starter, and
//! stopping it.
//!
//! What it is: [`spawn`], which starts a binary with its output appended to its log file, in
//! a process group of its own (a Ctrl-C in the terminal reaches only the starter, which stops
//! the children in order) and with `PR_SET_PDEATHSIG` set to SIGKILL (if the starter dies,
//! even by `kill -9`, the kernel kills the child); and [`stop`], SIGTERM, a bounded wait,
//! then SIGKILL.
//!
//! What it is not: the restart policy or the start order ([`super::supervisor`]).
//!
//! Invariants: the parent-death signal is tied to the thread that forks, so every child is
//! spawned from the starter's main thread, which lives as long as the starter; a child whose
//! parent died before the signal was armed never runs its program; [`stop`] always reaps the
//! child.

use std::fs::OpenOptions;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nix::sys::prctl::set_pdeathsig;
use nix::sys::signal::{kill, Signal};
use nix::unistd::{getpid, getppid, Pid};

use super::command::ProcessCommand;

/// How often [`stop`] looks whether the child has exited.
const STOP_POLL: Duration = Duration::from_millis(20);

/// Starts `command`, creating its directories and appending its output to its log file.
pub fn spawn(command: &ProcessCommand) -> std::io::Result<Child> {
    std::fs::create_dir_all(&command.data_dir)?;
    let log = open_log(&command.log_file)?;
    let log_err = log.try_clone()?;
    let mut process = Command::new(&command.program);
    process
        .args(&command.args)
        .current_dir(&command.dir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(log))
        .stderr(Stdio::from(log_err))
        .process_group(0);
    arm_parent_death_signal(&mut process);
    process.spawn()
}

/// Makes the kernel send SIGKILL to the child when the starter's main thread ends (the
/// starter exits, panics, or is killed with SIGKILL). The one `unsafe` of the starter:
/// `pre_exec` runs its closure between fork and exec.
#[allow(unsafe_code)]
fn arm_parent_death_signal(process: &mut Command) {
    let starter = getpid();
    // SAFETY: the closure runs in the forked child before exec; it allocates nothing and
    // calls only prctl and getppid, both async-signal-safe system calls.
    unsafe {
        process.pre_exec(move || {
            set_pdeathsig(Signal::SIGKILL).map_err(std::io::Error::from)?;
            // The starter may have died between fork and prctl: then nobody would kill us.
            if getppid() != starter {
                return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
            }
            Ok(())
        });
    }
}

fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// Sends SIGTERM to `child`, waits up to `timeout` for it to exit, then kills it; reaps it in
/// every case. Returns whether it exited by itself.
pub fn stop(child: &mut Child, timeout: Duration) -> bool {
    if matches!(child.try_wait(), Ok(Some(_))) {
        return true;
    }
    signal(child, Signal::SIGTERM);
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(_)) | Err(_) => return true,
            Ok(None) => std::thread::sleep(STOP_POLL),
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Sends `signal` to `child` (ignoring a child that is already gone).
pub fn signal(child: &Child, signal: Signal) {
    if let Ok(pid) = i32::try_from(child.id()) {
        let _ = kill(Pid::from_raw(pid), signal);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(dir: &Path, script: &str) -> ProcessCommand {
        ProcessCommand {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            dir: dir.to_path_buf(),
            data_dir: dir.join("data"),
            log_file: dir.join("out.log"),
        }
    }

    #[test]
    fn a_child_logs_to_its_file_and_stops_on_sigterm() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn(&sh(dir.path(), "echo hello; exec sleep 60")).unwrap();
        let log = dir.path().join("out.log");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::fs::read_to_string(&log).unwrap_or_default() != "hello\n" {
            assert!(Instant::now() < deadline, "no output in the log");
            std::thread::sleep(STOP_POLL);
        }
        assert!(dir.path().join("data").is_dir());
        assert!(stop(&mut child, Duration::from_secs(10)));
    }

    #[test]
    fn a_child_that_ignores_sigterm_is_killed_after_the_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn(&sh(
            dir.path(),
            "trap '' TERM; echo armed; while :; do sleep 1; done",
        ))
        .unwrap();
        let log = dir.path().join("out.log");
        let deadline = Instant::now() + Duration::from_secs(10);
        while !std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("armed")
        {
            assert!(Instant::now() < deadline, "the child never started");
            std::thread::sleep(STOP_POLL);
        }
        assert!(!stop(&mut child, Duration::from_millis(200)));
        assert!(child.try_wait().unwrap().is_some());
    }
}
