//! Latency recording: one HdrHistogram per benchmark thread, merged at the end.
//!
//! What it is: [`Latencies`], a histogram of nanosecond samples with 3 significant digits from
//! 1 ns to one hour, plus the exact sum, minimum and maximum; [`Summary`], the figures the
//! report prints (median, p95, p99, p99.9, p99.99, max, mean) in milliseconds.
//!
//! What it is not: arangobench's linear per-thread buckets. HdrHistograms are log-linear, so
//! every percentile has the same relative precision however the samples spread, and they
//! merge exactly, so percentiles are over every sample of every thread.
//!
//! Invariants: a sample above one hour is recorded as one hour (saturated, and counted in
//! `saturated`); merging keeps count, sum, minimum and maximum exact.

use std::time::Duration;

use hdrhistogram::Histogram;

/// The largest sample the histogram can hold, in nanoseconds (one hour).
pub const SAMPLE_MAX_NS: u64 = 3_600 * 1_000_000_000;

/// Samples of one thread, or of several merged.
#[derive(Clone)]
pub struct Latencies {
    histogram: Histogram<u64>,
    sum_ns: u128,
    min_ns: u64,
    max_ns: u64,
    /// How many samples were above [`SAMPLE_MAX_NS`] and recorded as that value.
    pub saturated: u64,
}

impl Default for Latencies {
    fn default() -> Self {
        Latencies::new()
    }
}

impl Latencies {
    /// An empty recorder.
    pub fn new() -> Latencies {
        let histogram = Histogram::new_with_bounds(1, SAMPLE_MAX_NS, 3)
            .expect("constant bounds are valid for an HdrHistogram");
        Latencies {
            histogram,
            sum_ns: 0,
            min_ns: u64::MAX,
            max_ns: 0,
            saturated: 0,
        }
    }

    /// Records one sample.
    pub fn record(&mut self, sample: Duration) {
        let ns = u64::try_from(sample.as_nanos()).unwrap_or(u64::MAX).max(1);
        let clamped = ns.min(SAMPLE_MAX_NS);
        if clamped != ns {
            self.saturated += 1;
        }
        self.histogram
            .record(clamped)
            .expect("a clamped sample is within the histogram's bounds");
        self.sum_ns += u128::from(ns);
        self.min_ns = self.min_ns.min(ns);
        self.max_ns = self.max_ns.max(ns);
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &Latencies) {
        self.histogram
            .add(&other.histogram)
            .expect("histograms with the same bounds merge");
        self.sum_ns += other.sum_ns;
        self.min_ns = self.min_ns.min(other.min_ns);
        self.max_ns = self.max_ns.max(other.max_ns);
        self.saturated += other.saturated;
    }

    /// How many samples were recorded.
    pub fn count(&self) -> u64 {
        self.histogram.len()
    }

    /// The sum of all samples (exact, not from the histogram).
    pub fn total(&self) -> Duration {
        Duration::from_nanos(u64::try_from(self.sum_ns).unwrap_or(u64::MAX))
    }

    /// The sample at `quantile` (0.0 ..= 1.0), in nanoseconds; 0 without samples.
    pub fn quantile_ns(&self, quantile: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.histogram.value_at_quantile(quantile)
    }

    /// The report's figures.
    pub fn summary(&self) -> Summary {
        let count = self.count();
        let ms = |ns: u64| ns as f64 / 1e6;
        if count == 0 {
            return Summary::default();
        }
        Summary {
            count,
            min_ms: ms(self.min_ns),
            mean_ms: self.sum_ns as f64 / count as f64 / 1e6,
            p50_ms: ms(self.quantile_ns(0.50)),
            p95_ms: ms(self.quantile_ns(0.95)),
            p99_ms: ms(self.quantile_ns(0.99)),
            p999_ms: ms(self.quantile_ns(0.999)),
            p9999_ms: ms(self.quantile_ns(0.9999)),
            max_ms: ms(self.max_ns),
        }
    }
}

/// Latency figures in milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// Samples.
    pub count: u64,
    /// Smallest sample.
    pub min_ms: f64,
    /// Mean.
    pub mean_ms: f64,
    /// Median.
    pub p50_ms: f64,
    /// 95th percentile.
    pub p95_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    #[serde(rename = "p99_9Ms")]
    pub p999_ms: f64,
    /// 99.99th percentile.
    #[serde(rename = "p99_99Ms")]
    pub p9999_ms: f64,
    /// Largest sample (exact).
    pub max_ms: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_gives_percentiles_over_all_samples() {
        let mut fast = Latencies::new();
        let mut slow = Latencies::new();
        for i in 1..=900u64 {
            fast.record(Duration::from_micros(i));
        }
        for i in 1..=100u64 {
            slow.record(Duration::from_millis(100 + i));
        }
        let mut all = Latencies::new();
        all.merge(&fast);
        all.merge(&slow);
        assert_eq!(all.count(), 1000);
        let s = all.summary();
        // The median lies among the fast samples, p95 among the slow ones: a per-thread view
        // would show either only fast or only slow figures.
        assert!((s.p50_ms - 0.5).abs() < 0.01, "{s:?}");
        assert!((s.p95_ms - 150.0).abs() < 1.0, "{s:?}");
        assert!((s.max_ms - 200.0).abs() < 1e-9, "{s:?}");
        assert!((s.min_ms - 0.001).abs() < 1e-9, "{s:?}");
        let sum_ms = (1..=900u64).sum::<u64>() as f64 / 1000.0
            + (1..=100u64).map(|i| 100.0 + i as f64).sum::<f64>();
        assert!((s.mean_ms * 1000.0 - sum_ms).abs() < 1e-6);
        assert_eq!(all.total(), fast.total() + slow.total());
    }

    #[test]
    fn huge_samples_saturate_and_empty_summaries_are_zero() {
        let mut l = Latencies::new();
        assert_eq!(l.summary(), Summary::default());
        l.record(Duration::from_secs(7200));
        assert_eq!(l.saturated, 1);
        // The histogram holds one hour, within its 0.1% precision.
        let held_s = l.quantile_ns(1.0) as f64 / 1e9;
        assert!((held_s - 3600.0).abs() <= 3.6, "{held_s}");
        assert!((l.summary().max_ms - 7_200_000.0).abs() < 1e-6);
    }
}
