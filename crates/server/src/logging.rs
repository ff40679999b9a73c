//! The server's logging: ArangoDB's log topics over tracing, levels per topic that change at
//! runtime, an in-memory ring of recent lines, and the structured log parameters.
//!
//! What it is: [`init`], which installs the global tracing subscriber, and [`LogSettings`], the
//! state it shares with the API's `/_admin/log*` endpoints (it implements
//! [`quince_api::LogControl`]). Every event belongs to one topic, chosen by its tracing target
//! ([`topic_of`], the table [`TOPIC_BY_TARGET`]); a topic's level decides whether the event is
//! logged at all (a global filter, so a disabled event costs no formatting); a logged event
//! becomes one line, written to stderr and kept in a ring of the last [`RING_LINES`] lines.
//!
//! The mapping of Quince's code to ArangoDB's topics:
//!
//! | tracing target (prefix) | topic |
//! |---|---|
//! | `quince::tls`, `quince::ssl`, `rustls` | `ssl` |
//! | `quince::serve`, `quince::shutdown`, `quince::descriptors` | `startup` |
//! | `quince::listener`, `quince::connection`, `quince::governor`, `hyper` | `communication` |
//! | `quince_api::auth`, `quince_api::credentials`, `quince_api::open_auth`, `quince_api::token`, `quince_api::user`, `quince_api::admin::jwt`, `quince_auth` | `authentication` |
//! | `quince_api::permission` | `authorization` |
//! | `quince_api::query`, `quince_aql` | `queries` |
//! | `quince_api::transaction`, `quince_db::transaction` | `trx` |
//! | `quince_db::index::ttl` | `ttl` |
//! | `quince_api` (the rest: the pipeline, one debug line per request) | `requests` |
//! | `quince_db`, `quince_storage`, `quince_ops` | `engines` |
//! | anything else | `general` |
//!
//! The structured log parameters `database`, `username` and `url` decide whether the fields
//! of those names appear in the lines of the `requests` topic (off by default, as in arangod).
//!
//! What it is not: the HTTP side (`quince_api::admin::log`) or a log file (lines go to stderr;
//! redirecting it is the operator's choice).
//!
//! Invariants: the ring holds at most [`RING_LINES`] lines and each line at most
//! [`LINE_BYTES_MAX`] bytes; line ids increase by one per logged line from 1; after a level
//! changes, the callsite cache is rebuilt so the change takes effect for every event from then
//! on (and tracing's global maximum level never hides an event a topic wants).

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;
use quince_api::{LogControl, LogLine};
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// The most lines the ring keeps.
pub const RING_LINES: usize = 2048;

/// The longest line kept, in bytes (longer ones are cut at a character boundary).
pub const LINE_BYTES_MAX: usize = 4096;

/// The topics Quince logs to, in the order `/_admin/log/level` lists them.
pub const TOPICS: [&str; 11] = [
    "authentication",
    "authorization",
    "communication",
    "engines",
    "general",
    "queries",
    "requests",
    "ssl",
    "startup",
    "trx",
    "ttl",
];

/// Target prefixes and their topics; the first match wins (longer prefixes first).
pub const TOPIC_BY_TARGET: &[(&str, &str)] = &[
    ("quince::tls", "ssl"),
    ("quince::ssl", "ssl"),
    ("rustls", "ssl"),
    ("quince::serve", "startup"),
    ("quince::shutdown", "startup"),
    ("quince::descriptors", "startup"),
    ("quince::listener", "communication"),
    ("quince::connection", "communication"),
    ("quince::governor", "communication"),
    ("hyper", "communication"),
    ("quince_api::auth", "authentication"),
    ("quince_api::credentials", "authentication"),
    ("quince_api::open_auth", "authentication"),
    ("quince_api::token", "authentication"),
    ("quince_api::user", "authentication"),
    ("quince_api::admin::jwt", "authentication"),
    ("quince_auth", "authentication"),
    ("quince_api::permission", "authorization"),
    ("quince_api::query", "queries"),
    ("quince_aql", "queries"),
    ("quince_api::transaction", "trx"),
    ("quince_db::transaction", "trx"),
    ("quince_db::index::ttl", "ttl"),
    ("quince_api", "requests"),
    ("quince_db", "engines"),
    ("quince_storage", "engines"),
    ("quince_ops", "engines"),
];

