//! The supervision of the starter's processes: start in order, wait until each answers,
//! restart what dies, stop in reverse order.
//!
//! What it is: [`Supervisor`], which owns every child. [`Supervisor::run`] starts the etcd
//! members and waits until they report healthy, then the DB servers, then the coordinators
//! (each waited for until it answers `GET /_api/version`), prints the coordinators'
//! endpoints, and then watches: a child that exits is restarted after a backoff
//! ([`RESTART_BACKOFF_FIRST`], doubling up to [`RESTART_BACKOFF_MAX`]), and one that needed
//! [`RESTARTS_MAX`] restarts within [`RESTART_WINDOW`] is given up (logged, left stopped,
//! `failed` in setup.json). SIGTERM or SIGINT stops the coordinators, then the DB servers,
//! then the etcd members (SIGTERM, the stop timeout, then SIGKILL).
//!
//! What it is not: the layout or the command lines (computed before, in [`super::plan`] and
//! [`super::command`]).
//!
//! Invariants: no child outlives the supervisor: dropping it (after a failed start, or while
//! a panic unwinds) stops every child, and each child also has the kernel's parent-death
//! signal ([`super::child`]); a process that exits before the cluster is ready ends the
//! start (with its log file named) rather than being restarted; setup.json is rewritten on
//! every change of a process.

use std::collections::VecDeque;
use std::io::Write;
use std::path::PathBuf;
use std::process::Child;
use std::time::{Duration, Instant};

use quince_meta::etcd_process::EtcdMember;

use super::child;
use super::command::ProcessCommand;
use super::plan::{Planned, Role};
use super::probe;
use super::secret::superuser_token;
use super::signals::Signals;
use super::state::{self, ProcessState, SetupFile};

/// How often the loops look at the children, the probes and the signal flag.
const POLL: Duration = Duration::from_millis(100);

/// The wait before the first restart of a process within [`RESTART_WINDOW`].
pub const RESTART_BACKOFF_FIRST: Duration = Duration::from_secs(1);

/// The longest wait before a restart.
pub const RESTART_BACKOFF_MAX: Duration = Duration::from_secs(16);

/// The restarts of one process counted together.
pub const RESTART_WINDOW: Duration = Duration::from_secs(300);

/// Restarts within [`RESTART_WINDOW`] after which a process is given up.
pub const RESTARTS_MAX: usize = 5;

/// Why a start did not end with a ready cluster.
#[derive(Debug)]
pub enum StartEnd {
    /// SIGTERM or SIGINT arrived.
    Signal(i32),
    /// A process exited or did not answer in time (the message says which, and its log).
    Failed(String),
}

/// One process and what the supervisor knows of it.
struct Supervised {
    planned: Planned,
    command: ProcessCommand,
    child: Option<Child>,
    /// When it was restarted, within the window.
    restarts: VecDeque<Instant>,
    /// When the scheduled restart is due.
    restart_at: Option<Instant>,
}

/// The owner of every child.
pub struct Supervisor {
    processes: Vec<Supervised>,
    setup: SetupFile,
    data_dir: PathBuf,
    secret: Vec<u8>,
    etcd_members: Vec<EtcdMember>,
    stop_timeout: Duration,
    signals: Signals,
}

impl Supervisor {
    /// A supervisor of `processes` (each planned process with its command, in start order);
    /// `setup` is the state file, whose `processes` are in the same order.
    pub fn new(
        processes: Vec<(Planned, ProcessCommand)>,
        setup: SetupFile,
        data_dir: PathBuf,
        secret: Vec<u8>,
        etcd_members: Vec<EtcdMember>,
        stop_timeout: Duration,
        signals: Signals,
    ) -> Supervisor {
        debug_assert_eq!(processes.len(), setup.processes.len());
        Supervisor {
            processes: processes
                .into_iter()
                .map(|(planned, command)| Supervised {
                    planned,
                    command,
                    child: None,
                    restarts: VecDeque::new(),
                    restart_at: None,
                })
                .collect(),
            setup,
            data_dir,
            secret,
            etcd_members,
            stop_timeout,
            signals,
        }
    }

    /// Starts the cluster and supervises it until SIGTERM or SIGINT; then stops it. `Ok` after
    /// a signal (also one that arrived during the start), `Err` when the start failed (every
    /// process started is stopped again).
    pub fn run(&mut self, start_timeout: Duration) -> Result<(), String> {
        match self.start_all(start_timeout) {
            Ok(()) => {}
            Err(StartEnd::Signal(signal)) => {
                log(&format!("signal {signal} during the start: stopping"));
                self.stop_all();
                return Ok(());
            }
            Err(StartEnd::Failed(message)) => {
                log(&message);
                self.stop_all();
                return Err(message);
            }
        }
        self.print_ready();
        while self.signals.pause(POLL).is_none() {
            self.watch();
        }
        log("stopping the cluster: coordinators, DB servers, then etcd members");
        self.stop_all();
        Ok(())
    }

