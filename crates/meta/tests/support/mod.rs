//! Real etcd members for the tests: [`EtcdCluster`] starts `n` members of one cluster on free
//! loopback ports, each in a data directory of its own under one temporary directory, with
//! the command line of `quince_meta::etcd_process::etcd_args`.
//!
//! What it is not: a supervisor; a killed member stays dead until [`EtcdCluster::restart`].
//!
//! Invariants: every member is killed (SIGKILL) and reaped when the cluster is dropped, also
//! when a test panics; readiness is polled with a deadline, never slept for. When the `etcd`
//! binary is missing, [`EtcdCluster::start`] answers `None` after saying so, unless
//! `QUINCE_REQUIRE_ETCD=1` is set: then it panics.

#![allow(dead_code)]

use std::fs::File;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use quince_meta::etcd_process::{etcd_args, EtcdMember};
use quince_meta::{EtcdOptions, EtcdStore, MetaStore};

/// How long a member may take to be ready.
const READY_DEADLINE: Duration = Duration::from_secs(30);

/// Whether the `etcd` binary can be run; `None` (after a message) means skip the test.
pub fn etcd_installed(test: &str) -> bool {
    let installed = Command::new("etcd")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if installed {
        return true;
    }
    if std::env::var("QUINCE_REQUIRE_ETCD").as_deref() == Ok("1") {
        panic!("{test}: the etcd binary is missing and QUINCE_REQUIRE_ETCD=1");
    }
    eprintln!(
        "{test}: skipped: the etcd binary is not installed (apt-get install etcd-server; \
         QUINCE_REQUIRE_ETCD=1 makes this a failure)"
    );
    false
}

/// Free loopback ports (all held at once, so they differ, then released for etcd).
fn free_ports(count: usize) -> Vec<u16> {
    let listeners: Vec<TcpListener> = (0..count)
        .map(|_| TcpListener::bind("127.0.0.1:0").expect("bind a free port"))
        .collect();
    listeners
        .iter()
        .map(|listener| listener.local_addr().unwrap().port())
        .collect()
}

/// A running etcd cluster on loopback.
pub struct EtcdCluster {
    members: Vec<EtcdMember>,
    children: Vec<Option<Child>>,
    dir: tempfile::TempDir,
    token: String,
}

impl EtcdCluster {
    /// Starts `size` members and waits until each answers with a leader; `None` when etcd is
    /// not installed (see the module documentation).
    pub fn start(test: &str, size: usize) -> Option<EtcdCluster> {
        if !etcd_installed(test) {
            return None;
        }
        let dir = tempfile::Builder::new()
            .prefix("quince-etcd-")
            .tempdir()
            .expect("temporary directory");
        let ports = free_ports(size * 2);
        let members: Vec<EtcdMember> = (0..size)
            .map(|i| EtcdMember {
                name: format!("agent{i}"),
                host: "127.0.0.1".into(),
                client_port: ports[2 * i],
                peer_port: ports[2 * i + 1],
            })
            .collect();
        let token = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let mut cluster = EtcdCluster {
            children: (0..size).map(|_| None).collect(),
            members,
            dir,
            token,
        };
        for i in 0..size {
            cluster.spawn(i);
        }
        for i in 0..size {
            cluster.wait_ready(i);
        }
        Some(cluster)
    }

    fn spawn(&mut self, i: usize) {
        let member = &self.members[i];
        let data_dir = self.dir.path().join(&member.name);
        let log = File::options()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("{}.log", member.name)))
            .expect("member log");
        let child = Command::new("etcd")
            .args(etcd_args(member, &self.members, &data_dir, &self.token))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log handle"))
            .stderr(log)
            .spawn()
            .expect("start etcd");
        self.children[i] = Some(child);
    }

    /// Waits until member `i` answers a read through a store of its own (which needs a
    /// leader: every request requires one).
    pub fn wait_ready(&mut self, i: usize) {
        let deadline = Instant::now() + READY_DEADLINE;
        let endpoint = vec![self.members[i].client_url()];
        let options = EtcdOptions {
            call_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(500),
        };
        loop {
            if let Some(status) = self.children[i]
                .as_mut()
                .and_then(|c| c.try_wait().unwrap())
            {
                panic!("etcd member {i} exited with {status}:\n{}", self.log(i));
            }
            if let Ok(store) = EtcdStore::connect(&endpoint, options.clone()) {
                if store.get("/readiness-probe").is_ok() {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "etcd member {i} not ready within {READY_DEADLINE:?}:\n{}",
                self.log(i)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The tail of member `i`'s log.
    pub fn log(&self, i: usize) -> String {
        let bytes = std::fs::read(
            self.dir
                .path()
                .join(format!("{}.log", self.members[i].name)),
        )
        .unwrap_or_default();
        let start = bytes.len().saturating_sub(4000);
        String::from_utf8_lossy(&bytes[start..]).into_owned()
    }

    /// Every member's client endpoint, as `tcp://host:port` (ArangoDB's spelling).
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|m| format!("tcp://{}:{}", m.host, m.client_port))
            .collect()
    }

    /// Member `i`'s client URL.
    pub fn client_url(&self, i: usize) -> String {
        self.members[i].client_url()
    }

    /// Kills member `i` with SIGKILL and reaps it.
    pub fn kill(&mut self, i: usize) {
        if let Some(mut child) = self.children[i].take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts member `i` again from its data directory and waits until it is ready.
    pub fn restart(&mut self, i: usize) {
        self.kill(i);
        self.spawn(i);
        self.wait_ready(i);
    }
}

impl Drop for EtcdCluster {
    fn drop(&mut self) {
        for i in 0..self.children.len() {
            self.kill(i);
        }
    }
}
