//! `/_admin/log`, `/_admin/log/entries`, `/_admin/log/level` and `/_admin/log/structured`:
//! the server's recent log lines and its log settings, in ArangoDB 3.12's shapes.
//!
//! What it is: the handlers over the binary's [`LogControl`] (the in-memory ring, per-topic
//! levels, structured log parameters): the filters and paging of `upto`/`level`, `start`,
//! `size`, `offset`, `search` and `sort`; `GET`/`PUT`/`DELETE` of the levels (a JSON string sets
//! `general`, an object sets the topics it names, `all` every topic, unknown topics are
//! ignored; with `withAppenders=true` the levels are `{global, appenders: {"-": …}}`, stderr
//! being the one output); `GET`/`PUT` of the structured parameters.
//!
//! What it is not: logging itself (the binary's tracing subscriber does that and filters by the
//! levels set here).
//!
//! Invariants: only whom `--log.api-enabled` lets through get an answer (`true`, the default:
//! administrators, `rw` on `_system`; `jwt`: the superuser; `false`: nobody), anyone else
//! 403/11; without an installed log control every call is
//! 501/9; a bad `upto`/`level` is 400; a reply holds at most the ring's lines.

use http::Method;
use quince_errors::{ArangoError, HTTP_BAD_PARAMETER, NOT_IMPLEMENTED};
use serde_json::{json, Map, Value};

use crate::error::{method_not_allowed, unknown_path};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::admin_hooks::LOG_LEVEL_NAMES;
use crate::state::{Api, LogControl, LogLine};

/// Every request under `/_admin/log`.
pub(crate) fn handle(api: &Api, req: &ApiRequest) -> ApiResult {
    api.config().log_api.check(&req.user)?;
    let log = api.hooks().log().ok_or_else(|| {
        ArangoError::with_message(NOT_IMPLEMENTED, "this server keeps no log for the API")
    })?;
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::GET, []) => Ok(ApiResponse::json(200, &legacy(&select(&**log, req)?))),
        (&Method::GET, ["entries"]) => Ok(ApiResponse::json(200, &entries(&select(&**log, req)?))),
        (&Method::GET, ["level"]) => Ok(levels_reply(&**log, appenders(req))),
        (&Method::PUT, ["level"]) => {
            let body = req.required_json_body()?;
            match (appenders(req), body.get("global")) {
                // With appenders the `global` object holds the levels; Quince has one output.
                (true, Some(global)) => set_levels(&**log, global)?,
                _ => set_levels(&**log, &body)?,
            }
            Ok(levels_reply(&**log, appenders(req)))
        }
        (&Method::DELETE, ["level"]) => {
            log.reset_levels();
            Ok(levels_reply(&**log, false))
        }
        (&Method::GET, ["structured"]) => Ok(structured_reply(&**log)),
        (&Method::PUT, ["structured"]) => {
            let body = req.required_json_body()?;
            let Value::Object(params) = body else {
                return Err(bad("expecting a JSON object of parameters and booleans"));
            };
            for (name, on) in &params {
                if let Some(on) = on.as_bool() {
                    log.set_structured(name, on);
                }
            }
            Ok(structured_reply(&**log))
        }
        (_, [] | ["entries" | "level" | "structured"]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// The selected lines and how many matched before paging.
struct Selection {
    lines: Vec<LogLine>,
    total: usize,
}

/// Applies the query parameters to the ring.
fn select(log: &dyn LogControl, req: &ApiRequest) -> Result<Selection, ArangoError> {
    let level = req.param("level").map(parse_level).transpose()?;
    let upto = match req.param("upto") {
        Some(text) => parse_level(text)?,
        None => 4,
    };
    let start: u64 = number_param(req, "start")?.unwrap_or(0);
    let offset = number_param(req, "offset")?.unwrap_or(0) as usize;
    let size = number_param(req, "size")?.map(|n| n as usize);
    let search = req.param("search").filter(|s| !s.is_empty());
    let descending = match req.param("sort") {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => return Err(bad(&format!("sort must be asc or desc, not '{other}'"))),
    };
    let mut lines: Vec<LogLine> = log
        .lines()
        .into_iter()
        .filter(|line| match level {
            Some(level) => line.level == level,
            None => line.level <= upto,
        })
        .filter(|line| line.id >= start)
        .filter(|line| search.is_none_or(|s| line.message.contains(s)))
        .collect();
    if descending {
        lines.reverse();
    }
    let total = lines.len();
    let lines = lines
        .into_iter()
        .skip(offset)
        .take(size.unwrap_or(usize::MAX))
        .collect();
    Ok(Selection { lines, total })
}

/// `fatal`…`trace` or `0`…`5`, case-insensitively, as the internal 1…6.
fn parse_level(text: &str) -> Result<u8, ArangoError> {
    if let Ok(n) = text.trim().parse::<u8>() {
        if n <= 5 {
            return Ok(n + 1);
        }
    }
    level_by_name(text).ok_or_else(|| bad(&format!("unknown log level '{text}'")))
}

/// A level name (`warn` too) as the internal 1…6.
fn level_by_name(text: &str) -> Option<u8> {
    let upper = text.trim().to_ascii_uppercase();
    let upper = if upper == "WARN" {
        "WARNING".to_string()
    } else {
        upper
    };
    LOG_LEVEL_NAMES
        .iter()
        .position(|name| *name == upper)
        .map(|i| i as u8 + 1)
}

fn number_param(req: &ApiRequest, name: &str) -> Result<Option<u64>, ArangoError> {
    req.param(name)
        .map(|text| {
            text.trim()
                .parse::<u64>()
                .map_err(|_| bad(&format!("{name} must be a non-negative integer")))
        })
        .transpose()
}

fn bad(message: &str) -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, message.to_string())
}

