//! Health judgement: from heartbeats to `GOOD`, `BAD` and `FAILED`.
//!
//! What it is: [`LastSeen`], when each registered server was last seen, and [`judge`], the
//! status that follows from it; [`health_record`] builds the `Supervision/Health/<id>` value
//! and [`needs_write`] says whether it differs from the stored one enough to be written.
//! A server is seen at a tick when its lease-bound heartbeat key `Sync/ServerStates/<id>`
//! exists (whatever its `started`: a restarted server is simply seen again).
//!
//! What it is not: the store reads and writes (the tick does them), or failover.
//!
//! Invariants:
//! - "last seen" is conservative: a server counts as alive up to the first tick that misses
//!   its heartbeat (it may have been alive until then), so a server is never judged missing
//!   for longer than it really was, only for up to one `frequency` less;
//! - the time a server was last seen survives a change of supervising coordinator: a health
//!   record is rewritten when the heartbeat disappears (`SyncStatus` `UNKNOWN`, with
//!   `LastAckedTime` that first tick that missed it), and a supervisor that knows nothing of a
//!   server takes that time from the record, unless the heartbeat events since the record
//!   show that the server came back meanwhile (while no supervisor was looking);
//! - when nobody recorded the disappearance (the record still says `SERVING`, or there is no
//!   record), the server counts as seen at the first tick that misses it: failover may come
//!   later than the grace period after a change of supervisor, never earlier;
//! - a server with a heartbeat is `GOOD`.

use std::collections::HashMap;
use std::time::Duration;

use crate::layout::{HealthRecord, ServerId, ServerRecord, Status};
use crate::supervision::time::{iso8601, parse_iso8601};

/// `SyncStatus` of a server whose heartbeat exists.
pub const SERVING: &str = "SERVING";
/// `SyncStatus` of a server whose heartbeat is gone.
pub const UNKNOWN: &str = "UNKNOWN";

/// When each server was last seen (milliseconds since the Unix epoch), as far as this
/// supervisor knows.
#[derive(Clone, Debug, Default)]
pub struct LastSeen {
    /// When last seen, and whether the last observation found the heartbeat.
    seen: HashMap<ServerId, (u64, bool)>,
}

impl LastSeen {
    /// Forgets everything: the next [`LastSeen::observe`] of each server starts again from the
    /// stored records (after a change of leadership, or a tick that could not read the store).
    pub fn forget(&mut self) {
        self.seen.clear();
    }

    /// Records what a tick at `now` saw of `id` and answers when it was last seen.
    /// `returned`: the heartbeat was written again after `stored` was (so the record's time
    /// says nothing about the current absence).
    pub fn observe(
        &mut self,
        id: &str,
        heartbeat_present: bool,
        stored: Option<&HealthRecord>,
        returned: bool,
        now: u64,
    ) -> u64 {
        if heartbeat_present {
            self.seen.insert(id.to_string(), (now, true));
            return now;
        }
        let seen = match self.seen.get(id) {
            // The first tick that misses it: it may have been alive until just now.
            Some(&(_, true)) => now,
            Some(&(seen, false)) => seen,
            None => stored
                .filter(|record| record.sync_status != SERVING && !returned)
                .and_then(|record| parse_iso8601(&record.last_acked_time))
                .map_or(now, |ms| ms.min(now)),
        };
        self.seen.insert(id.to_string(), (seen, false));
        seen
    }

    /// Whether nothing is known (a new supervisor, or one that forgot).
    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }

    /// Drops servers no longer registered.
    pub fn retain(&mut self, registered: &dyn Fn(&str) -> bool) {
        self.seen.retain(|id, _| registered(id));
    }
}

/// The status of a server last seen at `last_seen`, at `now` (both in ms).
pub fn judge(last_seen: u64, now: u64, ok_threshold: Duration, grace_period: Duration) -> Status {
    let missing = Duration::from_millis(now.saturating_sub(last_seen));
    if missing >= grace_period {
        Status::Failed
    } else if missing >= ok_threshold {
        Status::Bad
    } else {
        Status::Good
    }
}

/// The `Supervision/Health/<id>` value for `server`.
pub fn health_record(
    server: &ServerRecord,
    status: Status,
    heartbeat_present: bool,
    last_seen: u64,
) -> HealthRecord {
    HealthRecord {
        status,
        role: server.role.health_role().to_string(),
        endpoint: server.endpoint.clone(),
        short_name: server.short_name.clone(),
        sync_status: if heartbeat_present { SERVING } else { UNKNOWN }.to_string(),
        last_acked_time: iso8601(last_seen),
        version: server.version.clone(),
        engine: server.engine.clone(),
    }
}

