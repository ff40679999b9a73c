//! `/_api/collection` and `/_api/key-generators` (<https://docs.arangodb.com/3.12/develop/http-api/collections/>).
//!
//! What it is: the dispatch on method and path (`/`, `/{name}`, `/{name}/{resource}`) onto the
//! catalog calls of `quince-db`, and the replies in ArangoDB's shapes ([`render`]).
//!
//! In a cluster the engine also answers `shards` and `responsibleShard` and reports the
//! cluster properties (`numberOfShards`, `shardKeys`, `replicationFactor`, ...), which the
//! properties replies then carry; a single server answers those resources 501 and reports
//! none of them (the engine's defaults), as a single ArangoDB server does.
//!
//! What it is not: the rules of names, key options or journal sizes (the db layer's), or of
//! cluster options (the coordinator's).
//!
//! Invariants: calls that touch files (create, drop, rename, property changes, truncate,
//! compact, checksum) run on the blocking thread pool; reads of in-memory state run inline,
//! except where the database's calls wait on the network (a coordinator's), where the whole
//! request runs on the blocking pool; a missing collection is 404/1203 before anything else
//! is looked at.

mod body;
mod render;

#[cfg(test)]
mod cluster_tests;
#[cfg(test)]
mod schema_tests;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use http::Method;
use quince_ops::CollectionOps;

use crate::blocking::blocking;
use quince_errors::{ArangoError, Result};
use serde_json::{json, Map, Value};

use crate::permission::Access;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;

/// The key generators this server offers, as `GET /_api/key-generators` lists them.
const KEY_GENERATORS: [&str; 4] = ["padded", "autoincrement", "traditional", "uuid"];

/// Handles every request under `/_api/collection`.
pub(crate) async fn handle(api: &Api, req: ApiRequest) -> ApiResult {
    if req.database.blocks_on_network() {
        if let Some(api) = api.weak().upgrade() {
            let runtime = tokio::runtime::Handle::current();
            return blocking(move || runtime.block_on(dispatch(&api, req))).await;
        }
    }
    dispatch(api, req).await
}

/// The properties reply of a collection: the engine's properties, with the cluster
/// properties it reports (none on a single server) in place of the single server's constants.
fn properties_of(c: &dyn CollectionOps) -> Map<String, Value> {
    let mut object = render::properties(&c.properties());
    if let Some(cluster) = c.cluster_properties() {
        for (name, value) in cluster {
            object.insert(name, value);
        }
    }
    object
}

/// [`handle`]'s dispatch on method and path.
async fn dispatch(api: &Api, req: ApiRequest) -> ApiResult {
    let method = req.method.clone();
    let suffix: Vec<&str> = req.suffix.iter().map(String::as_str).collect();
    match (suffix.as_slice(), &method) {
        ([], &Method::GET) => list(&req),
        ([], &Method::POST) => create(&req).await,
        ([name], &Method::GET) => {
            req.require(Access::Read, name)?;
            Ok(reply(render::basic_info(
                &collection(&req, name)?.properties(),
            )))
        }
        ([name], &Method::DELETE) => drop_collection(api, &req, name).await,
        ([name], &Method::PUT) => {
            collection(&req, name)?;
            Err(bad_parameter(
                "expecting PUT /_api/collection/<collection-name>/<action>",
            ))
        }
        ([name, resource], &Method::GET) => read_resource(&req, name, resource).await,
        ([name, action], &Method::PUT) => change(&req, name, action).await,
        ([] | [_] | [_, _], _) => Err(ArangoError::new(quince_errors::HTTP_METHOD_NOT_ALLOWED)),
        _ => Err(bad_parameter(
            "expecting /_api/collection/<collection-name>/<resource>",
        )),
    }
}

/// `GET /_api/key-generators`.
pub(crate) async fn key_generators(req: ApiRequest) -> ApiResult {
    if req.method != Method::GET {
        return Err(ArangoError::new(quince_errors::HTTP_METHOD_NOT_ALLOWED));
    }
    Ok(ApiResponse::json(
        200,
        &json!({ "keyGenerators": KEY_GENERATORS }),
    ))
}

