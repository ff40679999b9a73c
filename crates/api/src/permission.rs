//! Who sent a request and what they may do: [`Caller`], [`Access`], and the checks handlers
//! make (`req.require(Access::Write, collection)?`).
//!
//! What it is: the caller of one request (a superuser, a user with a snapshot of their
//! account, or nobody on an open path), its level on the request's database, the server's
//! read-only mode as it was when the request arrived, and the rules of
//! <https://docs.arangodb.com/3.12/develop/http-api/users/>: reading needs `ro`, writing `rw`; a collection's level
//! falls back to the database's; creating or dropping collections needs `rw` on the database;
//! administration (users of others, databases) needs `rw` on `_system`.
//!
//! What it is not: authentication (`crate::auth`) or the pipeline's database check (401 for
//! `none`, before any handler), which is [`admit_database`] here but runs in the pipeline.
//!
//! Invariants: deny by default: an anonymous caller has level `none` everywhere; a denied
//! collection operation is 403 with errorNum 11; in read-only mode every write is 403/1004;
//! `_system/_users` is invisible to users (accounts change only through `/_api/user`), and
//! read-only for superusers.

use std::sync::Arc;

use http::Method;
use quince_auth::{Account, Level, ROOT_USER};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATA_SOURCE_NOT_FOUND, ARANGO_READ_ONLY,
    FORBIDDEN,
};
use quince_ops::{AccessKind, AccessRule, DatabaseOps, Engine, USERS_COLLECTION};

use crate::error::unauthorized;
use crate::request::ApiRequest;

/// The name of the system database.
const SYSTEM_DATABASE: &str = "_system";

/// What a handler is about to do with a collection or database.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Read documents or properties.
    Read,
    /// Change documents, properties or the set of collections.
    Write,
}

/// Who the caller is.
#[derive(Clone, Debug)]
enum Who {
    /// Full rights: a superuser JWT, or authentication switched off.
    Superuser,
    /// A user, as their account was when the request was authenticated.
    User(Arc<Account>),
    /// No credentials (only on open paths).
    Nobody,
}

/// The caller of one request and what they may do (a snapshot: an account changed during
/// the request applies from the next request on).
#[derive(Clone, Debug)]
pub struct Caller {
    who: Who,
    /// The server was in read-only mode when the request arrived.
    read_only: bool,
}

impl Caller {
    /// A caller with every right (superuser tokens; authentication off; tests).
    pub fn superuser() -> Caller {
        Caller {
            who: Who::Superuser,
            read_only: false,
        }
    }

    /// An authenticated user.
    pub(crate) fn user(account: Arc<Account>) -> Caller {
        Caller {
            who: Who::User(account),
            read_only: false,
        }
    }

    /// Nobody (an open path without credentials).
    pub(crate) fn nobody() -> Caller {
        Caller {
            who: Who::Nobody,
            read_only: false,
        }
    }

    /// The same caller, in a server that is (or is not) in read-only mode.
    pub(crate) fn in_read_only_mode(mut self, read_only: bool) -> Caller {
        self.read_only = read_only;
        self
    }

    /// The user's name: `root` for a superuser (as ArangoDB's echo reports), empty for
    /// nobody.
    pub fn name(&self) -> &str {
        match &self.who {
            Who::Superuser => ROOT_USER,
            Who::User(account) => &account.name,
            Who::Nobody => "",
        }
    }

    /// True when the caller authenticated.
    pub fn is_authenticated(&self) -> bool {
        !matches!(self.who, Who::Nobody)
    }

    /// True for a superuser.
    pub fn is_superuser(&self) -> bool {
        matches!(self.who, Who::Superuser)
    }

    /// The account, for a user.
    pub(crate) fn account(&self) -> Option<&Arc<Account>> {
        match &self.who {
            Who::User(account) => Some(account),
            _ => None,
        }
    }

    /// True for a superuser or a user with `rw` on `_system`: they administer users and
    /// databases.
    pub fn is_admin(&self) -> bool {
        self.level_on(SYSTEM_DATABASE) == Level::ReadWrite
    }

    /// True when the server was read-only when the request arrived.
    pub fn read_only(&self) -> bool {
        self.read_only
    }

    /// The caller's level on database `db` (any database, existing or not).
    pub fn level_on(&self, db: &str) -> Level {
        match &self.who {
            Who::Superuser => Level::ReadWrite,
            Who::User(account) => account.database_level(db),
            Who::Nobody => Level::None,
        }
    }

    /// The one rule of collection access: why the caller may not `access` collection
    /// `collection` of database `db` (`None`: they may). Every path that reads or writes a
    /// collection asks this, directly ([`ApiRequest::require`]) or through a guarded database
    /// ([`QueryAccess`]).
    fn collection_denial(&self, db: &str, collection: &str, access: AccessKind) -> Option<Denial> {
        let users_collection = db == SYSTEM_DATABASE && collection == USERS_COLLECTION;
        if users_collection && !self.is_superuser() {
            return Some(Denial::Invisible);
        }
        let level = self.collection_level(db, collection);
        if !level.can_read() {
            return Some(Denial::NoAccess);
        }
        if access.writes() {
            if !level.can_write() {
                return Some(Denial::ReadOnly);
            }
            if self.read_only {
                return Some(Denial::ServerReadOnly);
            }
        }
        None
    }

