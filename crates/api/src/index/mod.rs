//! `/_api/index`: list, read, create and drop a collection's indexes (ArangoDB 3.12's HTTP
//! interface for indexes).
//!
//! What it is: the dispatch on method and path onto the operations interface's
//! `indexes`/`create_index`/`drop_index`, and the replies in ArangoDB's shapes:
//! - `GET /_api/index?collection=C`: `{error, code, indexes: [...], identifiers: {id: ...}}`;
//! - `GET /_api/index/selectivity?collection=C`: `{error, code, indexes: {id: estimate}}`;
//! - `GET /_api/index/C/ID` (an id or a name): the description with `error` and `code`;
//! - `POST /_api/index?collection=C`: 201 with the new index (`isNewlyCreated: true`), 200
//!   with the existing one a repeated definition asks for;
//! - `DELETE /_api/index/C/ID`: 200 `{id: "C/ID", error, code}`.
//!
//! What it is not: the rules of definitions (`quince_ops::IndexDefinition`) or of indexes (the
//! engine's). Nor transactional: index changes are not stream-transaction operations in
//! ArangoDB, so the row ignores `x-arango-trx-id`.
//!
//! Invariants, as ArangoDB's handler: a missing or unknown collection is 404/1203 before
//! anything else is looked at; reading needs `ro` on the collection, creating and dropping
//! `rw` on the database and on the collection (403/11); a create that fails for any reason
//! other than permissions is answered with status 400 and the failure's errorNum (a unique
//! violation among the existing documents: 400/1210; a taken name: 400/1207); a drop names an
//! index by id or name (anything else: 400/1214), and the primary index is never found
//! (404/1212); create and drop run on the blocking pool (they build, or write
//! `parameter.json`), and so does every request when the database's calls wait on the
//! network (a cluster coordinator's: `DatabaseOps::blocks_on_network`).

#[cfg(test)]
mod tests;

use std::sync::Arc;

use http::Method;
use quince_errors::{
    ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND, ARANGO_INDEX_HANDLE_BAD,
    ARANGO_INDEX_NOT_FOUND, FORBIDDEN, HTTP_BAD_PARAMETER, HTTP_METHOD_NOT_ALLOWED,
};
use quince_ops::{CollectionOps, IndexDescription};
use serde_json::{Map, Value};

use crate::blocking::blocking;
use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// Handles every request under `/_api/index`. When the database's calls wait on the network
/// (a cluster coordinator's), the whole request runs on the blocking pool.
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    if req.database.blocks_on_network() {
        let runtime = tokio::runtime::Handle::current();
        return blocking(move || runtime.block_on(dispatch(req))).await;
    }
    dispatch(req).await
}

/// [`handle`]'s dispatch on method and path.
async fn dispatch(req: ApiRequest) -> ApiResult {
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::GET, []) => list(&req),
        (&Method::GET, ["selectivity"]) => selectivity(&req),
        (&Method::GET, [collection, id]) => read(&req, collection, id),
        (&Method::GET, _) => Err(ArangoError::new(HTTP_BAD_PARAMETER)),
        (&Method::POST, []) => create(&req).await,
        (&Method::POST, _) => Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            format!("expecting POST {}?collection=<collection-name>", req.path),
        )),
        (&Method::DELETE, [collection, id]) => drop_index(&req, collection, id).await,
        (&Method::DELETE, _) => Err(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "expecting DELETE /<collection-name>/<index-identifier>",
        )),
        _ => Err(ArangoError::new(HTTP_METHOD_NOT_ALLOWED)),
    }
}

/// The collection named (or numbered) by `name`; 404/1203 when there is none (or no name).
fn collection(req: &ApiRequest, name: Option<&str>) -> Result<Arc<dyn CollectionOps>> {
    match name {
        Some(name) if !name.is_empty() => req.database.collection(name),
        _ => Err(ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND)),
    }
}

