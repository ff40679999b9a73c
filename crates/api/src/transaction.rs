//! `/_api/transaction`: stream transactions (ArangoDB 3.12's Stream Transaction HTTP API), and
//! the answer to JavaScript transactions.
//!
//! What it is: begin (`POST /_api/transaction/begin`), the list of running transactions
//! (`GET /_api/transaction`), status (`GET /_api/transaction/{id}`), commit (`PUT`) and abort
//! (`DELETE`), over the operations interface ([`quince_ops::TransactionOps`]); the rule that
//! makes other endpoints honour `x-arango-trx-id` ([`in_transaction`], applied by the router to
//! the rows that accept it); and the owner rule ([`find`]), the one place where a transaction
//! named by id is checked against the caller.
//!
//! What it is not: isolation or the commit protocol (the engine's: `docs/transactions.md`).
//! Nor JavaScript: `POST /_api/transaction` with an `action` needs a JavaScript engine, which
//! Quince does not have; it answers 403/36 ("disabled"), the error of a disabled feature.
//!
//! Invariants: a begin needs read access to the collections it reads and write access to those
//! it writes, and records the caller as the owner of a client stream transaction (its rank
//! decides its share of the slots: [`quince_ops::Slots`]); status, commit and abort need access
//! to the database; every lookup by id goes through [`find`]: a transaction is used only by its
//! owner or a superuser (as ArangoDB's transaction manager), and anyone else gets exactly the
//! answer for an id that does not exist (404/1655, the same message), so ids cannot be probed;
//! the list shows the caller's own client stream transactions, and all of them to an
//! administrator; begin and commit may wait (for collection locks, for an fsync) and run on
//! the blocking pool.

use std::sync::Arc;

use http::Method;
use quince_errors::{ArangoError, Result};
use quince_ops::{
    transaction_not_found, Beginner, DatabaseOps, Rank, TransactionOps, TransactionOptions,
    TransactionStatus,
};
use serde_json::{json, Value};

use crate::blocking::blocking;
use crate::error::{method_not_allowed, unknown_path};
use crate::permission::{Access, Caller};
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

/// The header naming the transaction a request runs in.
pub(crate) const TRX_HEADER: &str = "x-arango-trx-id";

/// Handles every request under `/_api/transaction`.
pub(crate) async fn handle(req: ApiRequest) -> ApiResult {
    let suffix: Vec<String> = req.suffix.clone();
    let suffix: Vec<&str> = suffix.iter().map(String::as_str).collect();
    match (&req.method, suffix.as_slice()) {
        (&Method::POST, ["begin"]) => begin(req).await,
        (&Method::POST, []) => Err(ArangoError::with_message(
            quince_errors::DISABLED,
            "JavaScript transactions are disabled: Quince has no JavaScript engine; use a \
             stream transaction (POST /_api/transaction/begin)",
        )),
        (&Method::GET, []) => list(&req),
        (&Method::GET, [id]) => status(&req, transaction_id(id)?),
        (&Method::PUT, [id]) => commit(&req, transaction_id(id)?).await,
        (&Method::DELETE, [id]) => abort(&req, transaction_id(id)?).await,
        (_, [] | [_]) => Err(method_not_allowed()),
        _ => Err(unknown_path(&req.path)),
    }
}

/// `{"code":N,"error":false,"result":{"id":…,"status":…}}`.
fn answer(code: u16, transaction: &dyn TransactionOps) -> ApiResponse {
    ApiResponse::json(
        code,
        &json!({
            "code": code,
            "error": false,
            "result": {"id": transaction.id(), "status": transaction.status().as_str()},
        }),
    )
}

async fn begin(req: ApiRequest) -> ApiResult {
    let mut options = TransactionOptions::parse(&req.required_json_body()?)?;
    options.begun_by = beginner(&req.user);
    for name in &options.read {
        req.require(Access::Read, name)?;
    }
    for name in options.write.iter().chain(&options.exclusive) {
        req.require(Access::Write, name)?;
    }
    if options.read.is_empty() && options.write.is_empty() && options.exclusive.is_empty() {
        req.require_database(Access::Read)?;
    }
    let database = Arc::clone(&req.database);
    let transaction = blocking(move || database.begin_transaction(options)).await?;
    Ok(answer(201, &*transaction))
}

