//! ArangoDB's log topics and levels as Quince uses them: the topics it logs to, which tracing
//! target belongs to which topic, the level names and numbers, and the levels of `--log.level`.
//!
//! What it is not: filtering or writing (`layer.rs`) or the levels in force (`settings.rs`).
//!
//! Invariants: every topic in [`TOPIC_BY_TARGET`] is in [`TOPICS`]; a target matches a prefix
//! only at a path-segment boundary; levels are 1 (fatal) to 6 (trace).

use tracing::Level;

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
pub(super) const LEVEL_NAMES: [&str; 6] = ["FATAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"];

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

pub(super) fn topic_index(topic: &str) -> Option<usize> {
    TOPICS.iter().position(|t| *t == topic)
}

/// A tracing level as ArangoDB's number.
pub(super) fn level_number(level: &Level) -> u8 {
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
