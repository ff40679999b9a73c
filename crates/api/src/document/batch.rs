//! Queued single-document inserts run as one write: the document family's [`JOB_BATCHES`].
//!
//! What it is: the rule for which queued jobs join a batch ([`joins`]: `POST
//! /_api/document/{collection}` jobs of one owner with the same query string, whose bodies
//! are JSON objects, outside stream transactions; the router checked method, path and query)
//! and the batch's handler ([`run`]): each body is parsed as a lone insert parses it, the
//! objects go to the collection as ONE multi-document write (one writer-lock acquisition, one
//! journal append, one durability wait), and each job gets the reply a lone insert would have
//! got: the same status, headers and body, or the same error.
//!
//! What it is not: a change of semantics. The items of a multi-document write are decided one
//! by one, in order, as separate inserts would be (keys generated in arrival order, each item
//! failing or succeeding on its own); only their appends are grouped, so a crash keeps all of
//! a batch's documents or none, where separate inserts could keep a prefix (none of them was
//! acknowledged as durable before it ran: a queued job's 202 promises nothing on disk).
//!
//! Invariants: one result per job, in order; a body that is not an object, or not JSON, fails
//! its own job exactly as it would alone and takes no part in the write.

use quince_errors::ArangoError;
use quince_ops::WriteRequest;
use serde_json::Value;

use crate::request::ApiRequest;
use crate::response::ApiResult;
use crate::router::{BatchReply, JobBatches};
use crate::state::Api;

use super::params::{self, WriteKind};
use super::render::single_write_reply;
use super::{collection, durable, insert_collection_name};

/// How the document family runs queued jobs in batches.
pub(crate) const JOB_BATCHES: JobBatches = JobBatches {
    joins,
    handler: |api, requests| -> BatchReply<'_> { Box::pin(run(api, requests)) },
};

/// True when `next` may join a batch that `first` starts: both insert one object (a body
/// that starts with `{`; a body that then fails to parse fails its own job alone).
fn joins(first: &ApiRequest, next: &ApiRequest) -> bool {
    [first, next]
        .iter()
        .all(|req| req.method == http::Method::POST && starts_object(&req.body))
}

/// True when `body`'s first byte after JSON whitespace is `{`.
fn starts_object(body: &[u8]) -> bool {
    body.iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .is_some_and(|&b| b == b'{')
}

/// Runs the batch (see the module doc).
async fn run(_api: &Api, requests: Vec<ApiRequest>) -> Vec<ApiResult> {
    let first = &requests[0];
    // The same owner, path and query: the collection, the permission and the options are
    // the same for every job.
    let target = insert_collection_name(first).and_then(|name| {
        first.require(crate::permission::Access::Write, name)?;
        collection(first, name)
    });
    let collection = match target {
        Ok(collection) => collection,
        Err(err) => return requests.iter().map(|_| Err(err.clone())).collect(),
    };
    let mut results: Vec<Option<ApiResult>> = Vec::with_capacity(requests.len());
    let mut items = Vec::with_capacity(requests.len());
    let mut positions = Vec::with_capacity(requests.len());
    for (i, req) in requests.iter().enumerate() {
        match req.json_body() {
            Ok(body @ Value::Object(_)) => {
                results.push(None);
                positions.push(i);
                items.push(body);
            }
            Ok(_) => results.push(Some(Err(ArangoError::new(
                quince_errors::ARANGO_DOCUMENT_TYPE_INVALID,
            )))),
            Err(err) => results.push(Some(Err(err))),
        }
    }
    if !items.is_empty() {
        let options = params::write_options(first, WriteKind::Insert, true);
        let written = collection.write(WriteRequest::new(WriteKind::Insert, items, options));
        let durability = durable(written.durability).await;
        for (i, outcome) in positions.into_iter().zip(written.items) {
            let req = &requests[i];
            let reply = outcome.and_then(|outcome| {
                durability.clone()?;
                Ok(single_write_reply(
                    req.database.name(),
                    &outcome,
                    WriteKind::Insert,
                    params::silent(req),
                ))
            });
            results[i] = Some(reply);
        }
    }
    results
        .into_iter()
        .map(|r| r.expect("every job has a result"))
        .collect()
}
