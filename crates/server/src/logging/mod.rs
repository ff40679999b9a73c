//! The server's logging: ArangoDB's log topics over tracing, levels per topic that change at
//! runtime, an in-memory ring of recent lines, and the structured log parameters.
//!
//! What it is: [`init`], which installs the global tracing subscriber, and [`LogSettings`],
//! the state it shares with the API's `/_admin/log*` endpoints (it implements
//! [`quince_api::LogControl`]). Every event belongs to one topic, chosen by its tracing target
//! (`topics.rs`: the table `TOPIC_BY_TARGET`); a topic's level decides whether the event is
//! logged at all (a global filter, so a disabled event costs no formatting); a logged event
//! becomes one line, written to stderr and kept in a ring of the last `RING_LINES` (2 048)
//! lines.
//!
//! The mapping of Quince's code to ArangoDB's topics:
//!
//! | tracing target (prefix) | topic |
//! |---|---|
//! | `quince::tls`, `quince::ssl` | `ssl` |
//! | `quince::serve`, `quince::shutdown`, `quince::descriptors` | `startup` |
//! | `quince::listener`, `quince::connection`, `quince::governor`, `hyper` | `communication` |
//! | `quince_api::{auth, credentials, open_auth, token, user, admin::jwt}`, `quince_auth` | `authentication` |
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
//! Invariants: the ring holds at most `RING_LINES` lines and each line at most
//! `LINE_BYTES_MAX` (4 096) bytes; line ids increase by one per logged line from 1; after a
//! level changes, the callsite cache is rebuilt so the change takes effect for every event from
//! then on (and tracing's global maximum level never hides an event a topic wants).
//!
//! The parts: `topics.rs` (the topic table, levels, `--log.level`), `settings.rs` (the levels in
//! force, the ring, the structured parameters), `layer.rs` (the tracing layer that filters and
//! writes lines).

mod layer;
mod settings;
mod topics;

use std::sync::Arc;

use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use layer::TopicLayer;
pub use settings::LogSettings;
use topics::startup_levels;

/// Installs the global subscriber with the levels of `--log.level`; the settings go to the
/// API once it exists. An unknown level or topic is an error.
pub fn init(values: &[String]) -> Result<Arc<LogSettings>, String> {
    let settings = Arc::new(LogSettings::new(startup_levels(values)?, true));
    let _ = tracing_subscriber::registry()
        .with(TopicLayer::new(Arc::clone(&settings)))
        .try_init();
    Ok(settings)
}

#[cfg(test)]
mod tests {
    use super::layer::LINE_BYTES_MAX;
    use super::settings::{iso8601_millis, RING_LINES};
    use super::topics::{topic_index, topic_of, TOPICS, TOPIC_BY_TARGET};
    use super::*;
    use quince_api::LogControl;

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