/// The structured log parameters, in the order `/_admin/log/structured` lists them.
pub const STRUCTURED: [&str; 3] = ["database", "url", "username"];

/// ArangoDB's levels by number: 1 fatal, 2 error, 3 warning, 4 info, 5 debug, 6 trace.
const LEVEL_NAMES: [&str; 6] = ["FATAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"];

/// The topic of an event with tracing target `target`.
pub fn topic_of(target: &str) -> &'static str {
    TOPIC_BY_TARGET
        .iter()
        .find(|(prefix, _)| {
            target.starts_with(prefix)
                && matches!(target.as_bytes().get(prefix.len()), None | Some(b':'))
        })
        .map_or("general", |(_, topic)| topic)
}

fn topic_index(topic: &str) -> Option<usize> {
    TOPICS.iter().position(|t| *t == topic)
}

/// A tracing level as ArangoDB's number.
fn level_number(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 2,
        Level::WARN => 3,
        Level::INFO => 4,
        Level::DEBUG => 5,
        Level::TRACE => 6,
    }
}

/// `fatal`, `error`, `warning` (or `warn`), `info`, `debug`, `trace`, any case, as 1…6.
pub fn parse_level(text: &str) -> Option<u8> {
    let upper = text.trim().to_ascii_uppercase();
    let upper = if upper == "WARN" { "WARNING" } else { &upper };
    LEVEL_NAMES
        .iter()
        .position(|name| *name == upper)
        .map(|i| i as u8 + 1)
}

/// The levels `--log.level` asks for: each value (values may also be comma-separated) is a
/// level for every topic or `topic=level`; topic settings win over a plain level whatever
/// their order. An unknown topic or level is an error.
pub fn startup_levels(values: &[String]) -> Result<[u8; TOPICS.len()], String> {
    let mut levels = [4u8; TOPICS.len()];
    let items: Vec<&str> = values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    for item in items.iter().filter(|i| !i.contains('=')) {
        let level = parse_level(item).ok_or_else(|| format!("unknown log level '{item}'"))?;
        levels = [level; TOPICS.len()];
    }
    for item in items.iter().filter(|i| i.contains('=')) {
        let (topic, level) = item.split_once('=').expect("filtered on '='");
        let level = parse_level(level).ok_or_else(|| format!("unknown log level in '{item}'"))?;
        match topic.trim() {
            "all" => levels = [level; TOPICS.len()],
            topic => {
                let at = topic_index(topic).ok_or_else(|| {
                    format!("unknown log topic '{topic}' (known: {})", TOPICS.join(", "))
                })?;
                levels[at] = level;
            }
        }
    }
    Ok(levels)
}

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

    fn level_of(&self, topic: &str) -> u8 {
        topic_index(topic).map_or(4, |i| self.levels[i].load(Ordering::Relaxed))
    }

    fn structured_on(&self, name: &str) -> bool {
        STRUCTURED
            .iter()
            .position(|p| *p == name)
            .is_some_and(|i| self.structured[i].load(Ordering::Relaxed))
    }

    /// The most verbose level any topic has, as tracing's filter.
    fn max_level(&self) -> LevelFilter {
        match self.levels.iter().map(|l| l.load(Ordering::Relaxed)).max() {
            Some(6) => LevelFilter::TRACE,
            Some(5) => LevelFilter::DEBUG,
            Some(4) => LevelFilter::INFO,
            Some(3) => LevelFilter::WARN,
            Some(2) => LevelFilter::ERROR,
            _ => LevelFilter::OFF,
        }
    }

    fn push(&self, topic: &'static str, level: u8, message: String) {
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

/// The layer that filters by topic and turns events into lines.
pub struct TopicLayer {
    settings: Arc<LogSettings>,
}

impl TopicLayer {
    /// A layer over `settings`.
    pub fn new(settings: Arc<LogSettings>) -> TopicLayer {
        TopicLayer { settings }
    }
}

impl<S: Subscriber> Layer<S> for TopicLayer {
    fn register_callsite(&self, _metadata: &'static Metadata<'static>) -> Interest {
        // Levels change at runtime: ask `enabled` every time.
        Interest::sometimes()
    }

    fn enabled(&self, metadata: &Metadata<'_>, _ctx: Context<'_, S>) -> bool {
        level_number(metadata.level()) <= self.settings.level_of(topic_of(metadata.target()))
    }

    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(self.settings.max_level())
    }

    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let metadata = event.metadata();
        let topic = topic_of(metadata.target());
        let mut line = LineWriter {
            message: String::new(),
            fields: String::new(),
            settings: &self.settings,
            requests: topic == "requests",
        };
        event.record(&mut line);
        let mut text = line.message;
        if !line.fields.is_empty() {
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(line.fields.trim_start());
        }
        if text.len() > LINE_BYTES_MAX {
            let mut cut = LINE_BYTES_MAX;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
        }
        self.settings
            .push(topic, level_number(metadata.level()), text);
    }
}