    /// Starts each role in order and waits until its processes answer.
    fn start_all(&mut self, start_timeout: Duration) -> Result<(), StartEnd> {
        let deadline = Instant::now() + start_timeout;
        for role in [Role::Etcd, Role::DbServer, Role::Coordinator] {
            for i in self.indices(role) {
                self.spawn(i).map_err(StartEnd::Failed)?;
            }
            self.wait_ready(role, deadline)?;
            if role == Role::Etcd && self.indices(Role::Etcd).is_empty() {
                self.wait_remote_etcd(deadline)?;
            }
        }
        Ok(())
    }

    fn indices(&self, role: Role) -> Vec<usize> {
        (0..self.processes.len())
            .filter(|&i| self.processes[i].planned.role == role)
            .collect()
    }

    /// Starts process `i` and records its pid.
    fn spawn(&mut self, i: usize) -> Result<(), String> {
        let process = &mut self.processes[i];
        let child = child::spawn(&process.command).map_err(|e| {
            let hint = match (process.planned.role, e.kind()) {
                (Role::Etcd, std::io::ErrorKind::NotFound) => {
                    "; install etcd (on Debian or Ubuntu: apt-get install etcd-server) or name \
                     its binary with --server.etcd PATH"
                }
                _ => "",
            };
            format!(
                "cannot start {} ({}): {e}{hint}",
                describe(&process.planned),
                process.command.program.display()
            )
        })?;
        log(&format!(
            "started {} (pid {}), log {}",
            describe(&process.planned),
            child.id(),
            process.command.log_file.display()
        ));
        let record = &mut self.setup.processes[i];
        record.pid = Some(child.id());
        record.state = ProcessState::Starting;
        process.child = Some(child);
        self.save();
        Ok(())
    }

