//! Elections over leases: one leader at a time among the candidates of an election name.
//!
//! What it is: each candidate holds a key `<election>/<lease id>` bound to its own lease; the
//! leader is the candidate whose key has the lowest `create_revision`. [`try_lead`] enters a
//! candidate (once) and says whether it leads now; [`leader`] reads who leads. A
//! [`Leadership`] carries a fencing precondition: a transaction that includes
//! [`Leadership::fence`] applies only while that leadership still exists in the store.
//!
//! What it is not: a lock the leader may trust by itself. A leader whose lease expired while
//! it was paused or cut off still believes it leads; only the fence, checked by the store in
//! the same transaction as the change, makes its changes safe.
//!
//! Invariants: at most one candidate's key is the lowest at any revision; a key is written
//! once per lease, so its `mod_revision` identifies one leadership.

use crate::store::{Compare, Entry, LeaseId, MetaError, MetaStore, Op, Txn};

/// A won election.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leadership {
    /// The leader's candidate key.
    pub key: String,
    /// The revision that wrote it: unique to this leadership.
    pub revision: i64,
}

impl Leadership {
    /// The precondition that this leadership still holds.
    pub fn fence(&self) -> Compare {
        Compare::ModRevision(self.key.clone(), self.revision)
    }
}

fn candidate_key(election: &str, lease: LeaseId) -> String {
    format!("{election}/{lease:016x}")
}

/// The current leader's entry (its value is what the leader campaigned with).
pub fn leader(store: &dyn MetaStore, election: &str) -> Result<Option<Entry>, MetaError> {
    let snapshot = store.range(&format!("{election}/"))?;
    Ok(snapshot
        .entries
        .into_iter()
        .min_by_key(|entry| entry.create_revision))
}

/// Enters the election with `lease` (once: later calls find the key) and answers the
/// leadership when this candidate leads.
pub fn try_lead(
    store: &dyn MetaStore,
    election: &str,
    lease: LeaseId,
    value: &[u8],
) -> Result<Option<Leadership>, MetaError> {
    let key = candidate_key(election, lease);
    store.txn(Txn::when(
        vec![Compare::Absent(key.clone())],
        vec![Op::Put {
            key: key.clone(),
            value: value.to_vec(),
            lease: Some(lease),
        }],
    ))?;
    Ok(leader(store, election)?
        .filter(|entry| entry.key == key)
        .map(|entry| Leadership {
            key,
            revision: entry.mod_revision,
        }))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::{ManualClock, MemoryStore};

    #[test]
    fn the_first_candidate_leads_until_its_lease_ends() {
        let clock = Arc::new(ManualClock::default());
        let store = MemoryStore::new(clock.clone());
        let a = store.grant_lease(Duration::from_secs(3)).unwrap();
        let b = store.grant_lease(Duration::from_secs(30)).unwrap();
        let won = try_lead(&store, "/e", a, b"a").unwrap().expect("a leads");
        assert_eq!(try_lead(&store, "/e", b, b"b").unwrap(), None);
        assert_eq!(try_lead(&store, "/e", a, b"a").unwrap(), Some(won.clone()));
        let fenced = store
            .txn(Txn::when(vec![won.fence()], vec![Op::put("/x", "by a")]))
            .unwrap();
        assert!(fenced.succeeded);
        clock.advance(Duration::from_secs(4));
        let b_won = try_lead(&store, "/e", b, b"b").unwrap().expect("b leads");
        assert_eq!(leader(&store, "/e").unwrap().unwrap().value, b"b");
        let stale = store
            .txn(Txn::when(vec![won.fence()], vec![Op::put("/x", "late a")]))
            .unwrap();
        assert!(!stale.succeeded, "a's fence fails once its lease ended");
        assert_ne!(b_won.revision, won.revision);
    }
}