/// Collects an event's message and fields into text.
struct LineWriter<'a> {
    message: String,
    fields: String,
    settings: &'a LogSettings,
    /// A line of the `requests` topic: its structured fields follow the parameters.
    requests: bool,
}

impl LineWriter<'_> {
    fn shown(&self, field: &Field) -> bool {
        !(self.requests
            && STRUCTURED.contains(&field.name())
            && !self.settings.structured_on(field.name()))
    }
}

impl Visit for LineWriter<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else if self.shown(field) {
            if value.is_empty() || value.contains(char::is_whitespace) {
                let _ = write!(self.fields, " {}={value:?}", field.name());
            } else {
                let _ = write!(self.fields, " {}={value}", field.name());
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else if self.shown(field) {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

/// Installs the global subscriber with the levels of `--log.level`; the settings go to the
/// API once it exists. An unknown level or topic is an error.
pub fn init(values: &[String]) -> Result<Arc<LogSettings>, String> {
    let settings = Arc::new(LogSettings::new(startup_levels(values)?, true));
    let _ = tracing_subscriber::registry()
        .with(TopicLayer::new(Arc::clone(&settings)))
        .try_init();
    Ok(settings)
}

/// `2026-11-25T16:05:01.123Z`.
fn iso8601_millis(unix_millis: u64) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `work` with a subscriber over fresh settings (ring only), returning the settings.
    fn with_settings(levels: &[&str], work: impl FnOnce(&Arc<LogSettings>)) -> Arc<LogSettings> {
        let values: Vec<String> = levels.iter().map(|s| s.to_string()).collect();
        let settings = Arc::new(LogSettings::new(startup_levels(&values).unwrap(), false));
        let subscriber =
            tracing_subscriber::registry().with(TopicLayer::new(Arc::clone(&settings)));
        tracing::subscriber::with_default(subscriber, || work(&settings));
        settings
    }

    fn messages(settings: &LogSettings, topic: &str, level: u8) -> Vec<String> {
        settings
            .lines()
            .into_iter()
            .filter(|l| l.topic == topic && l.level == level)
            .map(|l| l.message)
            .collect()
    }

    #[test]
    fn targets_map_to_topics() {
        assert_eq!(topic_of("quince_api::pipeline"), "requests");
        assert_eq!(topic_of("quince_api::state::api_calls"), "requests");
        assert_eq!(topic_of("quince_api::auth"), "authentication");
        assert_eq!(
            topic_of("quince_api::authx"),
            "requests",
            "whole segments only"
        );
        assert_eq!(topic_of("quince_aql::exec"), "queries");
        assert_eq!(topic_of("quince_db::maintenance"), "engines");
        assert_eq!(topic_of("quince_db::transaction::commit"), "trx");
        assert_eq!(topic_of("quince::serve"), "startup");
        assert_eq!(topic_of("quince::listener"), "communication");
        assert_eq!(topic_of("something_else"), "general");
        for (_, topic) in TOPIC_BY_TARGET {
            assert!(TOPICS.contains(topic), "{topic} is listed");
        }
    }

    #[test]
    fn startup_levels_take_plain_levels_and_topic_levels() {
        let levels = startup_levels(&["queries=debug,warning".into()]).unwrap();
        assert_eq!(levels[topic_index("queries").unwrap()], 5);
        assert_eq!(levels[topic_index("general").unwrap()], 3);
        assert_eq!(startup_levels(&[]).unwrap(), [4; TOPICS.len()]);
        assert!(startup_levels(&["loud".into()]).is_err());
        assert!(startup_levels(&["nosuchtopic=info".into()]).is_err());
    }

    #[test]
    fn raising_a_topic_to_debug_logs_its_debug_lines_and_lowering_it_stops_them() {
        let settings = with_settings(&["info"], |settings| {
            tracing::debug!(target: "quince_api::pipeline", event = "request", "first");
            settings.set_level("requests", 5);
            tracing::debug!(target: "quince_api::pipeline", event = "request", "second");
            // Another topic stays at info.
            tracing::debug!(target: "quince_aql::exec", "query detail");
            settings.set_level("requests", 4);
            tracing::debug!(target: "quince_api::pipeline", event = "request", "third");
            tracing::info!(target: "quince_api::pipeline", "still info");
        });
        assert_eq!(
            messages(&settings, "requests", 5),
            ["second event=request"],
            "only the line logged while the topic was at debug"
        );
        assert!(messages(&settings, "queries", 5).is_empty());
        assert_eq!(messages(&settings, "requests", 4), ["still info"]);
    }

    #[test]
    fn reset_returns_to_the_startup_levels() {
        let settings = with_settings(&["warning", "queries=debug"], |settings| {
            settings.set_level("all", 6);
            settings.reset_levels();
            tracing::info!(target: "quince_db::catalog", "not logged");
            tracing::debug!(target: "quince_aql::exec", "logged");
        });
        let lines = settings.lines();
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].topic, "queries");
        assert_eq!(lines[0].id, 1);
        assert_eq!(settings.levels()[topic_index("queries").unwrap()].1, 5);
        assert!(!settings.set_level("nosuchtopic", 5));
    }

