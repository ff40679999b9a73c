//! The admin endpoints over the hooks the binary installs, through the pipeline: token secrets
//! reloaded at runtime (`/_admin/server/jwt`), the log endpoints over a log control, and the
//! honest 501 without hooks; plus the hook-free admin calls (tasks, target version, routing
//! reload, api calls).

use crate::support;

use std::sync::Arc;

use http::Method;
use jsonwebtoken::{EncodingKey, Header};
use parking_lot::Mutex;
use quince_api::{LogControl, LogLine, SecretSource};
use serde_json::json;
use support::{request, Server, SECRET};

/// Secrets the test changes between reloads.
struct Files(Mutex<Option<Vec<Vec<u8>>>>);

impl SecretSource for Files {
    fn read(&self) -> Result<Option<Vec<Vec<u8>>>, String> {
        Ok(self.0.lock().clone())
    }
}

fn superuser_token(secret: &[u8]) -> String {
    jsonwebtoken::encode(
        &Header::default(),
        &json!({"iss": "arangodb", "server_id": "test"}),
        &EncodingKey::from_secret(secret),
    )
    .unwrap()
}

fn sha(secret: &[u8]) -> String {
    quince_auth::secret_sha256(secret)
}

async fn as_superuser(s: &Server, secret: &[u8], method: Method, path: &str) -> support::Reply {
    let mut req = request(method, path, "");
    let value = format!("bearer {}", superuser_token(secret));
    req.headers_mut()
        .insert("authorization", value.parse().unwrap());
    s.send(req).await
}

#[tokio::test]
async fn jwt_secrets_reload_at_runtime() {
    let s = Server::new();
    let files = Arc::new(Files(Mutex::new(None)));
    assert!(s.api.hooks().install_secrets(files.clone()));
    let listed = as_superuser(&s, SECRET, Method::GET, "/_admin/server/jwt")
        .await
        .assert_success(200);
    assert_eq!(
        listed["result"],
        json!({"active": {"sha256": sha(SECRET)}, "passive": []})
    );
    // Nothing configured to reload from: 400, and nothing changes.
    as_superuser(&s, SECRET, Method::POST, "/_admin/server/jwt")
        .await
        .assert_error(400, 400);

    *files.0.lock() = Some(vec![b"new".to_vec(), SECRET.to_vec()]);
    let reloaded = as_superuser(&s, SECRET, Method::POST, "/_admin/server/jwt")
        .await
        .assert_success(200);
    assert_eq!(reloaded["result"]["active"]["sha256"], sha(b"new"));
    assert_eq!(
        reloaded["result"]["passive"],
        json!([{"sha256": sha(SECRET)}])
    );
    as_superuser(&s, b"new", Method::GET, "/_api/version")
        .await
        .assert_success(200);
    as_superuser(&s, SECRET, Method::GET, "/_api/version")
        .await
        .assert_success(200);

    *files.0.lock() = Some(vec![b"new".to_vec()]);
    as_superuser(&s, b"new", Method::POST, "/_admin/server/jwt")
        .await
        .assert_success(200);
    as_superuser(&s, SECRET, Method::GET, "/_api/version")
        .await
        .assert_error(401, 11);
    // An empty secret file is refused and the secrets stay.
    *files.0.lock() = Some(vec![Vec::new()]);
    as_superuser(&s, b"new", Method::POST, "/_admin/server/jwt")
        .await
        .assert_error(400, 400);
    // Root with a password is an administrator, not the superuser.
    s.root(Method::GET, "/_admin/server/jwt", "")
        .await
        .assert_error(403, 11);
}