fn bad_parameter(message: &'static str) -> ArangoError {
    ArangoError::with_message(quince_errors::HTTP_BAD_PARAMETER, message)
}

/// A 200 reply from an object.
fn reply(object: Map<String, Value>) -> ApiResponse {
    ApiResponse::json(200, &Value::Object(object))
}

/// The collection named (or numbered) in the path; 404/1203 when there is none.
fn collection(req: &ApiRequest, name: &str) -> Result<Arc<dyn CollectionOps>> {
    req.database.collection(name)
}

/// `GET /_api/collection[?excludeSystem=true]`.
fn list(req: &ApiRequest) -> ApiResult {
    let exclude_system = req.bool_param("excludeSystem", false);
    let result: Vec<Value> = req
        .database
        .collections()
        .iter()
        .map(|c| c.properties())
        .filter(|p| !(exclude_system && p.is_system))
        .filter(|p| req.can_read(&p.name))
        .map(|p| render::list_entry(&p))
        .collect();
    let mut object = render::success_head();
    object.insert("result".into(), Value::Array(result));
    Ok(reply(object))
}

/// `POST /_api/collection`: 200 and the new collection's properties.
async fn create(req: &ApiRequest) -> ApiResult {
    req.require_database(Access::Write)?;
    let mut body = req.required_json_body()?;
    let request = body::create_request(body.clone())?;
    // The cluster options go to the engine with the body (a single server ignores them);
    // ArangoDB takes these two as query parameters.
    if let Value::Object(object) = &mut body {
        for name in ["waitForSyncReplication", "enforceReplicationFactor"] {
            if req.has_param(name) {
                object.insert(name.into(), Value::Bool(req.bool_param(name, true)));
            }
        }
    }
    let database = Arc::clone(&req.database);
    let created = blocking(move || database.create_collection_with(request, &body)).await?;
    Ok(reply(properties_of(&*created)))
}

/// `DELETE /_api/collection/{name}[?isSystem=true]`: 200 and the dropped collection's id.
/// Every grant on the collection goes with it (as in ArangoDB), so a new collection of the
/// same name starts with nobody's old permissions; grants a crash left behind are removed at
/// the next start (`Api::open`).
async fn drop_collection(api: &Api, req: &ApiRequest, name: &str) -> ApiResult {
    req.require_database(Access::Write)?;
    req.require(Access::Write, name)?;
    let name = collection(req, name)?.name();
    let is_system = req.bool_param("isSystem", false);
    let database = Arc::clone(&req.database);
    let users = Arc::clone(api.users_handle());
    // Held across the drop: no graph starts using the collection between check and drop.
    let _graphs = crate::gharial::store::definitions_lock(&*database).await;
    let id = blocking(move || {
        crate::gharial::store::check_droppable(&*database, &name)?;
        let id = database.drop_collection(&name, is_system)?;
        users.forget_collection(database.name(), &name)?;
        Ok(id)
    })
    .await?;
    let mut object = render::success_head();
    object.insert("id".into(), Value::String(id.to_string()));
    Ok(reply(object))
}