    #[test]
    fn structured_parameters_show_request_fields() {
        let settings = with_settings(&["requests=debug"], |settings| {
            tracing::debug!(target: "quince_api::pipeline", database = "db1", url = "/_api/version", username = "root", "request");
            settings.set_structured("database", true);
            settings.set_structured("url", true);
            tracing::debug!(target: "quince_api::pipeline", database = "db2", url = "/_api/x", username = "root", "request");
        });
        assert_eq!(
            messages(&settings, "requests", 5),
            ["request", "request database=db2 url=/_api/x"]
        );
        assert!(!settings.set_structured("nosuch", true));
    }

    #[test]
    fn the_ring_is_bounded_and_long_lines_are_cut() {
        let settings = with_settings(&["info"], |_| {
            for i in 0..RING_LINES + 3 {
                tracing::info!(target: "quince_db::catalog", "line {i}");
            }
            tracing::info!(target: "quince_db::catalog", "{}", "x".repeat(2 * LINE_BYTES_MAX));
        });
        let lines = settings.lines();
        assert_eq!(lines.len(), RING_LINES);
        assert_eq!(lines[0].message, "line 4");
        assert_eq!(lines.last().unwrap().message.len(), LINE_BYTES_MAX);
        assert_eq!(lines.last().unwrap().id, RING_LINES as u64 + 4);
    }

    #[test]
    fn stamps_are_iso_8601_with_milliseconds() {
        assert_eq!(iso8601_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            iso8601_millis(1_764_088_386_123),
            "2025-11-25T16:33:06.123Z"
        );
    }
}