/// A log control over fixed lines that records what was set.
struct FakeLog {
    lines: Vec<LogLine>,
    levels: Mutex<Vec<(&'static str, u8)>>,
}

impl LogControl for FakeLog {
    fn lines(&self) -> Vec<LogLine> {
        self.lines.clone()
    }
    fn levels(&self) -> Vec<(&'static str, u8)> {
        self.levels.lock().clone()
    }
    fn set_level(&self, topic: &str, level: u8) -> bool {
        let mut levels = self.levels.lock();
        let mut known = false;
        for (name, l) in levels.iter_mut() {
            if topic == "all" || *name == topic {
                *l = level;
                known = true;
            }
        }
        known
    }
    fn reset_levels(&self) {
        self.levels.lock().iter_mut().for_each(|(_, l)| *l = 4);
    }
    fn structured(&self) -> Vec<(&'static str, bool)> {
        vec![("database", false)]
    }
    fn set_structured(&self, _name: &str, _on: bool) -> bool {
        false
    }
}

fn line(id: u64, topic: &'static str, level: u8, message: &str) -> LogLine {
    LogLine {
        id,
        topic,
        level,
        unix_millis: 1_700_000_000_000 + id * 1000,
        message: message.to_string(),
    }
}

#[tokio::test]
async fn log_endpoints_filter_page_and_set_levels() {
    let s = Server::new();
    s.root(Method::GET, "/_admin/log/entries", "")
        .await
        .assert_error(501, 9);
    let log = Arc::new(FakeLog {
        lines: vec![
            line(1, "general", 4, "started"),
            line(2, "requests", 5, "request url=/a"),
            line(3, "engines", 3, "disk is slow"),
            line(4, "requests", 5, "request url=/b"),
        ],
        levels: Mutex::new(vec![("general", 4), ("requests", 4)]),
    });
    assert!(s.api.hooks().install_log(log.clone()));
    let all = s
        .root(Method::GET, "/_admin/log/entries", "")
        .await
        .assert_success(200);
    assert_eq!(all["total"], 2, "info and more severe by default");
    assert_eq!(all["messages"][0]["date"], "2023-11-14T22:13:21Z");
    assert_eq!(all["messages"][1]["level"], "WARNING");
    let debug = s
        .root(
            Method::GET,
            "/_admin/log/entries?upto=debug&sort=desc&size=2&offset=1",
            "",
        )
        .await
        .assert_success(200);
    assert_eq!(debug["total"], 4);
    let ids: Vec<u64> = debug["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [3, 2]);
    let only = s
        .root(
            Method::GET,
            "/_admin/log/entries?level=4&search=url%3D%2Fb",
            "",
        )
        .await
        .assert_success(200);
    assert_eq!(only["messages"][0]["message"], "request url=/b");
    assert_eq!(only["total"], 1);
    let legacy = s
        .root(Method::GET, "/_admin/log?upto=4&start=2", "")
        .await
        .assert_success(200);
    assert_eq!(legacy["lid"], json!([2, 3, 4]));
    assert_eq!(legacy["level"], json!([4, 2, 4]));
    assert_eq!(legacy["timestamp"][0], 1_700_000_002);

    let set = s
        .root(
            Method::PUT,
            "/_admin/log/level",
            r#"{"requests": "debug", "x": "info"}"#,
        )
        .await
        .assert_success(200);
    assert_eq!(set, json!({"general": "INFO", "requests": "DEBUG"}));
    let set = s
        .root(Method::PUT, "/_admin/log/level", r#""error""#)
        .await
        .assert_success(200);
    assert_eq!(set["general"], "ERROR");
    let reset = s
        .root(Method::DELETE, "/_admin/log/level", "")
        .await
        .assert_success(200);
    assert_eq!(reset, json!({"general": "INFO", "requests": "INFO"}));
}

#[tokio::test]
async fn tasks_target_version_routing_and_api_calls() {
    let s = Server::new();
    let tasks = s
        .root(Method::GET, "/_api/tasks", "")
        .await
        .assert_success(200);
    assert_eq!(tasks, json!([]));
    s.root(Method::POST, "/_api/tasks", r#"{"command": "1"}"#)
        .await
        .assert_error(403, 36);
    s.root(Method::DELETE, "/_api/tasks/t1", "")
        .await
        .assert_error(404, 1852);
    let version = s
        .root(Method::GET, "/_admin/database/target-version", "")
        .await
        .assert_success(200);
    assert_eq!(version["version"], "31200");
    let reload = s.root(Method::POST, "/_admin/routing/reload", "").await;
    assert_eq!(reload.status, 204);
    let calls = s
        .root(Method::GET, "/_admin/server/api-calls", "")
        .await
        .assert_success(200);
    let paths: Vec<&str> = calls["result"]["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "/_admin/server/api-calls",
            "/_admin/routing/reload",
            "/_admin/database/target-version",
            "/_api/tasks/t1",
            "/_api/tasks",
            "/_api/tasks",
        ]
    );
}
