//! [`Node`]: this process as a member of a cluster: its id, role and short name, its
//! registration, its heartbeat, and the cluster-wide id counter.
//!
//! What it is: [`Node::join`] registers the server in `Current/ServersRegistered/<id>`, gives
//! it a short name (`DBServer0001`, `Coordinator0002`: the next number of its role, once, kept
//! in `Target/MapUniqueToShortID/<id>`), and starts a thread that keeps a heartbeat key
//! (`Sync/ServerStates/<id>`) alive on a lease of `heartbeat_ttl`. Supervision reads the
//! heartbeats: a server whose key is gone is not alive. [`Node::allocate_ids`] hands out
//! blocks of cluster-wide ids (collections, shards, generated keys).
//!
//! What it is not: the role's work (coordinator, DB server, supervision modules), or the
//! choice of the id (the binary keeps it in the data directory, so a restarted server is the
//! same member).
//!
//! Invariants: the heartbeat thread renews the lease every third of its TTL; when the lease
//! is gone (the server was cut off longer than the TTL) it takes a new lease and writes the
//! key again, with the same `started` (a restart, not a reconnect, changes `started`);
//! [`Node::leave`] stops the thread and revokes the lease, so the key disappears at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};
use quince_meta::{Compare, MetaError, MetaStore, Op, Txn};

use crate::layout::{decode, encode, Heartbeat, Layout, Role, ServerId, ServerRecord, ShortName};

/// How often a transaction that lost a race is retried.
const RETRIES: usize = 64;

/// Everything a cluster member is configured with (the `--cluster.*` and `--agency.*`
/// options; `docs/cluster.md` lists them with their defaults).
#[derive(Clone, Debug)]
pub struct ClusterConfig {
    /// Coordinator or DB server.
    pub role: Role,
    /// `--cluster.my-address`: `tcp://host:port`, where peers and clients reach this server.
    pub my_address: String,
    /// The agency's key layout.
    pub layout: Layout,
    /// `--cluster.default-replication-factor`.
    pub default_replication_factor: u32,
    /// `--cluster.min-replication-factor`.
    pub min_replication_factor: u32,
    /// `--cluster.max-replication-factor`.
    pub max_replication_factor: u32,
    /// `--cluster.write-concern`: the default `writeConcern`.
    pub write_concern: u32,
    /// `--cluster.max-number-of-shards`.
    pub max_number_of_shards: u32,
    /// `--cluster.failed-write-concern-status-code`: 403 or 503 for 1429.
    pub failed_write_concern_status: u16,
    /// `--cluster.heartbeat-ttl`: the lease of the heartbeat key.
    pub heartbeat_ttl: Duration,
    /// `--cluster.follower-timeout`: a follower silent this long leaves the in-sync set.
    pub follower_timeout: Duration,
    /// `--agency.supervision-frequency`.
    pub supervision_frequency: Duration,
    /// `--agency.supervision-ok-threshold`.
    pub supervision_ok_threshold: Duration,
    /// `--agency.supervision-grace-period`.
    pub supervision_grace_period: Duration,
}