    /// Waits until every process of `role` answers, failing when one exits or the deadline
    /// passes.
    fn wait_ready(&mut self, role: Role, deadline: Instant) -> Result<(), StartEnd> {
        let indices = self.indices(role);
        loop {
            if let Some(signal) = self.signals.received() {
                return Err(StartEnd::Signal(signal));
            }
            self.fail_on_exit()?;
            let token = self.token();
            let mut waiting = Vec::new();
            for &i in &indices {
                if self.setup.processes[i].state == ProcessState::Running {
                    continue;
                }
                let process = &self.processes[i];
                if answers(&process.planned, &token) {
                    log(&format!("{} is up", describe(&process.planned)));
                    self.setup.processes[i].state = ProcessState::Running;
                    self.save();
                } else {
                    waiting.push(i);
                }
            }
            if waiting.is_empty() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                let names: Vec<String> = waiting
                    .iter()
                    .map(|&i| {
                        format!(
                            "{} (log {})",
                            describe(&self.processes[i].planned),
                            self.processes[i].command.log_file.display()
                        )
                    })
                    .collect();
                return Err(StartEnd::Failed(format!(
                    "no answer in time from {}",
                    names.join(", ")
                )));
            }
            self.signals.pause(POLL);
        }
    }

    /// During the start: fails when any process started so far has exited.
    fn fail_on_exit(&mut self) -> Result<(), StartEnd> {
        for i in 0..self.processes.len() {
            let process = &mut self.processes[i];
            let exited = process
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                process.child = None;
                self.setup.processes[i].pid = None;
                self.setup.processes[i].state = ProcessState::Failed;
                self.save();
                let process = &self.processes[i];
                return Err(StartEnd::Failed(format!(
                    "{} exited ({status}) during the start; see {}",
                    describe(&process.planned),
                    process.command.log_file.display()
                )));
            }
        }
        Ok(())
    }

    /// Join mode on a machine without an etcd member: waits until one member answers healthy.
    fn wait_remote_etcd(&mut self, deadline: Instant) -> Result<(), StartEnd> {
        loop {
            if let Some(signal) = self.signals.received() {
                return Err(StartEnd::Signal(signal));
            }
            if self
                .etcd_members
                .iter()
                .any(|m| probe::etcd_healthy(&m.host, m.client_port))
            {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(StartEnd::Failed(
                    "no etcd member of the join list answered in time".into(),
                ));
            }
            self.signals.pause(POLL);
        }
    }

    fn token(&self) -> String {
        superuser_token(&self.secret, quince_auth_now())
    }

    /// Prints the coordinators' endpoints: a line for people, one for programs.
    fn print_ready(&self) {
        let urls: Vec<String> = self
            .indices(Role::Coordinator)
            .iter()
            .map(|&i| self.processes[i].planned.url())
            .collect();
        let mut out = std::io::stdout().lock();
        if let Some(first) = self.indices(Role::Coordinator).first() {
            let first = &self.processes[*first].planned;
            let _ = writeln!(
                out,
                "Your cluster can now be accessed at {} (with any ArangoDB driver, curl, or \
                 quince import --server.endpoint {})",
                first.url(),
                first.endpoint()
            );
        }
        let _ = writeln!(out, "quince start: ready: {}", urls.join(","));
        let _ = out.flush();
    }

    /// One look at every process: notes exits, schedules and performs restarts, marks
    /// restarted processes running once they answer.
    fn watch(&mut self) {
        let now = Instant::now();
        let mut token = None;
        for i in 0..self.processes.len() {
            let exited = self.processes[i]
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if let Some(status) = exited {
                let process = &mut self.processes[i];
                process.child = None;
                log(&format!(
                    "{} exited unexpectedly ({status}); see {}",
                    describe(&process.planned),
                    process.command.log_file.display()
                ));
                self.setup.processes[i].pid = None;
                self.schedule_restart(i, now);
                self.save();
                continue;
            }
            if self.processes[i].restart_at.is_some_and(|at| at <= now) {
                self.processes[i].restart_at = None;
                self.processes[i].restarts.push_back(now);
                self.setup.processes[i].restarts += 1;
                if let Err(message) = self.spawn(i) {
                    log(&message);
                    self.schedule_restart(i, now);
                    self.save();
                }
                continue;
            }
            if self.setup.processes[i].state == ProcessState::Starting {
                let token = token.get_or_insert_with(|| self.token());
                if answers(&self.processes[i].planned, token) {
                    log(&format!(
                        "{} is up again",
                        describe(&self.processes[i].planned)
                    ));
                    self.setup.processes[i].state = ProcessState::Running;
                    self.save();
                }
            }
        }
    }

    /// After an exit: a restart after the backoff, or giving up.
    fn schedule_restart(&mut self, i: usize, now: Instant) {
        let process = &mut self.processes[i];
        while process
            .restarts
            .front()
            .is_some_and(|t| now.duration_since(*t) > RESTART_WINDOW)
        {
            process.restarts.pop_front();
        }
        let recent = process.restarts.len();
        if recent >= RESTARTS_MAX {
            log(&format!(
                "giving up {}: it exited {} times within {} s; see {}",
                describe(&process.planned),
                recent + 1,
                RESTART_WINDOW.as_secs(),
                process.command.log_file.display()
            ));
            self.setup.processes[i].state = ProcessState::Failed;
            return;
        }
        let delay = restart_delay(recent);
        log(&format!(
            "restarting {} in {} s",
            describe(&process.planned),
            delay.as_secs()
        ));
        process.restart_at = Some(now + delay);
        self.setup.processes[i].state = ProcessState::Restarting;
    }

    /// Stops coordinators, then DB servers, then etcd members; each role's processes get
    /// SIGTERM together and the stop timeout, then SIGKILL. Idempotent.
    pub fn stop_all(&mut self) {
        for role in [Role::Coordinator, Role::DbServer, Role::Etcd] {
            let indices = self.indices(role);
            for &i in &indices {
                self.processes[i].restart_at = None;
                if let Some(child) = &self.processes[i].child {
                    child::signal(child, nix::sys::signal::Signal::SIGTERM);
                }
            }
            let deadline = Instant::now() + self.stop_timeout;
            for &i in &indices {
                let Some(mut running) = self.processes[i].child.take() else {
                    if self.setup.processes[i].state != ProcessState::Failed {
                        self.setup.processes[i].state = ProcessState::Stopped;
                    }
                    continue;
                };
                let left = deadline.saturating_duration_since(Instant::now());
                let clean = child::stop(&mut running, left);
                log(&format!(
                    "stopped {}{}",
                    describe(&self.processes[i].planned),
                    if clean {
                        ""
                    } else {
                        " (killed after the stop timeout)"
                    }
                ));
                self.setup.processes[i].pid = None;
                self.setup.processes[i].state = ProcessState::Stopped;
            }
        }
        self.save();
    }

    fn save(&self) {
        if let Err(message) = state::write(&self.data_dir, &self.setup) {
            log(&message);
        }
    }
}

impl Drop for Supervisor {
    fn drop(&mut self) {
        if self.processes.iter().any(|p| p.child.is_some()) {
            self.stop_all();
        }
    }
}

/// The wait before the restart that follows `recent` restarts within the window.
pub fn restart_delay(recent: usize) -> Duration {
    let factor = 1u32 << recent.min(8);
    (RESTART_BACKOFF_FIRST * factor).min(RESTART_BACKOFF_MAX)
}

/// Whether `planned` answers its role's probe.
fn answers(planned: &Planned, token: &str) -> bool {
    match planned.role {
        Role::Etcd => probe::etcd_healthy(&planned.host, planned.port),
        Role::DbServer | Role::Coordinator => {
            probe::quince_answers(&planned.host, planned.port, token)
        }
    }
}

/// `DB server 127.0.0.1:8530`.
fn describe(planned: &Planned) -> String {
    let role = match planned.role {
        Role::Etcd => "etcd member",
        Role::DbServer => "DB server",
        Role::Coordinator => "coordinator",
    };
    format!("{role} {}:{}", planned.host, planned.port)
}

/// Seconds since the epoch.
fn quince_auth_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// One line of the starter's own log, on standard error.
pub fn log(message: &str) {
    eprintln!("quince start: {message}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restart_backoff_doubles_up_to_its_cap() {
        let delays: Vec<u64> = (0..7).map(|n| restart_delay(n).as_secs()).collect();
        assert_eq!(delays, vec![1, 2, 4, 8, 16, 16, 16]);
    }
}
