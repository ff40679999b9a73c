//! Requests for a cursor or a stream transaction that another coordinator of the cluster
//! holds: a client that spreads its requests over coordinators (python-arango picks a host per
//! request; arangojs balances transactions' requests) reaches the coordinator that created
//! them through this one, as with ArangoDB's coordinators.
//!
//! What it is: [`candidate`], the request as the other coordinators would get it, kept aside
//! when it may be held elsewhere (on a coordinator, a request naming a transaction in
//! `x-arango-trx-id`, or under `/_api/cursor/<id>` or `/_api/transaction/<id>`, that no other
//! coordinator forwarded already); [`held_elsewhere`], the errors that send it on (1600 no such
//! cursor, 1655 no such transaction); and [`forward`], which hands it to the cluster
//! ([`quince_ops::ClusterOps::forward`]) on the blocking pool and turns the holder's reply into
//! this one's.
//!
//! What it is not: the HTTP between coordinators (the cluster crate's), nor forwarding for
//! requests whose body streams in (imports in a transaction): those answer 1655 here.
//!
//! Invariants: only a request that failed here with 1600 or 1655 is forwarded, so nothing was
//! done here; a forwarded request carries the user this coordinator authenticated, and is
//! never forwarded again.

use bytes::Bytes;
use http::header::CONTENT_TYPE;
use http::{HeaderValue, Uri};
use quince_errors::{ArangoError, CURSOR_NOT_FOUND, TRANSACTION_NOT_FOUND};
use quince_ops::{ForwardedRequest, ServerRole, FORWARDED};

use crate::blocking::blocking;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};
use crate::state::Api;
use crate::transaction::TRX_HEADER;

/// A request kept aside in case another coordinator holds what it names: the request
/// without its body, and the body (shared, copied only when it is forwarded).
pub(crate) struct Forwardable {
    request: ForwardedRequest,
    body: Bytes,
}

/// `req` as another coordinator would get it, when it may be held there (see the module
/// documentation); `None` otherwise.
pub(crate) fn candidate(api: &Api, req: &ApiRequest, uri: &Uri) -> Option<Forwardable> {
    let cluster = api.cluster()?;
    if cluster.role() != ServerRole::Coordinator || req.headers.contains_key(FORWARDED) {
        return None;
    }
    let text = |name| {
        req.headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let trx = text(TRX_HEADER);
    let by_id = ["/_api/cursor/", "/_api/transaction/"]
        .iter()
        .any(|prefix| req.path.starts_with(prefix));
    if trx.is_none() && !by_id {
        return None;
    }
    let target = uri.path_and_query().map_or("/", |p| p.as_str());
    Some(Forwardable {
        request: ForwardedRequest {
            method: req.method.as_str().to_owned(),
            database: req.database.name().to_owned(),
            path: below_database(target).to_owned(),
            user: (!req.user.is_superuser()).then(|| req.user.name().to_owned()),
            trx,
            content_type: text(CONTENT_TYPE.as_str()),
            body: Vec::new(),
        },
        body: req.body.clone(),
    })
}

/// True for the errors that mean another coordinator may hold what the request names.
pub(crate) fn held_elsewhere(error: &ArangoError) -> bool {
    error.is(CURSOR_NOT_FOUND) || error.is(TRANSACTION_NOT_FOUND)
}

/// The holder's reply to `request`, or `None` when no other coordinator holds it.
pub(crate) async fn forward(api: &Api, forwardable: Forwardable) -> Option<ApiResult> {
    let cluster = api.cluster()?.clone();
    let mut request = forwardable.request;
    request.body = forwardable.body.to_vec();
    match blocking(move || cluster.forward(&request)).await {
        Ok(Some(reply)) => {
            let mut response = ApiResponse::json_bytes(reply.status, reply.body);
            if let Some(value) = reply
                .content_type
                .and_then(|t| HeaderValue::from_str(&t).ok())
            {
                response.headers.insert(CONTENT_TYPE, value);
            }
            Some(Ok(response))
        }
        Ok(None) => None,
        Err(error) => Some(Err(error)),
    }
}

/// The part of a request target below its `/_db/<name>` prefix (the whole target without
/// one).
fn below_database(target: &str) -> &str {
    let Some(rest) = target.strip_prefix("/_db/") else {
        return target;
    };
    rest.find(['/', '?']).map_or("/", |end| &rest[end..])
}

#[cfg(test)]
mod tests {
    use super::below_database;

    #[test]
    fn the_database_prefix_is_taken_off() {
        assert_eq!(
            below_database("/_db/shop/_api/cursor/12?x=1"),
            "/_api/cursor/12?x=1"
        );
        assert_eq!(below_database("/_api/cursor/12"), "/_api/cursor/12");
        assert_eq!(below_database("/_db/shop"), "/");
    }
}