impl ClusterConfig {
    /// ArangoDB's defaults for `role` at `my_address`.
    pub fn new(role: Role, my_address: &str) -> ClusterConfig {
        ClusterConfig {
            role,
            my_address: my_address.to_string(),
            layout: Layout::default(),
            default_replication_factor: 1,
            min_replication_factor: 1,
            max_replication_factor: 10,
            write_concern: 1,
            max_number_of_shards: 1000,
            failed_write_concern_status: 403,
            heartbeat_ttl: Duration::from_secs(3),
            follower_timeout: Duration::from_secs(3),
            supervision_frequency: Duration::from_secs(1),
            supervision_ok_threshold: Duration::from_secs(5),
            supervision_grace_period: Duration::from_secs(10),
        }
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// This process as a cluster member (see the module documentation).
pub struct Node {
    /// The server's id.
    pub id: ServerId,
    /// `DBServer0001`.
    pub short_name: String,
    /// The configuration.
    pub config: ClusterConfig,
    /// The metadata store.
    pub store: Arc<dyn MetaStore>,
    /// When this process started (ms since the Unix epoch).
    pub started: u64,
    heartbeat: Mutex<Option<JoinHandle<()>>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    lease: Arc<Mutex<Option<i64>>>,
    left: AtomicBool,
}

impl Node {
    /// Registers this server and starts its heartbeat.
    pub fn join(
        store: Arc<dyn MetaStore>,
        config: ClusterConfig,
        id: ServerId,
        version: &str,
        engine: &str,
    ) -> Result<Arc<Node>, MetaError> {
        let layout = config.layout.clone();
        let short_name = short_name(&*store, &layout, config.role, &id)?;
        let record = ServerRecord {
            id: id.clone(),
            role: config.role,
            endpoint: config.my_address.clone(),
            short_name: short_name.clone(),
            version: version.to_string(),
            engine: engine.to_string(),
        };
        store.put(&layout.server_registered(&id), &encode(&record))?;
        let node = Arc::new(Node {
            id,
            short_name,
            config,
            store,
            started: unix_millis(),
            heartbeat: Mutex::new(None),
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            lease: Arc::new(Mutex::new(None)),
            left: AtomicBool::new(false),
        });
        node.beat()?;
        let weak = Arc::downgrade(&node);
        let stop = node.stop.clone();
        let period = node.config.heartbeat_ttl / 3;
        let thread = std::thread::Builder::new()
            .name("cluster-heartbeat".into())
            .spawn(move || loop {
                {
                    let (lock, wake) = &*stop;
                    let mut stopped = lock.lock();
                    if !*stopped {
                        wake.wait_for(&mut stopped, period);
                    }
                    if *stopped {
                        return;
                    }
                }
                let Some(node) = weak.upgrade() else { return };
                if let Err(error) = node.beat() {
                    tracing::warn!(event = "cluster.heartbeat_failed", "{error}");
                }
            })
            .expect("spawning the heartbeat thread");
        *node.heartbeat.lock() = Some(thread);
        Ok(node)
    }

    /// The agency layout.
    pub fn layout(&self) -> &Layout {
        &self.config.layout
    }

    /// The role.
    pub fn role(&self) -> Role {
        self.config.role
    }

    /// Renews the heartbeat lease, or takes a new one and writes the key when it is gone.
    fn beat(&self) -> Result<(), MetaError> {
        let mut lease = self.lease.lock();
        if let Some(id) = *lease {
            match self.store.keep_alive(id) {
                Ok(()) => return Ok(()),
                Err(MetaError::LeaseNotFound(_)) => *lease = None,
                Err(error) => return Err(error),
            }
        }
        let id = self.store.grant_lease(self.config.heartbeat_ttl)?;
        let heartbeat = Heartbeat {
            endpoint: self.config.my_address.clone(),
            role: self.config.role,
            started: self.started,
        };
        self.store.txn(Txn::when(
            Vec::new(),
            vec![Op::Put {
                key: self.layout().heartbeat(&self.id),
                value: encode(&heartbeat),
                lease: Some(id),
            }],
        ))?;
        *lease = Some(id);
        Ok(())
    }

    /// Hands out `count` consecutive cluster-wide ids (the first is answered).
    pub fn allocate_ids(&self, count: u64) -> Result<u64, MetaError> {
        allocate_ids(&*self.store, self.layout(), count)
    }

    /// Stops the heartbeat and revokes its lease (a clean shutdown): the heartbeat key goes at
    /// once. Idempotent.
    pub fn leave(&self) {
        if self.left.swap(true, Ordering::AcqRel) {
            return;
        }
        {
            let (lock, wake) = &*self.stop;
            *lock.lock() = true;
            wake.notify_all();
        }
        if let Some(thread) = self.heartbeat.lock().take() {
            let _ = thread.join();
        }
        if let Some(id) = self.lease.lock().take() {
            let _ = self.store.revoke_lease(id);
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let (lock, wake) = &*self.stop;
        *lock.lock() = true;
        wake.notify_all();
    }
}

/// Hands out `count` consecutive ids from `Sync/LatestID`; answers the first.
pub fn allocate_ids(store: &dyn MetaStore, layout: &Layout, count: u64) -> Result<u64, MetaError> {
    let key = layout.latest_id();
    for _ in 0..RETRIES {
        let entry = store.get(&key)?;
        let revision = entry.as_ref().map_or(0, |e| e.mod_revision);
        let latest: u64 = entry
            .as_ref()
            .and_then(|e| std::str::from_utf8(&e.value).ok()?.parse().ok())
            .unwrap_or(10_000);
        let next = latest + count;
        let outcome = store.txn(Txn::when(
            vec![Compare::ModRevision(key.clone(), revision)],
            vec![Op::put(key.clone(), next.to_string())],
        ))?;
        if outcome.succeeded {
            return Ok(latest + 1);
        }
    }
    Err(MetaError::Unavailable(
        "the id counter kept changing".into(),
    ))
}

/// The server's short name: kept from an earlier start, or the next of its role.
fn short_name(
    store: &dyn MetaStore,
    layout: &Layout,
    role: Role,
    id: &str,
) -> Result<String, MetaError> {
    let key = layout.short_name(id);
    let counter = layout.short_name_counter(role);
    for _ in 0..RETRIES {
        if let Some(known) = store.get(&key)?.and_then(|e| decode::<ShortName>(&e.value)) {
            return Ok(known.short_name);
        }
        let entry = store.get(&counter)?;
        let revision = entry.as_ref().map_or(0, |e| e.mod_revision);
        let number = entry
            .as_ref()
            .and_then(|e| std::str::from_utf8(&e.value).ok()?.parse::<u64>().ok())
            .unwrap_or(0)
            + 1;
        let name = ShortName {
            short_name: format!("{}{number:04}", role.health_role()),
            number,
        };
        let outcome = store.txn(Txn::when(
            vec![
                Compare::Absent(key.clone()),
                Compare::ModRevision(counter.clone(), revision),
            ],
            vec![
                Op::put(counter.clone(), number.to_string()),
                Op::put(key.clone(), encode(&name)),
            ],
        ))?;
        if outcome.succeeded {
            return Ok(name.short_name);
        }
    }
    Err(MetaError::Unavailable(
        "the short name counter kept changing".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quince_meta::{ManualClock, MemoryStore};

    #[test]
    fn members_get_short_names_per_role_and_keep_them() {
        let store: Arc<dyn MetaStore> = Arc::new(MemoryStore::default());
        let config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
        let a = Node::join(store.clone(), config.clone(), "PRMR-a".into(), "3.12", "q").unwrap();
        let b = Node::join(store.clone(), config.clone(), "PRMR-b".into(), "3.12", "q").unwrap();
        let c = Node::join(
            store.clone(),
            ClusterConfig::new(Role::Coordinator, "tcp://127.0.0.1:2"),
            "CRDN-c".into(),
            "3.12",
            "q",
        )
        .unwrap();
        assert_eq!(a.short_name, "DBServer0001");
        assert_eq!(b.short_name, "DBServer0002");
        assert_eq!(c.short_name, "Coordinator0001");
        a.leave();
        let again = Node::join(store.clone(), config, "PRMR-a".into(), "3.12", "q").unwrap();
        assert_eq!(again.short_name, "DBServer0001");
        for node in [&again, &b, &c] {
            node.leave();
        }
    }

    #[test]
    fn the_heartbeat_key_lives_with_the_lease_and_comes_back() {
        let clock = Arc::new(ManualClock::default());
        let memory = MemoryStore::new(clock.clone());
        let store: Arc<dyn MetaStore> = Arc::new(memory.clone());
        let mut config = ClusterConfig::new(Role::Dbserver, "tcp://127.0.0.1:1");
        config.heartbeat_ttl = Duration::from_secs(3600);
        let node = Node::join(store.clone(), config, "PRMR-a".into(), "3.12", "q").unwrap();
        let key = node.layout().heartbeat("PRMR-a");
        assert!(store.get(&key).unwrap().is_some());
        clock.advance(Duration::from_secs(3601));
        memory.expire_leases();
        assert!(store.get(&key).unwrap().is_none(), "expired with its lease");
        node.beat().unwrap();
        let beat: Heartbeat = decode(&store.get(&key).unwrap().unwrap().value).unwrap();
        assert_eq!(beat.started, node.started, "a reconnect is not a restart");
        node.leave();
        assert!(
            store.get(&key).unwrap().is_none(),
            "leaving revokes the lease"
        );
    }

    #[test]
    fn id_blocks_never_overlap() {
        let store = MemoryStore::default();
        let layout = Layout::default();
        let first = allocate_ids(&store, &layout, 10).unwrap();
        let second = allocate_ids(&store, &layout, 5).unwrap();
        assert_eq!(second, first + 10);
    }
}