    /// The caller's level on collection `collection` of database `db`.
    fn collection_level(&self, db: &str, collection: &str) -> Level {
        let users_collection = db == SYSTEM_DATABASE && collection == USERS_COLLECTION;
        match &self.who {
            Who::Superuser if users_collection => Level::ReadOnly,
            Who::Superuser => Level::ReadWrite,
            Who::User(_) if users_collection => Level::None,
            Who::User(account) => account.collection_level(db, collection),
            Who::Nobody => Level::None,
        }
    }

    /// 403/1004 for a write while the server is read-only.
    pub fn check_writable(&self) -> Result<()> {
        if self.read_only {
            Err(ArangoError::new(ARANGO_READ_ONLY))
        } else {
            Ok(())
        }
    }
}

/// Why a caller may not use a collection as asked ([`Caller::collection_denial`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Denial {
    /// A collection no user may see (`_system/_users`): it answers as a missing one.
    Invisible,
    /// Level `none`.
    NoAccess,
    /// A write with level `ro`.
    ReadOnly,
    /// A write while the server is in read-only mode.
    ServerReadOnly,
}

/// The caller's rule as a query sees it: a guarded database ([`quince_ops::guard`]) asks it for
/// every collection a query reaches, and the cursor and explain endpoints for the collections
/// a query writes. Its errors are ArangoDB's for a query: 404/1203 for a collection the caller
/// may not see, 403/11 `forbidden: c [read]` without access, 403/1004 `read only: c [write]`
/// for a write with `ro` (`read only` alone in the server's read-only mode).
pub(crate) struct QueryAccess {
    caller: Caller,
}

impl QueryAccess {
    /// The rule of the caller of `req`.
    pub(crate) fn of(req: &ApiRequest) -> Arc<QueryAccess> {
        Arc::new(QueryAccess {
            caller: req.user.clone(),
        })
    }
}

impl AccessRule for QueryAccess {
    fn check(&self, database: &str, collection: &str, access: AccessKind) -> Result<()> {
        let Some(denial) = self.caller.collection_denial(database, collection, access) else {
            return Ok(());
        };
        let mode = access.as_str();
        Err(match denial {
            Denial::Invisible => ArangoError::with_message(
                ARANGO_DATA_SOURCE_NOT_FOUND,
                format!("collection or view not found: {collection}"),
            ),
            Denial::NoAccess => {
                ArangoError::with_message(FORBIDDEN, format!("forbidden: {collection} [{mode}]"))
            }
            Denial::ReadOnly => ArangoError::with_message(
                ARANGO_READ_ONLY,
                format!("read only: {collection} [{mode}]"),
            ),
            Denial::ServerReadOnly => ArangoError::new(ARANGO_READ_ONLY),
        })
    }
}

/// 403 with errorNum 11.
pub(crate) fn forbidden() -> ArangoError {
    ArangoError::new(FORBIDDEN)
}

fn allows(level: Level, access: Access) -> bool {
    match access {
        Access::Read => level.can_read(),
        Access::Write => level.can_write(),
    }
}

impl ApiRequest {
    /// Checks that the caller may `access` collection `collection` (a name, or a numeric id)
    /// of the request's database: 403/11 when not, 403/1004 for a write in read-only mode.
    pub fn require(&self, access: Access, collection: &str) -> Result<()> {
        let name = if !collection.is_empty() && collection.bytes().all(|b| b.is_ascii_digit()) {
            // An id names the collection it belongs to; grants are by name.
            self.database
                .collection(collection)
                .map(|c| c.name())
                .unwrap_or_else(|_| collection.to_owned())
        } else {
            collection.to_owned()
        };
        let kind = match access {
            Access::Read => AccessKind::Read,
            Access::Write => AccessKind::Write,
        };
        match self
            .user
            .collection_denial(self.database.name(), &name, kind)
        {
            None => Ok(()),
            Some(Denial::ServerReadOnly) => Err(ArangoError::new(ARANGO_READ_ONLY)),
            Some(Denial::Invisible | Denial::NoAccess | Denial::ReadOnly) => Err(forbidden()),
        }
    }

    /// Checks that the caller may `access` the request's database itself (create, drop or
    /// rename collections: `Write`): 403/11 when not, 403/1004 for a write in read-only mode.
    pub fn require_database(&self, access: Access) -> Result<()> {
        if !allows(self.user.level_on(self.database.name()), access) {
            return Err(forbidden());
        }
        if access == Access::Write {
            self.user.check_writable()?;
        }
        Ok(())
    }