fn level_name(level: u8) -> &'static str {
    LOG_LEVEL_NAMES[usize::from(level.clamp(1, 6) - 1)]
}

fn iso_date(unix_millis: u64) -> String {
    let time = std::time::UNIX_EPOCH + std::time::Duration::from_millis(unix_millis);
    quince_aql::service::registry::iso8601(time)
}

/// `/_admin/log/entries`: `{total, messages: [{id, topic, level, date, message}]}`.
fn entries(selection: &Selection) -> Value {
    let messages: Vec<Value> = selection
        .lines
        .iter()
        .map(|line| {
            json!({
                "id": line.id,
                "topic": line.topic,
                "level": level_name(line.level),
                "date": iso_date(line.unix_millis),
                "message": line.message,
            })
        })
        .collect();
    json!({"total": selection.total, "messages": messages})
}

/// `/_admin/log` (deprecated since 3.8): parallel arrays, levels as numbers 0…5.
fn legacy(selection: &Selection) -> Value {
    let lines = &selection.lines;
    json!({
        "totalAmount": selection.total,
        "lid": lines.iter().map(|l| l.id).collect::<Vec<_>>(),
        "topic": lines.iter().map(|l| l.topic).collect::<Vec<_>>(),
        "level": lines.iter().map(|l| l.level - 1).collect::<Vec<_>>(),
        "timestamp": lines.iter().map(|l| l.unix_millis / 1000).collect::<Vec<_>>(),
        "text": lines.iter().map(|l| l.message.as_str()).collect::<Vec<_>>(),
    })
}

/// `withAppenders=true`: the levels per output as well.
fn appenders(req: &ApiRequest) -> bool {
    req.bool_param("withAppenders", false)
}

/// Every topic's level; with appenders `{global, appenders: {"-": …}}` (stderr is Quince's
/// one output, and it has the global levels).
fn levels_reply(log: &dyn LogControl, with_appenders: bool) -> ApiResponse {
    let mut levels = Map::new();
    for (topic, level) in log.levels() {
        levels.insert(topic.to_string(), Value::from(level_name(level)));
    }
    let levels = Value::Object(levels);
    if with_appenders {
        return ApiResponse::json(
            200,
            &json!({"global": levels.clone(), "appenders": {"-": levels}}),
        );
    }
    ApiResponse::json(200, &levels)
}

/// A string sets `general`; an object sets the topics it names (`all`: every topic). Unknown
/// topics and levels are ignored, as arangod ignores them.
fn set_levels(log: &dyn LogControl, body: &Value) -> Result<(), ArangoError> {
    match body {
        Value::String(level) => {
            if let Some(level) = level_by_name(level) {
                log.set_level("general", level);
            }
        }
        Value::Object(topics) => {
            for (topic, level) in topics {
                if let Some(level) = level.as_str().and_then(level_by_name) {
                    log.set_level(topic, level);
                }
            }
        }
        _ => {
            return Err(bad(
                "expecting a log level or an object of topics and levels",
            ))
        }
    }
    Ok(())
}

fn structured_reply(log: &dyn LogControl) -> ApiResponse {
    let mut body = Map::new();
    for (name, on) in log.structured() {
        body.insert(name.to_string(), Value::Bool(on));
    }
    ApiResponse::json(200, &Value::Object(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name_and_number() {
        assert_eq!(parse_level("fatal").unwrap(), 1);
        assert_eq!(parse_level("0").unwrap(), 1);
        assert_eq!(parse_level("WARNING").unwrap(), 3);
        assert_eq!(parse_level("warn").unwrap(), 3);
        assert_eq!(parse_level("4").unwrap(), 5);
        assert_eq!(parse_level("trace").unwrap(), 6);
        assert!(parse_level("6").is_err());
        assert!(parse_level("loud").is_err());
    }
}
