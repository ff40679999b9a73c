//! How an etcd member is started: the command line of Debian's `etcd` (3.4) for one member of
//! a cluster whose members are all known in advance.
//!
//! What it is: [`EtcdMember`] (a member's name, host and ports) and [`etcd_args`], the argument
//! list `quince start` and the tests pass to the `etcd` binary. A static bootstrap: every
//! member is given the whole member list (`--initial-cluster`), so no discovery service is
//! needed, and a restarted member rejoins from its data directory.
//!
//! What it is not: process supervision (the caller spawns, watches and stops the process), or
//! membership changes of a running cluster.
//!
//! Invariants: the arguments depend only on the inputs, so every member computes the same
//! cluster; client URLs are plain HTTP (the cluster runs on loopback or a private network).

use std::path::Path;

/// One member of an etcd cluster.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EtcdMember {
    /// The member's name (unique in the cluster).
    pub name: String,
    /// The host or address it listens on and is reached at.
    pub host: String,
    /// The port clients use.
    pub client_port: u16,
    /// The port members use among themselves.
    pub peer_port: u16,
}

impl EtcdMember {
    /// `http://host:client_port`.
    pub fn client_url(&self) -> String {
        format!("http://{}:{}", self.host, self.client_port)
    }

    /// `http://host:peer_port`.
    pub fn peer_url(&self) -> String {
        format!("http://{}:{}", self.host, self.peer_port)
    }
}

/// The arguments for the `etcd` binary running member `me` of `members` with its data in
/// `data_dir`. `token` names the cluster (members of different clusters never join each
/// other). A member whose data directory already holds a member ignores the bootstrap flags,
/// so the same arguments serve a first start and a restart.
pub fn etcd_args(
    me: &EtcdMember,
    members: &[EtcdMember],
    data_dir: &Path,
    token: &str,
) -> Vec<String> {
    let initial_cluster = members
        .iter()
        .map(|m| format!("{}={}", m.name, m.peer_url()))
        .collect::<Vec<_>>()
        .join(",");
    vec![
        format!("--name={}", me.name),
        format!("--data-dir={}", data_dir.display()),
        format!("--listen-client-urls={}", me.client_url()),
        format!("--advertise-client-urls={}", me.client_url()),
        format!("--listen-peer-urls={}", me.peer_url()),
        format!("--initial-advertise-peer-urls={}", me.peer_url()),
        format!("--initial-cluster={initial_cluster}"),
        format!("--initial-cluster-token={token}"),
        "--initial-cluster-state=new".to_string(),
        // Leader loss costs about one election timeout (etcd's defaults: 100 ms, 1000 ms).
        "--heartbeat-interval=100".to_string(),
        "--election-timeout=1000".to_string(),
        // Keep a bounded history for watches: compact hourly, revisions older than that go.
        "--auto-compaction-mode=periodic".to_string(),
        "--auto-compaction-retention=1h".to_string(),
        "--logger=zap".to_string(),
        "--log-outputs=stderr".to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_names_the_whole_cluster() {
        let members: Vec<EtcdMember> = (0..3)
            .map(|i| EtcdMember {
                name: format!("agent{i}"),
                host: "127.0.0.1".into(),
                client_port: 2379 + i * 10,
                peer_port: 2380 + i * 10,
            })
            .collect();
        let args = etcd_args(&members[1], &members, Path::new("/d"), "t");
        assert!(args.contains(&"--name=agent1".to_string()));
        assert!(args.contains(&"--listen-client-urls=http://127.0.0.1:2389".to_string()));
        assert!(args.contains(
            &"--initial-cluster=agent0=http://127.0.0.1:2380,agent1=http://127.0.0.1:2390,agent2=http://127.0.0.1:2400"
                .to_string()
        ));
    }
}
