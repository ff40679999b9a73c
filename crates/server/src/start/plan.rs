//! The cluster's layout: which processes run where, on which ports, in which directories.
//!
//! What it is: [`Layout`] (the mode, the base port and the counts: everything setup.json keeps
//! so a second start comes back the same) and [`plan`], a pure function from a layout to the
//! etcd member list and the processes this machine runs. The port scheme, from the base port
//! `P` (8528 by default, as ArangoDB's starter): instance `i` (0 for the first, one per
//! machine in join mode) has its coordinator on `P+1+5i`, its DB server on `P+2+5i`, its etcd
//! member's client port on `P+3+5i` and peer port on `P+4+5i`; `P+5i` itself is left free (it
//! is the ArangoDB starter's own port, and quince's starter listens on nothing).
//!
//! What it is not: the command lines ([`super::command`]) or the running of anything.
//!
//! Invariants: the plan depends only on the layout, so every machine of a join computes the
//! same member list and ports; every port fits in 16 bits; names and directories are unique.

use quince_meta::etcd_process::EtcdMember;
use serde::{Deserialize, Serialize};

/// The loopback address local mode binds every process to.
pub const LOCAL_HOST: &str = "127.0.0.1";

/// Ports one instance takes from the base port.
pub const PORTS_PER_INSTANCE: u32 = 5;

/// The most machines in a join list.
pub const JOIN_HOSTS_MAX: usize = 64;

/// How the cluster is spread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "camelCase")]
pub enum Mode {
    /// Everything on 127.0.0.1.
    Local {
        /// DB servers.
        dbservers: u16,
        /// Coordinators.
        coordinators: u16,
    },
    /// One starter per machine: each runs a DB server and a coordinator, the first
    /// `agency_size` hosts (sorted as text) an etcd member too.
    Join {
        /// Every machine, sorted as text, without duplicates.
        hosts: Vec<String>,
        /// This machine (one of `hosts`).
        me: String,
    },
}

/// Everything that fixes the processes, their ports and directories.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Layout {
    /// Local or join, with the counts or hosts.
    #[serde(flatten)]
    pub mode: Mode,
    /// The base port.
    pub port: u16,
    /// The number of etcd members.
    pub agency_size: u16,
}

/// What a process is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, PartialOrd, Ord)]
pub enum Role {
    /// An etcd member.
    #[serde(rename = "etcd")]
    Etcd,
    /// `quince serve --cluster.my-role DBSERVER`.
    #[serde(rename = "dbserver")]
    DbServer,
    /// `quince serve --cluster.my-role COORDINATOR`.
    #[serde(rename = "coordinator")]
    Coordinator,
}

impl Role {
    /// The name used in directories and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Etcd => "etcd",
            Role::DbServer => "dbserver",
            Role::Coordinator => "coordinator",
        }
    }
}

/// One process this machine runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Planned {
    /// Its role.
    pub role: Role,
    /// The host it listens on and is reached at.
    pub host: String,
    /// Its HTTP port (for etcd: the client port).
    pub port: u16,
    /// For etcd: the index of its member in [`Plan::etcd_members`].
    pub member: Option<usize>,
    /// Its directory under the data directory: role and port (`dbserver8530`).
    pub dir_name: String,
}

impl Planned {
    /// `http://host:port`.
    pub fn url(&self) -> String {
        format!("http://{}:{}", self.host, self.port)
    }

    /// `tcp://host:port`, as quince's options spell endpoints.
    pub fn endpoint(&self) -> String {
        format!("tcp://{}:{}", self.host, self.port)
    }
}

/// The whole cluster as this machine sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// Every etcd member of the cluster (also those of other machines), in order.
    pub etcd_members: Vec<EtcdMember>,
    /// The processes this machine runs: etcd members, then DB servers, then coordinators.
    pub processes: Vec<Planned>,
}

impl Plan {
    /// The processes of one role.
    pub fn of(&self, role: Role) -> impl Iterator<Item = &Planned> {
        self.processes.iter().filter(move |p| p.role == role)
    }
}

/// The ports of instance `i`: (coordinator, DB server, etcd client, etcd peer).
fn instance_ports(base: u16, i: u32) -> Result<(u16, u16, u16, u16), String> {
    let first = u32::from(base) + PORTS_PER_INSTANCE * i;
    let port = |offset: u32| {
        u16::try_from(first + offset)
            .map_err(|_| format!("--starter.port {base} leaves too few ports for the cluster"))
    };
    Ok((port(1)?, port(2)?, port(3)?, port(4)?))
}

