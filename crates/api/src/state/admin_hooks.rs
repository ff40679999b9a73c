//! [`AdminHooks`]: what the `quince` binary lends the admin endpoints that the API cannot own.
//!
//! What it is: three small interfaces the binary implements and installs once, after
//! [`crate::Api::open`]: [`LogControl`] (the in-memory ring of recent log lines, the per-topic
//! log levels and the structured log parameters, all of which live with the binary's tracing
//! subscriber), [`SecretSource`] (re-reading the token secrets from
//! `--server.jwt-secret-keyfile` or `--server.jwt-secret-folder`), and [`ServerOptions`] (the
//! effective startup options and their descriptions, as plain JSON data).
//!
//! What it is not: logging, option parsing or file reading. The API crate sits below the
//! binary and cannot name its types; it sees only these traits and data.
//!
//! Invariants: each hook is installed at most once (a second install is refused); an endpoint
//! whose hook is missing answers an honest error (501/9), never invented data.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// One line of the in-memory log ring.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    /// Increasing from 1 in the order the lines were logged.
    pub id: u64,
    /// ArangoDB's topic name (`general`, `requests`, `queries`, …).
    pub topic: &'static str,
    /// ArangoDB's level: 1 fatal, 2 error, 3 warning, 4 info, 5 debug, 6 trace.
    pub level: u8,
    /// Unix time in milliseconds.
    pub unix_millis: u64,
    /// The message and its fields, as one line of text.
    pub message: String,
}

/// The log levels of ArangoDB's API, by number (as `upto` takes them: `fatal` is 0 there,
/// here 1).
pub const LOG_LEVEL_NAMES: [&str; 6] = ["FATAL", "ERROR", "WARNING", "INFO", "DEBUG", "TRACE"];

/// The logging of the running server.
pub trait LogControl: Send + Sync {
    /// The lines in the ring, oldest first.
    fn lines(&self) -> Vec<LogLine>;
    /// Every topic and its level (1 fatal … 6 trace), by topic name.
    fn levels(&self) -> Vec<(&'static str, u8)>;
    /// Sets `topic` (or `all`) to `level`; false for an unknown topic (ignored, as arangod
    /// ignores it).
    fn set_level(&self, topic: &str, level: u8) -> bool;
    /// Back to the levels the server started with.
    fn reset_levels(&self);
    /// The structured log parameters and whether each is on.
    fn structured(&self) -> Vec<(&'static str, bool)>;
    /// Turns a structured log parameter on or off; false for an unknown one.
    fn set_structured(&self, name: &str, on: bool) -> bool;
}

/// Where the token secrets come from.
pub trait SecretSource: Send + Sync {
    /// The secrets as the files hold them now (the first signs), or `None` when no keyfile or
    /// folder was configured; an error for a file that cannot be read.
    fn read(&self) -> Result<Option<Vec<Vec<u8>>>, String>;
}

/// The server's startup options, for `/_admin/options` and `/_admin/options-description`.
#[derive(Clone, Debug, Default)]
pub struct ServerOptions {
    /// Option name → effective value (secrets obfuscated).
    pub values: Value,
    /// Option name → its description.
    pub descriptions: Value,
}

/// What the binary installed.
#[derive(Default)]
pub struct AdminHooks {
    log: OnceLock<Arc<dyn LogControl>>,
    secrets: OnceLock<Arc<dyn SecretSource>>,
    options: OnceLock<ServerOptions>,
}

impl AdminHooks {
    /// Installs the log control; false when one was installed already.
    pub fn install_log(&self, log: Arc<dyn LogControl>) -> bool {
        self.log.set(log).is_ok()
    }

    /// Installs the secret source; false when one was installed already.
    pub fn install_secrets(&self, source: Arc<dyn SecretSource>) -> bool {
        self.secrets.set(source).is_ok()
    }

    /// Installs the options report; false when one was installed already.
    pub fn install_options(&self, options: ServerOptions) -> bool {
        self.options.set(options).is_ok()
    }

    /// The log control, if installed.
    pub fn log(&self) -> Option<&Arc<dyn LogControl>> {
        self.log.get()
    }

    /// The secret source, if installed.
    pub fn secrets(&self) -> Option<&Arc<dyn SecretSource>> {
        self.secrets.get()
    }

    /// The options report, if installed.
    pub fn options(&self) -> Option<&ServerOptions> {
        self.options.get()
    }
}
