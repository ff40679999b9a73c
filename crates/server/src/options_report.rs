//! The report behind `/_admin/options` and `/_admin/options-description`: every option of
//! `quince serve` with its effective value and its description, as plain JSON for the API.
//!
//! What it is: [`report`], which parses the process's command line again (configuration file
//! merged, exactly as [`crate::config::parse_or_exit`] did) to learn each option's raw value
//! and where it came from, and reads the descriptions from the clap definitions themselves, so
//! a new option appears in both replies without a line here. Values are typed by the option's
//! value name (`BOOL` → boolean, `N`, `BYTES`, `MS`, `MILLISECONDS` → integer, `SECONDS` →
//! number, otherwise text); repeatable options are arrays.
//!
//! What it is not: validation (done when the server started) or a way to change options.
//!
//! Invariants: an option whose name contains `passwd`, `password` or `secret` is left out of
//! the values (and its default out of its description), as arangod leaves them out; an option
//! given neither on the command line nor by default is `null`; a command line that no longer
//! parses yields empty reports.

use std::ffi::OsString;

use clap::{ArgAction, CommandFactory};
use quince_api::ServerOptions;
use serde_json::{json, Map, Value};

use crate::config::{merge_configuration, Cli};

/// The options of `quince serve` as the process's command line `argv` sets them.
pub fn report(argv: Vec<OsString>) -> ServerOptions {
    let mut values = Map::new();
    let mut descriptions = Map::new();
    let command = Cli::command();
    let Some(serve) = command.find_subcommand("serve") else {
        return ServerOptions::default();
    };
    let matches = merge_configuration(argv)
        .ok()
        .and_then(|merged| Cli::command().try_get_matches_from(merged).ok());
    let serve_matches = matches.as_ref().and_then(|m| m.subcommand_matches("serve"));
    for arg in serve.get_arguments() {
        let Some(name) = arg.get_long() else {
            continue;
        };
        if matches!(arg.get_action(), ArgAction::Help | ArgAction::Version) {
            continue;
        }
        let kind = kind_of(
            arg.get_value_names()
                .and_then(|v| v.first())
                .map(|s| s.as_str()),
        );
        let many = matches!(arg.get_action(), ArgAction::Append);
        let raw: Option<Vec<String>> = serve_matches
            .and_then(|m| m.get_raw(arg.get_id().as_str()))
            .map(|vals| vals.map(|v| v.to_string_lossy().into_owned()).collect());
        let secret = is_secret(name);
        if !secret {
            let value = raw
                .as_ref()
                .map_or(Value::Null, |vals| typed(vals, kind, many));
            values.insert(name.to_string(), value);
        }
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        let default = match (defaults.is_empty(), secret) {
            (true, _) | (false, true) => Value::Null,
            (false, false) => typed(&defaults, kind, many),
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        descriptions.insert(
            name.to_string(),
            json!({
                "category": "option",
                "section": name.split_once('.').map_or("", |(section, _)| section),
                "description": help,
                "type": if many { format!("{kind}...") } else { kind.to_string() },
                "default": default,
                "hidden": arg.is_hide_set(),
                "requiresValue": kind != "boolean",
                "dynamic": false,
                "os": ["linux", "macos"],
                "component": ["arangod"],
                "introducedIn": Value::Null,
            }),
        );
    }
    ServerOptions {
        values: Value::Object(values),
        descriptions: Value::Object(descriptions),
    }
}

/// True for options whose values `/_admin/options` leaves out: every name with `passwd`,
/// `password` or `secret` in it, paths to secret files included, as arangod leaves them out.
fn is_secret(name: &str) -> bool {
    ["passwd", "password", "secret"]
        .iter()
        .any(|word| name.contains(word))
}

/// The option's type, from its value name.
fn kind_of(value_name: Option<&str>) -> &'static str {
    match value_name {
        Some("BOOL") => "boolean",
        Some("N" | "BYTES" | "MS" | "MILLISECONDS") => "uint64",
        Some("SECONDS") => "double",
        _ => "string",
    }
}

fn typed(values: &[String], kind: &str, many: bool) -> Value {
    let one = |text: &str| -> Value {
        match kind {
            "boolean" => Value::Bool(quince_client::parse_bool(text).unwrap_or(false)),
            "uint64" => text
                .parse::<u64>()
                .map_or_else(|_| Value::from(text), Value::from),
            "double" => text
                .parse::<f64>()
                .map_or_else(|_| Value::from(text), Value::from),
            _ => Value::from(text),
        }
    };
    if many {
        Value::Array(values.iter().map(|v| one(v)).collect())
    } else {
        values.last().map_or(Value::Null, |v| one(v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn values_are_typed_defaults_filled_and_secrets_hidden() {
        let report = report(argv(&[
            "quince",
            "serve",
            "--database.password",
            "s3cret",
            "--server.maximal-queue-size=17",
            "--log.level",
            "info",
            "--log.level",
            "queries=debug",
            "--database.wait-for-sync",
        ]));
        let v = &report.values;
        assert!(v.get("database.password").is_none());
        assert!(v.get("server.jwt-secret-keyfile").is_none());
        assert_eq!(v["server.maximal-queue-size"], 17);
        assert_eq!(v["database.wait-for-sync"], true);
        assert_eq!(v["server.authentication"], true, "a default");
        assert_eq!(v["log.level"], json!(["info", "queries=debug"]));
        assert_eq!(v["server.jwt-secret-folder"], Value::Null, "not given");
        assert_eq!(v["transaction.streaming-idle-timeout"], 60.0);
        assert!(!report.values.to_string().contains("s3cret"));
        let d = &report.descriptions["server.maximal-queue-size"];
        assert_eq!(d["section"], "server");
        assert_eq!(d["type"], "uint64");
        assert_eq!(d["default"], 4096);
        assert!(d["description"].as_str().unwrap().contains("queue"));
        assert_eq!(
            report.descriptions["database.password"]["default"],
            Value::Null
        );
    }

    #[test]
    fn secret_options_are_those_arangod_leaves_out() {
        assert!(is_secret("database.password"));
        assert!(is_secret("server.jwt-secret-keyfile"));
        assert!(is_secret("server.jwt-secret-folder"));
        assert!(!is_secret("server.endpoint"));
    }
}