/// The processes and etcd members of `layout`.
pub fn plan(layout: &Layout) -> Result<Plan, String> {
    let agency = usize::from(layout.agency_size);
    if agency == 0 || agency % 2 == 0 || agency > 9 {
        return Err(format!(
            "the agency size must be odd, from 1 to 9 (not {agency})"
        ));
    }
    match &layout.mode {
        Mode::Local {
            dbservers,
            coordinators,
        } => plan_local(
            layout.port,
            agency,
            usize::from(*dbservers),
            usize::from(*coordinators),
        ),
        Mode::Join { hosts, me } => plan_join(layout.port, agency, hosts, me),
    }
}

fn plan_local(
    base: u16,
    agency: usize,
    dbservers: usize,
    coordinators: usize,
) -> Result<Plan, String> {
    if dbservers == 0 || coordinators == 0 || dbservers > 64 || coordinators > 64 {
        return Err("local mode needs 1 to 64 DB servers and 1 to 64 coordinators".into());
    }
    let instances = agency.max(dbservers).max(coordinators);
    let mut etcd_members = Vec::new();
    let mut etcd = Vec::new();
    let mut dbs = Vec::new();
    let mut coords = Vec::new();
    for i in 0..instances {
        let (coordinator_port, dbserver_port, client_port, peer_port) =
            instance_ports(base, i as u32)?;
        if i < agency {
            etcd.push(Planned {
                role: Role::Etcd,
                host: LOCAL_HOST.into(),
                port: client_port,
                member: Some(etcd_members.len()),
                dir_name: format!("etcd{client_port}"),
            });
            etcd_members.push(EtcdMember {
                name: format!("etcd{client_port}"),
                host: LOCAL_HOST.into(),
                client_port,
                peer_port,
            });
        }
        if i < dbservers {
            dbs.push(quince(Role::DbServer, LOCAL_HOST, dbserver_port));
        }
        if i < coordinators {
            coords.push(quince(Role::Coordinator, LOCAL_HOST, coordinator_port));
        }
    }
    etcd.extend(dbs);
    etcd.extend(coords);
    Ok(Plan {
        etcd_members,
        processes: etcd,
    })
}

fn quince(role: Role, host: &str, port: u16) -> Planned {
    Planned {
        role,
        host: host.into(),
        port,
        member: None,
        dir_name: format!("{}{port}", role.as_str()),
    }
}

fn plan_join(base: u16, agency: usize, hosts: &[String], me: &str) -> Result<Plan, String> {
    let hosts = sorted_hosts(hosts)?;
    if hosts.len() < agency {
        return Err(format!(
            "--starter.join names {} machines, fewer than --cluster.agency-size {agency}",
            hosts.len()
        ));
    }
    if !hosts.iter().any(|h| h == me) {
        return Err(format!(
            "this machine's address {me} is not in --starter.join ({})",
            hosts.join(",")
        ));
    }
    let (coordinator_port, dbserver_port, client_port, peer_port) = instance_ports(base, 0)?;
    let etcd_members: Vec<EtcdMember> = hosts[..agency]
        .iter()
        .map(|host| EtcdMember {
            name: format!("etcd-{host}"),
            host: host.clone(),
            client_port,
            peer_port,
        })
        .collect();
    let mut processes = Vec::new();
    if let Some(index) = etcd_members.iter().position(|m| m.host == me) {
        processes.push(Planned {
            role: Role::Etcd,
            host: me.into(),
            port: client_port,
            member: Some(index),
            dir_name: format!("etcd{client_port}"),
        });
    }
    processes.push(quince(Role::DbServer, me, dbserver_port));
    processes.push(quince(Role::Coordinator, me, coordinator_port));
    Ok(Plan {
        etcd_members,
        processes,
    })
}

