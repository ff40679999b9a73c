//! [`LogSettings`]: the levels in force per topic, the structured log parameters and the ring
//! of recent lines, shared by the tracing layer and the API's `/_admin/log*` endpoints (it
//! implements [`quince_api::LogControl`]).
//!
//! What it is not: deciding an event's topic (`topics.rs`) or turning events into text
//! (`layer.rs`).
//!
//! Invariants: at most [`RING_LINES`] lines are kept (the oldest go first); ids increase by one
//! per line from 1, in the order lines are written; a changed level rebuilds tracing's callsite
//! cache so it holds for the next event.

use std::collections::VecDeque;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use quince_api::{LogControl, LogLine};
use tracing::level_filters::LevelFilter;

use super::topics::{topic_index, LEVEL_NAMES, STRUCTURED, TOPICS};

/// The most lines the ring keeps.
pub const RING_LINES: usize = 2048;

/// What the logging layers and the admin endpoints share.
pub struct LogSettings {
    levels: [AtomicU8; TOPICS.len()],
    startup: [u8; TOPICS.len()],
    structured: [AtomicBool; STRUCTURED.len()],
    ring: Mutex<VecDeque<LogLine>>,
    next_id: AtomicU64,
    /// Whether lines also go to stderr (tests keep them in the ring only).
    to_stderr: bool,
}

impl LogSettings {
    /// Settings starting at `levels`.
    pub fn new(levels: [u8; TOPICS.len()], to_stderr: bool) -> LogSettings {
        LogSettings {
            levels: levels.map(AtomicU8::new),
            startup: levels,
            structured: [const { AtomicBool::new(false) }; STRUCTURED.len()],
            ring: Mutex::new(VecDeque::with_capacity(RING_LINES)),
            next_id: AtomicU64::new(1),
            to_stderr,
        }
    }

    pub(super) fn level_of(&self, topic: &str) -> u8 {
        topic_index(topic).map_or(4, |i| self.levels[i].load(Ordering::Relaxed))
    }

    pub(super) fn structured_on(&self, name: &str) -> bool {
        STRUCTURED
            .iter()
            .position(|p| *p == name)
            .is_some_and(|i| self.structured[i].load(Ordering::Relaxed))
    }

    /// The most verbose level any topic has, as tracing's filter.
    pub(super) fn max_level(&self) -> LevelFilter {
        match self.levels.iter().map(|l| l.load(Ordering::Relaxed)).max() {
            Some(6) => LevelFilter::TRACE,
            Some(5) => LevelFilter::DEBUG,
            Some(4) => LevelFilter::INFO,
            Some(3) => LevelFilter::WARN,
            Some(2) => LevelFilter::ERROR,
            _ => LevelFilter::OFF,
        }
    }

    pub(super) fn push(&self, topic: &'static str, level: u8, message: String) {
        let unix_millis = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let mut ring = self.ring.lock();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        if self.to_stderr {
            let name = LEVEL_NAMES[usize::from(level - 1)];
            let stamp = iso8601_millis(unix_millis);
            let _ = writeln!(
                std::io::stderr().lock(),
                "{stamp} {name} [{topic}] {message}"
            );
        }
        if ring.len() == RING_LINES {
            ring.pop_front();
        }
        ring.push_back(LogLine {
            id,
            topic,
            level,
            unix_millis,
            message,
        });
    }
}

impl LogControl for LogSettings {
    fn lines(&self) -> Vec<LogLine> {
        self.ring.lock().iter().cloned().collect()
    }

    fn levels(&self) -> Vec<(&'static str, u8)> {
        TOPICS
            .iter()
            .zip(&self.levels)
            .map(|(topic, level)| (*topic, level.load(Ordering::Relaxed)))
            .collect()
    }

    fn set_level(&self, topic: &str, level: u8) -> bool {
        let level = level.clamp(1, 6);
        let changed = if topic == "all" {
            self.levels
                .iter()
                .for_each(|l| l.store(level, Ordering::Relaxed));
            true
        } else if let Some(i) = topic_index(topic) {
            self.levels[i].store(level, Ordering::Relaxed);
            true
        } else {
            false
        };
        if changed {
            // Recomputes tracing's global maximum level and every callsite's interest.
            tracing::callsite::rebuild_interest_cache();
        }
        changed
    }

    fn reset_levels(&self) {
        for (level, startup) in self.levels.iter().zip(self.startup) {
            level.store(startup, Ordering::Relaxed);
        }
        tracing::callsite::rebuild_interest_cache();
    }

    fn structured(&self) -> Vec<(&'static str, bool)> {
        STRUCTURED
            .iter()
            .zip(&self.structured)
            .map(|(name, on)| (*name, on.load(Ordering::Relaxed)))
            .collect()
    }

    fn set_structured(&self, name: &str, on: bool) -> bool {
        match STRUCTURED.iter().position(|p| *p == name) {
            Some(i) => {
                self.structured[i].store(on, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }
}

/// `2026-11-25T16:05:01.123Z`.
pub(super) fn iso8601_millis(unix_millis: u64) -> String {
    let secs = unix_millis / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rem / 3600, rem % 3600 / 60, rem % 60);
    // Civil date from days since the epoch (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let mo = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(mo <= 2);
    let ms = unix_millis % 1000;
    format!("{y:04}-{mo:02}-{d:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z")
}
