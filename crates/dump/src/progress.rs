//! What the tools show while they run and print when they end.
//!
//! What it is: [`Progress`], one spinner per collection in work (documents and bytes so far)
//! when stderr is a terminal and nothing otherwise, and [`Totals`], the counts behind the
//! summary line both tools print at the end (collections, documents, bytes, seconds, failures).
//!
//! What it is not: the error report; failures are printed by the tools as they happen.
//!
//! Invariants: nothing is drawn unless stderr is a terminal and `--progress` is on; the counts
//! only grow.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

/// The progress display.
pub struct Progress {
    bars: Option<MultiProgress>,
}

/// One collection's line of the display.
pub struct Task {
    bar: Option<ProgressBar>,
    name: String,
}

impl Progress {
    /// A display, drawn only when `wanted` and stderr is a terminal.
    pub fn new(wanted: bool) -> Progress {
        let bars = (wanted && std::io::stderr().is_terminal()).then(MultiProgress::new);
        Progress { bars }
    }

    /// A line for a collection (`what` is "database/collection").
    pub fn task(&self, what: &str) -> Task {
        let bar = self.bars.as_ref().map(|bars| {
            let bar = bars.add(
                ProgressBar::new_spinner().with_style(
                    ProgressStyle::with_template("{spinner} {prefix}: {msg} ({elapsed})")
                        .expect("a valid template"),
                ),
            );
            bar.set_prefix(what.to_owned());
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Task {
            bar,
            name: what.to_owned(),
        }
    }
}

impl Task {
    /// Shows the counts so far.
    pub fn update(&self, documents: u64, bytes: u64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!(
                "{documents} documents, {}",
                indicatif::HumanBytes(bytes)
            ));
        }
    }

    /// The collection this line is about.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for Task {
    fn drop(&mut self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The counts of a run.
pub struct Totals {
    started: Instant,
    pub collections: AtomicU64,
    pub documents: AtomicU64,
    pub bytes: AtomicU64,
    pub failures: AtomicU64,
}

impl Totals {
    /// Counting from now.
    pub fn start() -> Totals {
        Totals {
            started: Instant::now(),
            collections: AtomicU64::new(0),
            documents: AtomicU64::new(0),
            bytes: AtomicU64::new(0),
            failures: AtomicU64::new(0),
        }
    }

    /// Adds a finished collection.
    pub fn add_collection(&self, documents: u64, bytes: u64) {
        self.collections.fetch_add(1, Ordering::Relaxed);
        self.documents.fetch_add(documents, Ordering::Relaxed);
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Counts a failure.
    pub fn fail(&self) {
        self.failures.fetch_add(1, Ordering::Relaxed);
    }

    /// True when nothing failed.
    pub fn succeeded(&self) -> bool {
        self.failures.load(Ordering::Relaxed) == 0
    }

    /// The summary: `VERB N collection(s), N documents, N bytes (HUMAN) in S s[, N failed]`.
    pub fn summary(&self, verb: &str) -> String {
        let bytes = self.bytes.load(Ordering::Relaxed);
        let failures = self.failures.load(Ordering::Relaxed);
        let mut line = format!(
            "{verb} {} collection(s), {} documents, {bytes} bytes ({}) in {:.2} s",
            self.collections.load(Ordering::Relaxed),
            self.documents.load(Ordering::Relaxed),
            indicatif::HumanBytes(bytes),
            self.started.elapsed().as_secs_f64()
        );
        if failures > 0 {
            line.push_str(&format!(", {failures} failed"));
        }
        line
    }
}
