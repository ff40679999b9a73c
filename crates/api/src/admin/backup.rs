//! `POST /_admin/backup/create`, `list`, `restore` and `delete`: hot backups with ArangoDB
//! 3.12's request and response shapes (an Enterprise feature there; every Quince has it).
//!
//! What it is: body parsing and rendering over the engine's backup methods
//! (`quince_ops::Engine::create_backup` and the others, run on the blocking pool), and after a
//! restore the API's own state that mirrors the databases: the user accounts are loaded again
//! from the restored `_users`, every open cursor is forgotten and the results cache emptied.
//!
//! What it is not: the backup itself (the engine's; `quince-db`'s `backup` module), or
//! `/_admin/backup/upload` and `download` (remote repositories), which are not offered: they
//! answer 404 like any unknown path.
//!
//! Invariants: only administrators (`rw` on `_system`, ArangoDB's admin user) reach the
//! engine (403/11 otherwise); a body that is not a JSON object, or an attribute of the wrong
//! type, is 400/10; an unknown id is 404/7007; engines without backups answer 501/9.

use std::sync::Arc;
use std::time::Duration;

use http::Method;
use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use quince_ops::{BackupInfo, BackupRequest, Engine, BACKUP_TIMEOUT_DEFAULT, BACKUP_TIMEOUT_MAX};
use serde_json::{json, Map, Value};

use crate::blocking::blocking;
use crate::error::{method_not_allowed, unknown_path};
use crate::limits::ARANGODB_VERSION;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// `/_admin/backup/{create,list,restore,delete}`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    let action = match suffix.as_slice() {
        [action @ ("create" | "list" | "restore" | "delete")] => *action,
        _ => return Err(unknown_path(&req.path)),
    };
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    req.require_admin()?;
    let body = body_object(&req)?;
    let engine = Arc::clone(api.engine());
    match action {
        "create" => {
            let request = create_request(&body)?;
            let info = blocking(move || engine.create_backup(&request)).await?;
            Ok(envelope(201, created(&info)))
        }
        "list" => {
            let id = optional_string(&body, "id")?;
            let list = blocking(move || engine.list_backups(id.as_deref())).await?;
            let list: Map<String, Value> = list
                .iter()
                .map(|info| (info.id.clone(), listed(info)))
                .collect();
            Ok(envelope(200, json!({ "list": list })))
        }
        "restore" => {
            let id = required_id(&body)?;
            let restored = id.clone();
            let names_before = engine.database_names();
            let previous = blocking(move || engine.restore_backup(&restored)).await?;
            refresh_after_restore(api, names_before).await?;
            Ok(envelope(
                200,
                json!({"id": id, "isCluster": false, "previous": previous}),
            ))
        }
        _ => {
            let id = required_id(&body)?;
            blocking(move || engine.delete_backup(&id)).await?;
            Ok(envelope(200, json!({})))
        }
    }
}

/// What the API keeps beside the databases follows the restored state: accounts, cursors, the
/// results cache (of the databases before and after).
async fn refresh_after_restore(api: &Api, mut names: Vec<String>) -> Result<()> {
    let engine: Arc<dyn Engine> = Arc::clone(api.engine());
    let users = Arc::clone(api.users_handle());
    names.extend(engine.database_names());
    blocking(move || users.reload(&*engine)).await?;
    let queries = api.queries();
    queries.cursors.clear();
    for name in names {
        queries.cache.clear(&name);
    }
    Ok(())
}

/// `{"error":false,"code":N,"result":…}`.
fn envelope(code: u16, result: Value) -> ApiResponse {
    ApiResponse::json(
        code,
        &json!({"error": false, "code": code, "result": result}),
    )
}

fn bad(message: &'static str) -> ArangoError {
    ArangoError::with_message(BAD_PARAMETER, message)
}

/// The body as an object; an empty body is `{}`.
fn body_object(req: &ApiRequest) -> Result<Map<String, Value>> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match req.json_body()? {
        Value::Object(object) => Ok(object),
        _ => Err(bad("the body must be a JSON object")),
    }
}

/// A string attribute; absent and null are `None`.
fn optional_string(body: &Map<String, Value>, name: &'static str) -> Result<Option<String>> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(ArangoError::with_message(
            BAD_PARAMETER,
            format!("{name} must be a string"),
        )),
    }
}

/// `id`, required.
fn required_id(body: &Map<String, Value>) -> Result<String> {
    optional_string(body, "id")?.ok_or_else(|| bad("id is required"))
}

/// A boolean attribute, false when absent or null.
fn flag(body: &Map<String, Value>, name: &'static str) -> Result<bool> {
    match body.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ArangoError::with_message(
            BAD_PARAMETER,
            format!("{name} must be a boolean"),
        )),
    }
}

/// The create body: `label`, `allowInconsistent`, `force`, `timeout` (seconds).
fn create_request(body: &Map<String, Value>) -> Result<BackupRequest> {
    let label = optional_string(body, "label")?.filter(|l| !l.is_empty());
    let timeout = match body.get("timeout") {
        None | Some(Value::Null) => BACKUP_TIMEOUT_DEFAULT,
        Some(value) => {
            let seconds = value
                .as_f64()
                .filter(|s| s.is_finite() && *s > 0.0)
                .ok_or_else(|| bad("timeout must be a positive number of seconds"))?;
            if seconds > BACKUP_TIMEOUT_MAX.as_secs_f64() {
                return Err(bad("timeout is at most 3600 seconds"));
            }
            Duration::from_secs_f64(seconds)
        }
    };
    Ok(BackupRequest {
        label,
        allow_inconsistent: flag(body, "allowInconsistent")?,
        force: flag(body, "force")?,
        timeout,
    })
}

/// A backup as `create` answers it.
fn created(info: &BackupInfo) -> Value {
    json!({
        "id": info.id,
        "datetime": info.datetime,
        "potentiallyInconsistent": info.potentially_inconsistent,
        "sizeInBytes": info.size_in_bytes,
        "nrFiles": info.nr_files,
        "nrDBServers": info.nr_db_servers,
    })
}

/// A backup as `list` answers it.
fn listed(info: &BackupInfo) -> Value {
    let mut value = created(info);
    let object = value.as_object_mut().expect("an object");
    object.insert("version".into(), json!(ARANGODB_VERSION));
    object.insert("available".into(), json!(true));
    object.insert("nrPiecesPresent".into(), json!(info.nr_db_servers));
    value
}
