//! Supervision: failure detection and automatic failover, run by one coordinator at a time.
//!
//! What it is: the elected coordinator ([`runner`]) runs a [`Supervision::tick`] once per
//! `frequency`: it judges each registered server from its heartbeat ([`health`]), writes
//! `Supervision/Health/<id>` and `Target/FailedServers/<id>`, promotes an in-sync follower of
//! every shard whose leader is `FAILED` (`in_sync::promote`), and restores the replication
//! factor of shards whose followers stay failed ([`repair`]); it records what it did under
//! `Target/Finished/` ([`jobs`]). `Target/Maintenance` stops failover and repair, not health.
//! `docs/cluster.md` ("Failover") gives the timeline.
//!
//! What it is not: replication, or catching up (DB servers do both); the HTTP side
//! (`/_admin/cluster/health`, `/_admin/cluster/maintenance`).
//!
//! Invariants: every write is fenced by the supervision election; every Plan change is
//! guarded by the revision it was computed from; a server is declared `FAILED` only after
//! `grace_period` without a heartbeat as seen by the supervisors (never earlier, possibly
//! later after a change of supervisor or a store outage).

use std::time::Duration;

pub mod health;
pub mod jobs;
pub mod repair;
pub mod runner;
pub mod tick;
pub mod time;
pub mod view;

pub use runner::{SupervisionRunner, Supervisor};
pub use tick::{Supervision, TickError, TickReport};

/// The supervision's timing (ArangoDB's option names in brackets).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SupervisionConfig {
    /// How often the leading coordinator ticks (`--agency.supervision-frequency`, 1 s).
    pub frequency: Duration,
    /// No heartbeat this long: `BAD` (`--agency.supervision-ok-threshold`, 5 s).
    pub ok_threshold: Duration,
    /// No heartbeat this long: `FAILED`; its shards fail over
    /// (`--agency.supervision-grace-period`, 10 s).
    pub grace_period: Duration,
    /// How long a follower must have been `FAILED` before a spare DB server replaces it in
    /// the Plan (`None`: the grace period).
    pub repair_delay: Option<Duration>,
    /// The time to live of a coordinator's election lease: how long a supervisor that stopped
    /// stepping keeps the leadership (3 s).
    pub election_ttl: Duration,
    /// How many records `Target/Finished/` keeps (100).
    pub finished_max: usize,
    /// How long a supervisor that knows nothing (new, or after a gap) waits for the store's
    /// replay of heartbeat events since the health records (200 ms; the in-memory store
    /// replays at once, so simulations pass 0).
    pub history_wait: Duration,
}

impl Default for SupervisionConfig {
    fn default() -> Self {
        SupervisionConfig {
            frequency: Duration::from_secs(1),
            ok_threshold: Duration::from_secs(5),
            grace_period: Duration::from_secs(10),
            repair_delay: None,
            election_ttl: Duration::from_secs(3),
            finished_max: 100,
            history_wait: Duration::from_millis(200),
        }
    }
}
