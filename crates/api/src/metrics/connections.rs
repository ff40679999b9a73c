//! [`ClientConnections`]: the open client connections and how long closed ones lasted.
//!
//! What it is: a gauge of open connections and a histogram of connection lifetimes
//! (ArangoDB's cuts: 0.1 s, 1 s, 60 s), kept by the API and moved by the listener: it calls
//! [`crate::Api::connection_opened`] for every accepted connection and keeps the returned
//! [`OpenConnection`] for as long as the connection lives.
//!
//! What it is not: the connection bound or the governor (the `quince` binary owns both).
//!
//! Invariants: the gauge is the number of [`OpenConnection`]s alive; a lifetime is recorded
//! exactly once, when its guard drops.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use super::requests::Histogram;

/// ArangoDB's cuts of connection lifetimes, in seconds.
pub(crate) const CONNECTION_TIME_CUTS: [f64; 3] = [0.1, 1.0, 60.0];

/// The open connections and the lifetimes of closed ones.
#[derive(Default)]
pub struct ClientConnections {
    open: AtomicU64,
    lifetimes: [AtomicU64; CONNECTION_TIME_CUTS.len() + 1],
    lifetime_micros: AtomicU64,
}

/// One open connection: dropping it counts the connection closed.
pub struct OpenConnection {
    stats: Arc<ClientConnections>,
    opened: Instant,
}

impl ClientConnections {
    /// Counts a connection opened; the guard counts it closed.
    pub(crate) fn opened(self: &Arc<Self>) -> OpenConnection {
        self.open.fetch_add(1, Ordering::Relaxed);
        OpenConnection {
            stats: Arc::clone(self),
            opened: Instant::now(),
        }
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// The lifetimes of closed connections, in seconds.
    pub(crate) fn lifetimes(&self) -> Histogram {
        Histogram {
            bounds: &CONNECTION_TIME_CUTS,
            buckets: self
                .lifetimes
                .iter()
                .map(|b| b.load(Ordering::Relaxed))
                .collect(),
            sum: self.lifetime_micros.load(Ordering::Relaxed) as f64 / 1e6,
        }
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        let lived = self.opened.elapsed();
        let secs = lived.as_secs_f64();
        let bucket = CONNECTION_TIME_CUTS
            .iter()
            .position(|cut| secs <= *cut)
            .unwrap_or(CONNECTION_TIME_CUTS.len());
        let stats = &self.stats;
        stats.lifetimes[bucket].fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(lived.as_micros()).unwrap_or(u64::MAX);
        stats.lifetime_micros.fetch_add(micros, Ordering::Relaxed);
        stats.open.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_move_the_gauge_and_record_lifetimes() {
        let stats = Arc::new(ClientConnections::default());
        let a = stats.opened();
        let b = stats.opened();
        assert_eq!(stats.open(), 2);
        drop(a);
        assert_eq!(stats.open(), 1);
        assert_eq!(stats.lifetimes().count(), 1);
        assert_eq!(stats.lifetimes().cumulative_at(0.1), 1);
        drop(b);
        assert_eq!(stats.open(), 0);
        assert_eq!(stats.lifetimes().count(), 2);
    }
}
