//! Where a new collection's shards go: round-robin over the live DB servers.
//!
//! What it is: [`place`]: for shard `i` of a collection, the leader is the live DB server
//! `(start + i) mod n` (servers sorted by id) and the followers the next ones around the
//! ring, each on a distinct server; `start` varies by collection so that leaders spread.
//!
//! What it is not: the choice among healthy and unhealthy servers (callers pass the servers
//! whose heartbeat is present) or repair after failures (supervision).
//!
//! Invariants: every shard gets `min(copies, n)` distinct servers, its leader first; over a
//! collection's shards, leaders differ by at most one in count between servers.

use crate::layout::ServerId;

/// The servers of each of `shards` shards with `copies` copies each, over `servers` (sorted,
/// distinct, not empty), starting at `start`.
pub fn place(
    servers: &[ServerId],
    shards: usize,
    copies: usize,
    start: usize,
) -> Vec<Vec<ServerId>> {
    assert!(!servers.is_empty(), "placement needs at least one server");
    let n = servers.len();
    let copies = copies.clamp(1, n);
    (0..shards)
        .map(|shard| {
            (0..copies)
                .map(|copy| servers[(start + shard + copy) % n].clone())
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaders_spread_and_copies_are_distinct() {
        let servers: Vec<ServerId> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let placed = place(&servers, 6, 2, 1);
        let leaders: Vec<&str> = placed.iter().map(|s| s[0].as_str()).collect();
        assert_eq!(leaders, ["b", "c", "a", "b", "c", "a"]);
        for shard in &placed {
            assert_eq!(shard.len(), 2);
            assert_ne!(shard[0], shard[1]);
        }
        let capped = place(&servers, 1, 5, 0);
        assert_eq!(capped[0], servers, "never more copies than servers");
    }
}