fn list(req: &ApiRequest) -> ApiResult {
    req.require_database(Access::Read)?;
    let sees_all = req.user.is_admin();
    let transactions: Vec<Value> = req
        .database
        .running_transactions()
        .into_iter()
        .filter(|t| t.begun_by().stream && (sees_all || may_use(&req.user, t.begun_by())))
        .map(|t| json!({"id": t.id(), "state": "running"}))
        .collect();
    Ok(ApiResponse::json(
        200,
        &json!({"transactions": transactions}),
    ))
}

fn status(req: &ApiRequest, id: &str) -> ApiResult {
    req.require_database(Access::Read)?;
    let transaction = find(&req.database, &req.user, id)?;
    Ok(answer(200, &*transaction))
}

async fn commit(req: &ApiRequest, id: &str) -> ApiResult {
    req.require_database(Access::Read)?;
    let transaction = find(&req.database, &req.user, id)?;
    let committing = Arc::clone(&transaction);
    let durability = blocking(move || committing.commit()).await?;
    if let Some(durability) = durability {
        durability.await?;
    }
    Ok(answer(200, &*transaction))
}

async fn abort(req: &ApiRequest, id: &str) -> ApiResult {
    req.require_database(Access::Read)?;
    let transaction = find(&req.database, &req.user, id)?;
    let aborting = Arc::clone(&transaction);
    blocking(move || aborting.abort()).await?;
    Ok(answer(200, &*transaction))
}

/// Who begins a client stream transaction: the caller, as its owner and with its rank. A
/// superuser's transaction has no owner name (only superusers use it by id).
fn beginner(caller: &Caller) -> Beginner {
    if caller.is_superuser() {
        Beginner::superuser()
    } else if caller.is_admin() {
        Beginner::client(caller.name(), Rank::Admin)
    } else {
        Beginner::client(caller.name(), Rank::User)
    }
}

/// True when `caller` may use a transaction `begun_by` began: a superuser may use any; a user
/// only their own (so not a superuser's, a request's own, or another user's).
fn may_use(caller: &Caller, begun_by: &Beginner) -> bool {
    caller.is_superuser()
        || (caller.is_authenticated()
            && !begun_by.user.is_empty()
            && begun_by.user == caller.name())
}

/// The transaction `id` of `database`, when `caller` may use it ([`may_use`]); otherwise, as for
/// an id that names none, 404/1655 with the same message. Every lookup of a transaction by id
/// for a request goes through here.
pub(crate) fn find(
    database: &Arc<dyn DatabaseOps>,
    caller: &Caller,
    id: &str,
) -> Result<Arc<dyn TransactionOps>> {
    let transaction = database.transaction(id)?;
    if may_use(caller, transaction.begun_by()) {
        Ok(transaction)
    } else {
        Err(transaction_not_found(id))
    }
}

/// The database a request of a row that honours `x-arango-trx-id` runs in: the transaction's
/// view when the header names a running one the caller may use (404/1655 when it names none
/// the caller may use, 410/1654 when it was aborted, 400/1653 when it committed), else the
/// database itself.
pub(crate) fn in_transaction(
    database: &Arc<dyn DatabaseOps>,
    caller: &Caller,
    req_header: Option<&str>,
) -> Result<Option<Arc<dyn DatabaseOps>>> {
    let Some(id) = req_header.map(str::trim).filter(|id| !id.is_empty()) else {
        return Ok(None);
    };
    let transaction = find(database, caller, id)?;
    match transaction.status() {
        TransactionStatus::Running => Ok(Some(transaction.database())),
        TransactionStatus::Aborted => Err(ArangoError::with_message(
            quince_errors::TRANSACTION_ABORTED,
            format!("transaction {id} aborted"),
        )),
        TransactionStatus::Committed => Err(ArangoError::with_message(
            quince_errors::TRANSACTION_DISALLOWED_OPERATION,
            format!("transaction {id} is already committed"),
        )),
    }
}

/// The id of `/_api/transaction/{id}`: a positive decimal number (400/10 "illegal transaction
/// ID" otherwise, before any lookup).
fn transaction_id(id: &str) -> Result<&str> {
    match id.parse::<u64>() {
        Ok(n) if n > 0 => Ok(id),
        _ => Err(ArangoError::with_message(
            quince_errors::BAD_PARAMETER,
            "illegal transaction ID",
        )),
    }
}
