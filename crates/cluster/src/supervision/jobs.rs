//! The record of what supervision did: a bounded list of finished jobs under
//! `Target/Finished/`, named as ArangoDB names its supervision jobs (`failedLeader`,
//! `failedFollower`, `addFollower`).
//!
//! What it is: [`FinishedJob`] and [`record`], which writes one job (fenced) and trims the
//! list to its bound, oldest first.
//!
//! What it is not: a job queue: Quince's supervision acts within one tick and only records
//! what it did; nothing reads these records to decide anything.
//!
//! Invariants: keys are `<ms since the Unix epoch, 13 digits>-<sequence>`, so key order is
//! time order; at most `max` records remain after each [`record`].

use quince_meta::{Compare, MetaError, MetaStore, Op, Txn};
use serde_json::json;

use crate::in_sync::ShardId;
use crate::layout::{encode, Layout, ServerId};
use crate::supervision::time::iso8601;

/// `Target/Finished/` under `layout`.
pub fn finished_prefix(layout: &Layout) -> String {
    format!("{}/Target/Finished/", layout.prefix())
}

/// One finished job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinishedJob {
    /// `failedLeader`, `failedFollower`, `addFollower` or `removeFollower`.
    pub kind: &'static str,
    /// The shard.
    pub shard: ShardId,
    /// The failed or removed server (absent for `addFollower`).
    pub server: Option<ServerId>,
    /// The server that took its place, or was added (absent for `removeFollower`).
    pub to_server: Option<ServerId>,
    /// The shard's epoch afterwards.
    pub epoch: u64,
    /// When (ms since the Unix epoch).
    pub time: u64,
}

/// Writes `job` as `Target/Finished/<time>-<sequence>` and removes the oldest records beyond
/// `max`; answers false when the fence no longer holds (nothing was written).
pub fn record(
    store: &dyn MetaStore,
    layout: &Layout,
    fence: Option<&Compare>,
    job: &FinishedJob,
    sequence: u64,
    creator: &str,
    max: usize,
) -> Result<bool, MetaError> {
    let prefix = finished_prefix(layout);
    let id = format!("{:013}-{sequence:06}", job.time);
    let value = json!({
        "jobId": id,
        "type": job.kind,
        "database": job.shard.db,
        "collection": job.shard.cid.to_string(),
        "shard": job.shard.shard,
        "fromServer": job.server,
        "toServer": job.to_server,
        "epoch": job.epoch,
        "timeFinished": iso8601(job.time),
        "creator": creator,
    });
    let fences: Vec<Compare> = fence.cloned().into_iter().collect();
    let written = store.txn(Txn::when(
        fences.clone(),
        vec![Op::put(format!("{prefix}{id}"), encode(&value))],
    ))?;
    if !written.succeeded {
        return Ok(false);
    }
    let entries = store.range(&prefix)?.entries;
    if entries.len() > max {
        let doomed = entries[..entries.len() - max]
            .iter()
            .map(|entry| Op::delete(entry.key.clone()))
            .collect();
        store.txn(Txn::when(fences, doomed))?;
    }
    Ok(true)
}
