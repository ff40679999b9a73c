//! [`Progress`]: how far an import is, counted in documents the server acknowledged.
//!
//! What it is: a counter of documents whose batch the server answered (whatever it said about
//! each document), moved by the senders after each reply, and shown either as a progress bar
//! (on a terminal: documents acknowledged, their rate, and how much of the input was read) or
//! as lines on stderr (`quince import: progress: N documents acknowledged`), at most one per
//! interval, for logs and pipes.
//!
//! What it is not: the summary (`report`), or the count of documents read or sent: a batch
//! still in flight is not progress.
//!
//! Invariants: the count only grows, by exactly the documents of each answered batch, so after
//! the last reply it equals the documents the server answered for; a line is written only when
//! the count moved.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where progress goes.
enum Display {
    /// Nowhere (`--progress false`).
    Hidden,
    /// A progress bar on a terminal.
    Bar(indicatif::ProgressBar),
    /// Lines, at most one per `interval`.
    Lines {
        out: Mutex<LineState>,
        interval: Duration,
    },
}

struct LineState {
    sink: Box<dyn Write + Send>,
    last: Option<Instant>,
    shown: u64,
}

/// The progress of one import.
pub struct Progress {
    acknowledged: AtomicU64,
    display: Display,
}

impl Progress {
    /// No display; the count is still kept.
    pub fn hidden() -> Progress {
        Progress::with(Display::Hidden)
    }

    /// A progress bar (on a terminal); `input_size` is the input's size when known.
    pub fn bar(input_size: Option<u64>) -> Progress {
        let bar = indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} {pos} documents acknowledged ({per_sec}) {msg}",
            )
            .expect("a valid template"),
        );
        if let Some(size) = input_size {
            bar.set_message(format!("of {}", indicatif::HumanBytes(size)));
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        Progress::with(Display::Bar(bar))
    }

    /// Lines written to `sink`, at most one per `interval`.
    pub fn lines(sink: Box<dyn Write + Send>, interval: Duration) -> Progress {
        Progress::with(Display::Lines {
            out: Mutex::new(LineState {
                sink,
                last: None,
                shown: 0,
            }),
            interval,
        })
    }

    fn with(display: Display) -> Progress {
        Progress {
            acknowledged: AtomicU64::new(0),
            display,
        }
    }

    /// Counts the `documents` of a batch the server answered.
    pub fn acknowledged(&self, documents: u64) {
        let total = self.acknowledged.fetch_add(documents, Ordering::Relaxed) + documents;
        match &self.display {
            Display::Hidden => {}
            Display::Bar(bar) => bar.set_position(total),
            Display::Lines { out, interval } => {
                let mut state = out.lock().expect("progress lock");
                let due = state.last.is_none_or(|at| at.elapsed() >= *interval);
                // Replies arrive out of order; the newest total is what the line shows.
                let total = self.acknowledged.load(Ordering::Relaxed);
                if due && total > state.shown {
                    let _ = writeln!(
                        state.sink,
                        "quince import: progress: {total} documents acknowledged"
                    );
                    let _ = state.sink.flush();
                    state.last = Some(Instant::now());
                    state.shown = total;
                }
            }
        }
    }

    /// Shows how many input bytes were read (the bar only).
    pub fn read(&self, bytes: u64, input_size: Option<u64>) {
        if let Display::Bar(bar) = &self.display {
            let read = indicatif::HumanBytes(bytes);
            match input_size {
                Some(size) => {
                    bar.set_message(format!("read {read} of {}", indicatif::HumanBytes(size)))
                }
                None => bar.set_message(format!("read {read}")),
            }
        }
    }

    /// The documents acknowledged so far.
    pub fn count(&self) -> u64 {
        self.acknowledged.load(Ordering::Relaxed)
    }

    /// Clears the bar (lines stay).
    pub fn finish(&self) {
        if let Display::Bar(bar) = &self.display {
            bar.finish_and_clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A sink the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn lines_count_acknowledged_documents() {
        let sink = Shared::default();
        let progress = Progress::lines(Box::new(sink.clone()), Duration::ZERO);
        assert_eq!(progress.count(), 0);
        progress.acknowledged(3);
        progress.acknowledged(0);
        progress.acknowledged(2);
        assert_eq!(progress.count(), 5);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(
            text,
            "quince import: progress: 3 documents acknowledged\n\
             quince import: progress: 5 documents acknowledged\n"
        );
    }

    #[test]
    fn lines_are_at_most_one_per_interval() {
        let sink = Shared::default();
        let progress = Progress::lines(Box::new(sink.clone()), Duration::from_secs(3600));
        for _ in 0..10 {
            progress.acknowledged(1);
        }
        assert_eq!(progress.count(), 10);
        let text = String::from_utf8(sink.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text, "quince import: progress: 1 documents acknowledged\n");
    }

    #[test]
    fn a_hidden_progress_still_counts() {
        let progress = Progress::hidden();
        progress.acknowledged(7);
        assert_eq!(progress.count(), 7);
    }
}