    /// Checks that the caller administers the server (`rw` on `_system`): 403/11 when not.
    pub fn require_admin(&self) -> Result<()> {
        if self.user.is_admin() {
            Ok(())
        } else {
            Err(forbidden())
        }
    }

    /// True when the caller may read collection `collection` of the request's database (for
    /// listings that leave out what the caller cannot see).
    pub fn can_read(&self, collection: &str) -> bool {
        self.user
            .collection_denial(self.database.name(), collection, AccessKind::Read)
            .is_none()
    }
}

/// The pipeline's database step (§1.1, steps 3 and 4): the database of the request, or the
/// error that hides it. Whether a database exists is told only to callers who would have
/// access to a database of that name (404/1228), so names cannot be probed: for everyone
/// else a missing database answers as an existing one would. On other paths that is 401;
/// `open` paths (which need no credentials and do not depend on the database: login,
/// availability, and, with `--server.authentication-system-only`, paths outside `/_`, which
/// no route serves) run in `_system` instead, answering exactly as they would in the
/// existing database. An existing database needs a level other than `none`, except on the
/// paths every authenticated user may use (`/_api/user/*`, `/_api/token/*`: one's own
/// account).
pub(crate) fn admit_database(
    engine: &dyn Engine,
    caller: &Caller,
    name: &str,
    segments: &[String],
    open: bool,
) -> Result<Arc<dyn DatabaseOps>> {
    let Some(database) = engine.database(name) else {
        if caller.level_on(name) != Level::None {
            return Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND));
        }
        if open {
            return engine
                .database(SYSTEM_DATABASE)
                .ok_or_else(|| ArangoError::new(ARANGO_DATABASE_NOT_FOUND));
        }
        return Err(unauthorized());
    };
    if open {
        return Ok(database);
    }
    if !caller.is_authenticated() {
        return Err(unauthorized());
    }
    let own_account_path = matches!(
        segments.first().zip(segments.get(1)),
        Some((a, b)) if a == "_api" && (b == "user" || b == "token")
    );
    if caller.level_on(name) == Level::None && !own_account_path {
        return Err(unauthorized());
    }
    Ok(database)
}

/// The coarse check for families that do not check levels themselves: reading needs only
/// what the pipeline checked (a level other than `none`); any other method needs `rw` on the
/// database and a writable server.
pub(crate) fn require_for_method(req: &ApiRequest) -> Result<()> {
    if matches!(req.method, Method::GET | Method::HEAD | Method::OPTIONS) {
        Ok(())
    } else {
        req.require_database(Access::Write)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use quince_auth::DatabaseGrants;
    use serde_json::Map;

    use super::*;

    /// One database's grants in a test: name, level, collection levels.
    type Grant<'a> = (&'a str, Option<Level>, &'a [(&'a str, Level)]);

    fn account(grants: &[Grant<'_>]) -> Arc<Account> {
        let grants = grants
            .iter()
            .map(|(db, level, collections)| {
                (
                    db.to_string(),
                    DatabaseGrants {
                        level: *level,
                        collections: collections
                            .iter()
                            .map(|(c, l)| (c.to_string(), *l))
                            .collect(),
                    },
                )
            })
            .collect::<BTreeMap<_, _>>();
        Arc::new(Account {
            name: "u".into(),
            active: true,
            extra: Map::new(),
            password_hash: String::new(),
            grants,
            tokens: Vec::new(),
            next_token_id: 1,
            generation: 1,
        })
    }

    #[test]
    fn nobody_has_no_level_and_superusers_have_every_level() {
        let nobody = Caller::nobody();
        assert_eq!(nobody.level_on("db"), Level::None);
        assert!(!nobody.is_admin() && !nobody.is_authenticated());
        let su = Caller::superuser();
        assert_eq!(su.collection_level("db", "c"), Level::ReadWrite);
        assert!(su.is_admin());
        assert_eq!(su.name(), "root");
    }

    #[test]
    fn the_users_collection_is_hidden_from_users_and_read_only_for_superusers() {
        let root_like = account(&[("*", Some(Level::ReadWrite), &[("*", Level::ReadWrite)])]);
        let user = Caller::user(root_like);
        assert_eq!(user.collection_level("_system", "_users"), Level::None);
        assert_eq!(user.collection_level("other", "_users"), Level::ReadWrite);
        assert!(user.is_admin());
        assert_eq!(
            Caller::superuser().collection_level("_system", "_users"),
            Level::ReadOnly
        );
    }

    #[test]
    fn admins_are_users_with_rw_on_system() {
        let ro = Caller::user(account(&[("_system", Some(Level::ReadOnly), &[])]));
        assert!(!ro.is_admin());
        let rw = Caller::user(account(&[("_system", Some(Level::ReadWrite), &[])]));
        assert!(rw.is_admin());
        assert!(rw
            .clone()
            .in_read_only_mode(true)
            .check_writable()
            .unwrap_err()
            .is(ARANGO_READ_ONLY));
        assert!(rw.check_writable().is_ok());
    }
}
