//! [`RequestStats`]: the per-request counters, sharded so that the request path stays cheap.
//!
//! What it is: a flat array of counters (requests by method and status class, asynchronous
//! requests, four time histograms, two byte-size histograms and the request body size by
//! protocol) kept per thread (`super::shards`): each thread adds to its own copy with plain
//! relaxed loads and stores, so counting a reply takes no atomic read-modify-write and
//! concurrent requests on different threads never touch the same cache line.
//! [`RequestStats::snapshot`] sums the copies into a [`RequestSnapshot`] of plain numbers.
//!
//! The four time histograms (total, queue, request and I/O time) share one fine scale,
//! [`TIME_BOUNDS`], the union of Quince's latency buckets and ArangoDB's request-time cuts, so
//! that each can be rendered exactly at either set of bounds ([`Histogram::cumulative_at`]).
//!
//! What it is not: the rendering (`super::text`, `super::arangodb`) or the connection figures
//! (`super::connections`).
//!
//! Invariants: counters only grow; a reply adds to exactly one thread's copy; a histogram's count is
//! the sum of its buckets, so `+Inf` always equals `_count`; every bound of
//! [`QUINCE_LATENCY_BOUNDS`] and [`ARANGODB_REQUEST_TIME_CUTS`] is in [`TIME_BOUNDS`].

use std::time::Duration;

use http::{Method, Version};

use super::shards::ThreadCounters;

/// The methods counted separately; anything else is counted as `OTHER`.
pub(crate) const METHODS: [&str; 8] = [
    "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "OTHER",
];

/// Status classes `1xx` to `5xx`.
pub(crate) const STATUS_CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];

/// The bounds of `quince_http_request_duration_seconds`, in seconds.
pub(crate) const QUINCE_LATENCY_BOUNDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

/// ArangoDB's request-time cuts (total, request, queue and I/O time), in seconds.
pub(crate) const ARANGODB_REQUEST_TIME_CUTS: [f64; 9] =
    [0.01, 0.05, 0.1, 0.2, 0.5, 1.0, 5.0, 15.0, 30.0];

/// The fine scale every time histogram is kept on: the union of the two above.
pub(crate) const TIME_BOUNDS: [f64; 19] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0, 15.0, 30.0,
];

/// ArangoDB's cuts of bytes sent and received per request.
pub(crate) const BYTES_CUTS: [f64; 5] = [250.0, 1000.0, 2000.0, 5000.0, 10000.0];

/// The bounds of the request body size histograms, in bytes (powers of two, 128 to 64 KiB).
pub(crate) const BODY_SIZE_BOUNDS: [f64; 10] = [
    128.0, 256.0, 512.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0,
];

/// The time histograms, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TimeKind {
    /// From the request's arrival to its reply.
    Total = 0,
    /// The handler's own time.
    Request = 1,
    /// Waiting before the handler started (credentials, admission), less reading the body.
    Queue = 2,
    /// Reading the request body.
    Io = 3,
}

/// The byte histograms, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BytesKind {
    Sent = 0,
    Received = 1,
}

/// The protocols whose request bodies are measured apart, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Protocol {
    Http1 = 0,
    Http2 = 1,
}

const REQUESTS_AT: usize = 0;
const ASYNC_AT: usize = REQUESTS_AT + METHODS.len() * STATUS_CLASSES.len();
/// Per histogram: its buckets (the last one `+Inf`), then its sum.
const fn histogram_len(bounds: usize) -> usize {
    bounds + 2
}
const TIMES_AT: usize = ASYNC_AT + 1;
const TIME_LEN: usize = histogram_len(TIME_BOUNDS.len());
const BYTES_AT: usize = TIMES_AT + 4 * TIME_LEN;
const BYTES_LEN: usize = histogram_len(BYTES_CUTS.len());
const BODY_AT: usize = BYTES_AT + 2 * BYTES_LEN;
const BODY_LEN: usize = histogram_len(BODY_SIZE_BOUNDS.len());
const SLOTS: usize = BODY_AT + 2 * BODY_LEN;

/// Time sums are kept in nanoseconds (so a sub-microsecond body read still counts).
const NANOS: f64 = 1e9;

/// What one reply adds to the counters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RequestRecord<'a> {
    pub method: &'a Method,
    pub version: Version,
    pub status: u16,
    /// From arrival to reply.
    pub total: Duration,
    /// Before the handler started, including reading the body.
    pub before_handler: Duration,
    /// Reading the body.
    pub body_read: Duration,
    /// The request's head (in HTTP/1.1 form) and body.
    pub bytes_received: u64,
    /// The request's body alone.
    pub body_received: u64,
    /// The reply's head (as the API built it) and body.
    pub bytes_sent: u64,
    pub asynchronous: bool,
}