/// The join list as every machine sees it: split at commas, trimmed, sorted as text, without
/// duplicates. Hosts are names or IPv4 addresses (an optional `:port` is refused: every
/// machine uses the same ports).
pub fn sorted_hosts(list: &[String]) -> Result<Vec<String>, String> {
    let mut hosts: Vec<String> = list
        .iter()
        .flat_map(|item| item.split(','))
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .collect();
    hosts.sort();
    hosts.dedup();
    if hosts.is_empty() || hosts.len() > JOIN_HOSTS_MAX {
        return Err(format!(
            "--starter.join must name 1 to {JOIN_HOSTS_MAX} machines"
        ));
    }
    for host in &hosts {
        let ok = host.len() <= 253
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b));
        if !ok {
            return Err(format!(
                "'{host}' in --starter.join is not a host name or IPv4 address (no ports: every machine uses --starter.port's scheme)"
            ));
        }
    }
    Ok(hosts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn local(port: u16, agency: u16, dbservers: u16, coordinators: u16) -> Layout {
        Layout {
            mode: Mode::Local {
                dbservers,
                coordinators,
            },
            port,
            agency_size: agency,
        }
    }

    fn ports(plan: &Plan, role: Role) -> Vec<u16> {
        plan.of(role).map(|p| p.port).collect()
    }

    #[test]
    fn local_ports_follow_the_starter_scheme() {
        let plan = plan(&local(8528, 3, 3, 2)).unwrap();
        assert_eq!(ports(&plan, Role::Coordinator), vec![8529, 8534]);
        assert_eq!(ports(&plan, Role::DbServer), vec![8530, 8535, 8540]);
        assert_eq!(ports(&plan, Role::Etcd), vec![8531, 8536, 8541]);
        let peers: Vec<u16> = plan.etcd_members.iter().map(|m| m.peer_port).collect();
        assert_eq!(peers, vec![8532, 8537, 8542]);
        // Start order: etcd, DB servers, coordinators.
        let roles: Vec<Role> = plan.processes.iter().map(|p| p.role).collect();
        let mut sorted = roles.clone();
        sorted.sort();
        assert_eq!(roles, sorted);
        // Every port and directory is used once.
        let mut all: Vec<u16> = plan.processes.iter().map(|p| p.port).collect();
        all.extend(peers);
        let n = all.len();
        all.sort();
        all.dedup();
        assert_eq!(all.len(), n);
        assert_eq!(plan.processes[3].dir_name, "dbserver8530");
    }

    #[test]
    fn counts_beyond_the_agency_get_further_instances() {
        let plan = plan(&local(20000, 1, 2, 4)).unwrap();
        assert_eq!(ports(&plan, Role::Etcd), vec![20003]);
        assert_eq!(ports(&plan, Role::DbServer), vec![20002, 20007]);
        assert_eq!(
            ports(&plan, Role::Coordinator),
            vec![20001, 20006, 20011, 20016]
        );
    }

    #[test]
    fn bad_layouts_are_refused() {
        assert!(plan(&local(65530, 3, 3, 2)).is_err());
        assert!(plan(&local(8528, 2, 3, 2)).is_err());
        assert!(plan(&local(8528, 3, 0, 2)).is_err());
    }

    #[test]
    fn every_machine_of_a_join_computes_the_same_members() {
        let list = vec!["10.0.0.3,10.0.0.1".to_string(), "10.0.0.2".to_string()];
        let plans: Vec<Plan> = ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
            .iter()
            .map(|me| {
                plan(&Layout {
                    mode: Mode::Join {
                        hosts: list.clone(),
                        me: me.to_string(),
                    },
                    port: 8528,
                    agency_size: 3,
                })
                .unwrap()
            })
            .collect();
        assert!(plans
            .iter()
            .all(|p| p.etcd_members == plans[0].etcd_members));
        assert_eq!(plans[0].etcd_members[0].host, "10.0.0.1");
        assert_eq!(plans[0].etcd_members[0].client_port, 8531);
        for (i, p) in plans.iter().enumerate() {
            assert_eq!(p.processes.len(), 3);
            assert_eq!(p.processes[0].member, Some(i));
            assert_eq!(ports(p, Role::Coordinator), vec![8529]);
            assert_eq!(ports(p, Role::DbServer), vec![8530]);
        }
        // With one etcd member only the first host (as text) runs it.
        let one = plan(&Layout {
            mode: Mode::Join {
                hosts: list.clone(),
                me: "10.0.0.2".into(),
            },
            port: 8528,
            agency_size: 1,
        })
        .unwrap();
        assert_eq!(one.etcd_members.len(), 1);
        assert_eq!(one.processes.len(), 2);
    }

    #[test]
    fn bad_join_lists_are_refused() {
        let join = |hosts: &[&str], me: &str, agency: u16| {
            plan(&Layout {
                mode: Mode::Join {
                    hosts: hosts.iter().map(|h| h.to_string()).collect(),
                    me: me.into(),
                },
                port: 8528,
                agency_size: agency,
            })
        };
        assert!(join(&["a", "b"], "a", 3).is_err());
        assert!(join(&["a", "b", "c"], "d", 3).is_err());
        assert!(join(&["a:8528", "b", "c"], "b", 3).is_err());
        assert!(join(&[""], "a", 1).is_err());
        assert!(join(&["a", "b", "c"], "c", 3).is_ok());
    }
}
