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
//! Invariants: a query runs only after the caller is checked for read access to every
//! collection it reads and write access to every collection it writes; queries run on the
//! blocking pool, never on a runtime worker; cursors and listings are per database and, for
//! cursors, per user.

mod cursor;
mod functions;
mod manage;

pub(crate) use cursor::handle as cursor;
pub(crate) use functions::handle as aql_functions;
pub(crate) use manage::{explain, query, query_cache, query_plan_cache};

use quince_aql::plan::UsedCollection;
use quince_errors::Result;

use crate::permission::Access;
use crate::request::ApiRequest;

/// The API as an owned handle, for work moved to the blocking pool.
fn shared(api: &crate::state::Api) -> Result<std::sync::Arc<crate::state::Api>> {
    api.weak()
        .upgrade()
        .ok_or_else(|| quince_errors::ArangoError::new(quince_errors::SHUTTING_DOWN))
}

/// Checks the caller may read every collection the query reads and write every one it writes.
fn authorize(req: &ApiRequest, collections: &[UsedCollection]) -> Result<()> {
    req.require_database(Access::Read)?;
    for used in collections {
        let access = if used.write {
            Access::Write
        } else {
            Access::Read
        };
        req.require(access, &used.name)?;
    }
    Ok(())
}