/// The per-request counters, kept per thread.
pub(crate) struct RequestStats {
    counters: ThreadCounters,
}

impl Default for RequestStats {
    fn default() -> Self {
        RequestStats {
            counters: ThreadCounters::new(SLOTS),
        }
    }
}

fn bucket_of(bounds: &[f64], value: f64) -> usize {
    bounds
        .iter()
        .position(|bound| value <= *bound)
        .unwrap_or(bounds.len())
}

impl RequestStats {
    /// Counts one reply.
    pub(crate) fn record(&self, r: &RequestRecord<'_>) {
        self.counters.with(|adder| Self::add(adder, r));
    }

    fn add(adder: &super::shards::Adder<'_>, r: &RequestRecord<'_>) {
        let add = |slot: usize, n: u64| adder.add(slot, n);
        let class = usize::from(r.status / 100).clamp(1, 5) - 1;
        add(
            REQUESTS_AT + method_index(r.method) * STATUS_CLASSES.len() + class,
            1,
        );
        if r.asynchronous {
            add(ASYNC_AT, 1);
        }
        let queue = r.before_handler.saturating_sub(r.body_read);
        let request = r.total.saturating_sub(r.before_handler);
        for (kind, time) in [
            (TimeKind::Total, r.total),
            (TimeKind::Request, request),
            (TimeKind::Queue, queue),
            (TimeKind::Io, r.body_read),
        ] {
            let at = TIMES_AT + kind as usize * TIME_LEN;
            add(at + bucket_of(&TIME_BOUNDS, time.as_secs_f64()), 1);
            let nanos = u64::try_from(time.as_nanos()).unwrap_or(u64::MAX);
            add(at + TIME_LEN - 1, nanos);
        }
        for (kind, bytes) in [
            (BytesKind::Sent, r.bytes_sent),
            (BytesKind::Received, r.bytes_received),
        ] {
            let at = BYTES_AT + kind as usize * BYTES_LEN;
            add(at + bucket_of(&BYTES_CUTS, bytes as f64), 1);
            add(at + BYTES_LEN - 1, bytes);
        }
        let protocol = match r.version {
            Version::HTTP_2 => Protocol::Http2,
            _ => Protocol::Http1,
        };
        let at = BODY_AT + protocol as usize * BODY_LEN;
        add(at + bucket_of(&BODY_SIZE_BOUNDS, r.body_received as f64), 1);
        add(at + BODY_LEN - 1, r.body_received);
    }

    /// The sums over every shard.
    pub(crate) fn snapshot(&self) -> RequestSnapshot {
        let sums = self.counters.sums();
        let mut requests = [[0u64; STATUS_CLASSES.len()]; METHODS.len()];
        for (m, row) in requests.iter_mut().enumerate() {
            for (c, cell) in row.iter_mut().enumerate() {
                *cell = sums[REQUESTS_AT + m * STATUS_CLASSES.len() + c];
            }
        }
        let histogram = |bounds: &'static [f64], at: usize, sum_scale: f64| {
            let len = histogram_len(bounds.len());
            Histogram {
                bounds,
                buckets: sums[at..at + len - 1].to_vec(),
                sum: sums[at + len - 1] as f64 / sum_scale,
            }
        };
        RequestSnapshot {
            requests,
            asynchronous: sums[ASYNC_AT],
            times: std::array::from_fn(|k| histogram(&TIME_BOUNDS, TIMES_AT + k * TIME_LEN, NANOS)),
            bytes: std::array::from_fn(|k| histogram(&BYTES_CUTS, BYTES_AT + k * BYTES_LEN, 1.0)),
            body_sizes: std::array::from_fn(|k| {
                histogram(&BODY_SIZE_BOUNDS, BODY_AT + k * BODY_LEN, 1.0)
            }),
        }
    }
}

fn method_index(method: &Method) -> usize {
    METHODS
        .iter()
        .position(|m| *m == method.as_str())
        .unwrap_or(METHODS.len() - 1)
}

/// A histogram's figures: its buckets (not cumulative; the last is `+Inf`) and its sum.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Histogram {
    pub bounds: &'static [f64],
    pub buckets: Vec<u64>,
    pub sum: f64,
}

impl Histogram {
    /// The number of observations.
    pub(crate) fn count(&self) -> u64 {
        self.buckets.iter().sum()
    }