/// A description with `error: false` and `code`.
fn with_head(description: Value, code: u16, extra: &[(&str, Value)]) -> ApiResponse {
    let mut object = match description {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    for (name, value) in extra {
        object.insert((*name).to_owned(), value.clone());
    }
    object.insert("error".into(), Value::Bool(false));
    object.insert("code".into(), Value::from(code));
    ApiResponse::json(code, &Value::Object(object))
}

/// `GET /_api/index?collection=C`.
fn list(req: &ApiRequest) -> ApiResult {
    let c = collection(req, req.param("collection"))?;
    req.require(Access::Read, &c.name())?;
    let indexes = c.indexes();
    let identifiers: Map<String, Value> = indexes
        .iter()
        .map(|index| (id_of(index), index.json.clone()))
        .collect();
    let all: Vec<Value> = indexes.into_iter().map(|index| index.json).collect();
    let mut object = Map::new();
    object.insert("error".into(), Value::Bool(false));
    object.insert("code".into(), Value::from(200));
    object.insert("indexes".into(), Value::Array(all));
    object.insert("identifiers".into(), Value::Object(identifiers));
    Ok(ApiResponse::json(200, &Value::Object(object)))
}

/// The `id` of a description (`"C/ID"`).
fn id_of(index: &IndexDescription) -> String {
    index.json["id"].as_str().unwrap_or_default().to_owned()
}

/// `GET /_api/index/selectivity?collection=C`.
fn selectivity(req: &ApiRequest) -> ApiResult {
    let c = collection(req, req.param("collection"))?;
    req.require(Access::Read, &c.name())?;
    let estimates: Map<String, Value> = c
        .indexes()
        .iter()
        .filter_map(|index| Some((id_of(index), index.json.get("selectivityEstimate")?.clone())))
        .collect();
    let mut object = Map::new();
    object.insert("error".into(), Value::Bool(false));
    object.insert("code".into(), Value::from(200));
    object.insert("indexes".into(), Value::Object(estimates));
    Ok(ApiResponse::json(200, &Value::Object(object)))
}

/// `GET /_api/index/C/ID`: by id or by name; 404/1212 when neither matches.
fn read(req: &ApiRequest, name: &str, id: &str) -> ApiResult {
    let c = collection(req, Some(name))?;
    req.require(Access::Read, &c.name())?;
    let index = c
        .indexes()
        .into_iter()
        .find(|index| index.id.to_string() == id || index.name == id)
        .ok_or_else(|| ArangoError::new(ARANGO_INDEX_NOT_FOUND))?;
    Ok(with_head(index.json, 200, &[]))
}

/// `POST /_api/index?collection=C`.
async fn create(req: &ApiRequest) -> ApiResult {
    let c = collection(req, req.param("collection"))?;
    req.require_database(Access::Write)?;
    req.require(Access::Write, &c.name())?;
    let body = req.required_json_body()?;
    let created = blocking(move || c.create_index(&body)).await;
    let (index, new) = created.map_err(|error| {
        // ArangoDB answers every create failure but these with 400 and its errorNum.
        if error.is(FORBIDDEN) || error.is(ARANGO_INDEX_NOT_FOUND) || error.status >= 500 {
            error
        } else {
            error.with_status(400)
        }
    })?;
    let code = if new { 201 } else { 200 };
    Ok(with_head(
        index.json,
        code,
        &[("isNewlyCreated", Value::Bool(new))],
    ))
}

/// `DELETE /_api/index/C/ID`.
async fn drop_index(req: &ApiRequest, name: &str, id: &str) -> ApiResult {
    let c = collection(req, Some(name))?;
    req.require_database(Access::Write)?;
    req.require(Access::Write, &c.name())?;
    if !is_handle(id) {
        return Err(ArangoError::new(ARANGO_INDEX_HANDLE_BAD));
    }
    let handle = format!("{name}/{id}");
    let target = id.to_owned();
    blocking(move || c.drop_index(&target)).await?;
    let mut object = Map::new();
    object.insert("id".into(), Value::String(handle));
    object.insert("error".into(), Value::Bool(false));
    object.insert("code".into(), Value::from(200));
    Ok(ApiResponse::json(200, &Value::Object(object)))
}

/// True for what may name an index: an id (digits) or a name (no `/`, no control characters,
/// at most 256 bytes).
fn is_handle(id: &str) -> bool {
    !id.is_empty() && id.len() <= 256 && !id.contains('/') && !id.chars().any(char::is_control)
}
