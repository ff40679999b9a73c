//! [`TopicLayer`]: the tracing layer that lets through only the events their topic's level
//! allows, and turns each into one line (message, then `key=value` fields) for
//! [`LogSettings`].
//!
//! What it is not: the levels (`settings.rs`) or the topic table (`topics.rs`).
//!
//! Invariants: callsites are always re-asked (`Interest::sometimes`), so a level change holds
//! for every event after it; a line is at most [`LINE_BYTES_MAX`] bytes; in the `requests`
//! topic the fields `database`, `url` and `username` appear only while their structured
//! parameter is on.

use std::fmt::Write as _;
use std::sync::Arc;

use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::layer::{Context, Layer};

use super::settings::LogSettings;
use super::topics::{level_number, topic_of, STRUCTURED};

/// The longest line kept, in bytes (longer ones are cut at a character boundary).
pub const LINE_BYTES_MAX: usize = 4096;

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