/// Whether `next` must be written over `stored`: anything differs, except `LastAckedTime`
/// while both say the server is serving (a serving server's record is not rewritten every
/// tick).
pub fn needs_write(stored: Option<&HealthRecord>, next: &HealthRecord) -> bool {
    let Some(stored) = stored else {
        return true;
    };
    if stored.sync_status == SERVING && next.sync_status == SERVING {
        let mut same_time = next.clone();
        same_time.last_acked_time = stored.last_acked_time.clone();
        return *stored != same_time;
    }
    stored != next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Role;

    const OK: Duration = Duration::from_secs(5);
    const GRACE: Duration = Duration::from_secs(10);

    fn server() -> ServerRecord {
        ServerRecord {
            id: "PRMR-a".into(),
            role: Role::Dbserver,
            endpoint: "tcp://127.0.0.1:1".into(),
            short_name: "DBServer0001".into(),
            version: "3.12.4".into(),
            engine: "quince".into(),
        }
    }

    #[test]
    fn missing_heartbeats_make_a_server_bad_then_failed() {
        let t0 = 1_767_225_600_000;
        assert_eq!(judge(t0, t0, OK, GRACE), Status::Good);
        assert_eq!(judge(t0, t0 + 4_999, OK, GRACE), Status::Good);
        assert_eq!(judge(t0, t0 + 5_000, OK, GRACE), Status::Bad);
        assert_eq!(judge(t0, t0 + 9_999, OK, GRACE), Status::Bad);
        assert_eq!(judge(t0, t0 + 10_000, OK, GRACE), Status::Failed);
        assert_eq!(judge(t0 + 50, t0, OK, GRACE), Status::Good, "clock skew");
    }

    #[test]
    fn a_new_supervisor_takes_the_last_seen_time_from_the_record() {
        let t0 = 1_767_225_600_000;
        let mut first = LastSeen::default();
        assert_eq!(
            first.observe("PRMR-a", true, None, false, t0 - 1_000),
            t0 - 1_000
        );
        assert_eq!(
            first.observe("PRMR-a", false, None, false, t0),
            t0,
            "alive until missed"
        );
        assert_eq!(first.observe("PRMR-a", false, None, false, t0 + 1_000), t0);
        let gone = health_record(&server(), Status::Good, false, t0);
        assert_eq!(gone.sync_status, UNKNOWN);
        let mut second = LastSeen::default();
        assert_eq!(
            second.observe("PRMR-a", false, Some(&gone), false, t0 + 7_000),
            t0,
            "the recorded disappearance counts"
        );
        let serving = health_record(&server(), Status::Good, true, t0);
        let mut third = LastSeen::default();
        assert_eq!(
            third.observe("PRMR-a", false, Some(&serving), false, t0 + 7_000),
            t0 + 7_000,
            "an unrecorded disappearance counts from the first tick that misses it"
        );
        assert_eq!(
            third.observe("PRMR-a", true, Some(&gone), false, t0 + 8_000),
            t0 + 8_000
        );
        let mut fourth = LastSeen::default();
        assert_eq!(
            fourth.observe("PRMR-a", false, Some(&gone), true, t0 + 9_000),
            t0 + 9_000,
            "it came back after the record was written: the record's time says nothing"
        );
    }

    #[test]
    fn a_serving_record_is_rewritten_only_when_something_else_changes() {
        let t0 = 1_767_225_600_000;
        let stored = health_record(&server(), Status::Good, true, t0);
        assert!(!needs_write(
            Some(&stored),
            &health_record(&server(), Status::Good, true, t0 + 3_000)
        ));
        assert!(needs_write(
            Some(&stored),
            &health_record(&server(), Status::Good, false, t0 + 3_000)
        ));
        let gone = health_record(&server(), Status::Good, false, t0);
        assert!(!needs_write(
            Some(&gone),
            &health_record(&server(), Status::Good, false, t0)
        ));
        assert!(needs_write(
            Some(&gone),
            &health_record(&server(), Status::Bad, false, t0)
        ));
        assert!(needs_write(None, &gone));
    }
}