/// `GET /_api/collection/{name}/{resource}`.
async fn read_resource(req: &ApiRequest, name: &str, resource: &str) -> ApiResult {
    req.require(Access::Read, name)?;
    let c = collection(req, name)?;
    let object = match resource {
        "properties" => properties_of(&*c),
        "count" => {
            let mut object = properties_of(&*c);
            object.insert("count".into(), c.count().into());
            object
        }
        "figures" => {
            let mut object = properties_of(&*c);
            let count = c.count();
            let report = c.figures();
            let mut figures = render::figures(&report);
            if req.bool_param("details", false) {
                figures["engine"] = render::engine_details(&report, count);
            }
            object.insert("count".into(), count.into());
            object.insert("figures".into(), figures);
            object
        }
        "revision" => {
            let mut object = properties_of(&*c);
            object.insert("revision".into(), c.revision().into());
            object
        }
        "checksum" => {
            let with_revisions =
                req.bool_param("withRevisions", false) || req.bool_param("withRevision", false);
            let with_data = req.bool_param("withData", false);
            let summed = Arc::clone(&c);
            let (checksum, revision) =
                blocking(move || summed.checksum(with_revisions, with_data)).await?;
            let mut object = render::basic_info(&c.properties());
            object.insert("checksum".into(), checksum.into());
            object.insert("revision".into(), revision.into());
            object
        }
        "shards" => {
            let shards = c.shards(req.bool_param("details", false))?;
            let mut object = properties_of(&*c);
            object.insert("shards".into(), shards);
            object
        }
        _ => {
            return Err(ArangoError::with_message(
                quince_errors::HTTP_NOT_FOUND,
                "expecting one of the resources 'checksum', 'count', 'figures', \
                 'properties', 'responsibleShard', 'revision', 'shards'",
            ))
        }
    };
    Ok(reply(object))
}

/// `PUT /_api/collection/{name}/{action}`.
async fn change(req: &ApiRequest, name: &str, action: &str) -> ApiResult {
    req.require(action_access(action), name)?;
    let c = collection(req, name)?;
    let object = match action {
        "properties" => {
            let body = req.required_json_body()?;
            let update = body::properties_update(body.clone())?;
            let changed = Arc::clone(&c);
            blocking(move || {
                changed.update_cluster_properties(&body)?;
                changed.update_properties(update)
            })
            .await?;
            properties_of(&*c)
        }
        "truncate" => {
            let wait_for_sync = req.bool_param("waitForSync", false) || c.wait_for_sync();
            let compact = req.bool_param("compact", true);
            let truncated = Arc::clone(&c);
            blocking(move || {
                truncated.truncate(wait_for_sync)?;
                if compact {
                    truncated.compact()?;
                }
                Ok(())
            })
            .await?;
            render::basic_info(&c.properties())
        }
        "rename" => {
            req.require_database(Access::Write)?;
            let new_name = body::new_name(req.required_json_body()?)?;
            let database = Arc::clone(&req.database);
            let old_name = c.name();
            let renamed =
                blocking(move || database.rename_collection(&old_name, &new_name)).await?;
            render::basic_info(&renamed.properties())
        }
        "load" => {
            // Collections are always loaded; load only reports, as ArangoDB 3.9+ does.
            let mut object = render::basic_info(&c.properties());
            object.insert("count".into(), c.count().into());
            object
        }
        "unload" => render::basic_info(&c.properties()),
        "loadIndexesIntoMemory" => {
            let mut object = render::success_head();
            object.insert("result".into(), Value::Bool(true));
            object
        }
        "recalculateCount" => {
            // The count is kept exact by the primary index, so there is nothing to recompute.
            let mut object = render::success_head();
            object.insert("result".into(), Value::Bool(true));
            object.insert("count".into(), c.count().into());
            object
        }
        "compact" => {
            let compacted = Arc::clone(&c);
            blocking(move || compacted.compact()).await?;
            render::basic_info(&c.properties())
        }
        "responsibleShard" => {
            // A single server answers 501 whatever the body (the engine's default); in a
            // cluster a body that is not JSON is 400/600.
            let document = if c.cluster_properties().is_some() {
                req.json_body()?
            } else {
                Value::Null
            };
            let shard = c.responsible_shard(&document)?;
            let mut object = render::success_head();
            object.insert("shardId".into(), Value::String(shard));
            object
        }
        _ => {
            return Err(bad_parameter(
                "expecting one of the actions 'load', 'unload', 'truncate', 'properties', \
                 'compact', 'rename', 'loadIndexesIntoMemory', 'recalculateCount'",
            ))
        }
    };
    Ok(reply(object))
}

/// What an action of `PUT /_api/collection/{name}/{action}` does to the collection: the
/// ones that only report or warm caches read; the others write.
fn action_access(action: &str) -> Access {
    match action {
        "load" | "unload" | "loadIndexesIntoMemory" | "responsibleShard" => Access::Read,
        _ => Access::Write,
    }
}