    /// The observations at most `bound` (which must be one of `bounds`, or the count is an
    /// under-estimate).
    pub(crate) fn cumulative_at(&self, bound: f64) -> u64 {
        self.bounds
            .iter()
            .zip(&self.buckets)
            .take_while(|(b, _)| **b <= bound * (1.0 + 1e-12))
            .map(|(_, n)| n)
            .sum()
    }

    /// The counts between consecutive `cuts` (not cumulative; `cuts.len() + 1` of them), as
    /// `/_admin/statistics` reports a distribution.
    pub(crate) fn counts_between(&self, cuts: &[f64]) -> Vec<u64> {
        let mut counts = Vec::with_capacity(cuts.len() + 1);
        let mut below = 0;
        for cut in cuts {
            let at = self.cumulative_at(*cut);
            counts.push(at - below);
            below = at;
        }
        counts.push(self.count() - below);
        counts
    }
}

/// The summed request counters.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestSnapshot {
    /// By method (index into [`METHODS`]) and status class.
    pub requests: [[u64; STATUS_CLASSES.len()]; METHODS.len()],
    /// Requests run as asynchronous jobs.
    pub asynchronous: u64,
    /// By [`TimeKind`], in seconds.
    pub times: [Histogram; 4],
    /// By [`BytesKind`].
    pub bytes: [Histogram; 2],
    /// Request body sizes by [`Protocol`].
    pub body_sizes: [Histogram; 2],
}

impl RequestSnapshot {
    /// Requests of the method at `index` (into [`METHODS`]), every status.
    pub(crate) fn by_method(&self, index: usize) -> u64 {
        self.requests[index].iter().sum()
    }

    /// Every request.
    pub(crate) fn total(&self) -> u64 {
        (0..METHODS.len()).map(|m| self.by_method(m)).sum()
    }

    /// The time histogram of `kind`.
    pub(crate) fn time(&self, kind: TimeKind) -> &Histogram {
        &self.times[kind as usize]
    }

    /// The byte histogram of `kind`.
    pub(crate) fn bytes(&self, kind: BytesKind) -> &Histogram {
        &self.bytes[kind as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(stats: &RequestStats, method: Method, total_ms: u64, before_ms: u64, read_ms: u64) {
        stats.record(&RequestRecord {
            method: &method,
            version: Version::HTTP_11,
            status: 200,
            total: Duration::from_millis(total_ms),
            before_handler: Duration::from_millis(before_ms),
            body_read: Duration::from_millis(read_ms),
            bytes_received: 300,
            body_received: 100,
            bytes_sent: 20,
            asynchronous: false,
        });
    }

    #[test]
    fn every_coarse_bound_is_a_fine_bound() {
        for bound in QUINCE_LATENCY_BOUNDS
            .iter()
            .chain(&ARANGODB_REQUEST_TIME_CUTS)
        {
            assert!(TIME_BOUNDS.contains(bound), "{bound} missing");
        }
        assert!(TIME_BOUNDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn times_split_into_queue_io_and_request() {
        let stats = RequestStats::default();
        record(&stats, Method::PUT, 100, 30, 10);
        let s = stats.snapshot();
        assert_eq!(s.by_method(3), 1);
        assert!((s.time(TimeKind::Total).sum - 0.1).abs() < 1e-9);
        assert!((s.time(TimeKind::Request).sum - 0.07).abs() < 1e-9);
        assert!((s.time(TimeKind::Queue).sum - 0.02).abs() < 1e-9);
        assert!((s.time(TimeKind::Io).sum - 0.01).abs() < 1e-9);
        assert_eq!(
            s.bytes(BytesKind::Received).counts_between(&BYTES_CUTS),
            [0, 1, 0, 0, 0, 0]
        );
        assert_eq!(s.bytes(BytesKind::Sent).sum, 20.0);
    }

    #[test]
    fn shards_of_many_threads_add_up() {
        let stats = std::sync::Arc::new(RequestStats::default());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let stats = stats.clone();
                std::thread::spawn(move || {
                    for _ in 0..100 {
                        record(&stats, Method::GET, 3, 1, 0);
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let s = stats.snapshot();
        assert_eq!(s.total(), 800);
        let total = s.time(TimeKind::Total);
        assert_eq!(total.count(), 800);
        assert_eq!(total.cumulative_at(0.0025), 0);
        assert_eq!(total.cumulative_at(0.005), 800);
        assert_eq!(total.counts_between(&ARANGODB_REQUEST_TIME_CUTS)[0], 800);
    }
}
