//! AQL over HTTP: `/_api/cursor`, `/_api/explain`, `/_api/query...`, `/_api/query-cache...`
//! and `/_api/aqlfunction` (ArangoDB 3.12's AQL HTTP API).
//!
//! What it is: the request parsing, the caller's permissions and the rendering of the query
//! service's answers (`quince_aql::QueryService`): cursors (`cursor.rs`), explain and parse,
//! the query registry and the results cache (`manage.rs`), and the answer for user-defined
//! functions, which need JavaScript (`functions.rs`).
//!
//! What it is not: the language or its execution (`quince-aql`).
//!
//! Invariants: a query runs against its request's database guarded by the caller's rule
//! (`quince_ops::guard`), so every collection it reaches, named in its text or found at run
//! time, is checked for reading, and it runs only after every collection it writes is checked
//! for writing; queries run on the
//! blocking pool, never on a runtime worker; cursors and listings are per database and, for
//! cursors, per user.

mod cursor;
mod functions;
mod manage;

pub(crate) use cursor::handle as cursor;
pub(crate) use functions::handle as aql_functions;
pub(crate) use manage::{explain, query, query_cache, query_plan_cache};

use std::sync::Arc;

use quince_aql::plan::UsedCollection;
use quince_errors::Result;
use quince_ops::{AccessKind, AccessRule, DatabaseOps};

use crate::permission::{Access, QueryAccess};
use crate::request::ApiRequest;

/// The API as an owned handle, for work moved to the blocking pool.
fn shared(api: &crate::state::Api) -> Result<std::sync::Arc<crate::state::Api>> {
    api.weak()
        .upgrade()
        .ok_or_else(|| quince_errors::ArangoError::new(quince_errors::SHUTTING_DOWN))
}

/// The database a query of `req` runs against: the request's (a transaction's view when it
/// came with `x-arango-trx-id`), guarded by the caller's rule, so that every collection the
/// query reaches, at compile time or at run time, is checked; and that rule, for
/// [`authorize`].
fn guarded(req: &ApiRequest) -> Result<(Arc<dyn DatabaseOps>, Arc<QueryAccess>)> {
    req.require_database(Access::Read)?;
    let rule = QueryAccess::of(req);
    let database = quince_ops::guard(Arc::clone(&req.database), Arc::clone(&rule) as _);
    Ok((database, rule))
}

/// Checks the caller may write every collection the query writes (those it reads passed the
/// guard when the query was compiled).
fn authorize(rule: &QueryAccess, database: &str, collections: &[UsedCollection]) -> Result<()> {
    for used in collections {
        let access = match (used.write, used.exclusive) {
            (_, true) => AccessKind::Exclusive,
            (true, false) => AccessKind::Write,
            (false, false) => AccessKind::Read,
        };
        rule.check(database, &used.name, access)?;
    }
    Ok(())
}
