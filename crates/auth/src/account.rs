//! [`Account`]: one user as Quince keeps it, its permission rules, and its stored form.
//!
//! What it is: the user's name, `active` flag, `extra` object, password hash, grants per
//! database and collection, access tokens, and credential generation; how a level is resolved
//! from the grants; and the JSON document kept in `_system/_users`.
//!
//! What it is not: a place that changes accounts (that is [`crate::Users`], which replaces
//! whole accounts so readers always see a consistent one).
//!
//! Invariants: a missing grant is `none` (deny by default); a collection without a grant of
//! its own falls back, in order, to the database's `*` collection grant, the `*` database's
//! grant for that collection, its `*` collection grant, and finally the database level; the
//! stored document never holds a password, only its hash, and access tokens only as digests.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::level::Level;

/// The wildcard that names every database or every collection in a grant.
pub const ANY: &str = "*";

/// The grants of one database (or of `*`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DatabaseGrants {
    /// The database level, when one was granted.
    pub level: Option<Level>,
    /// Levels of single collections (or `*`).
    pub collections: BTreeMap<String, Level>,
}

impl DatabaseGrants {
    fn is_empty(&self) -> bool {
        self.level.is_none() && self.collections.is_empty()
    }
}

/// The `valid_until` of an access token that does not expire (one made without `valid_until`).
pub const NEVER_EXPIRES: u64 = 0;

/// One access token of a user (`/_api/token`). The token itself is not kept, only its digest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessToken {
    /// Its number, unique per user.
    pub id: u64,
    /// The name the user gave it (unique per user).
    pub name: String,
    /// Unix seconds after which it no longer authenticates; [`NEVER_EXPIRES`] (0) for a
    /// token made without `valid_until`, which does not expire.
    pub valid_until: u64,
    /// Unix seconds when it was made.
    pub created_at: u64,
    /// A short public identifier derived from the digest, for listings.
    pub fingerprint: String,
    /// SHA-256 of the token, hex.
    pub digest: String,
}

impl AccessToken {
    /// True while the token may be used: always for a token that does not expire.
    pub fn is_active(&self, now: u64) -> bool {
        self.valid_until == NEVER_EXPIRES || now < self.valid_until
    }

    /// The token's description as `/_api/token` lists it (never the token).
    pub fn describe(&self, now: u64) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "valid_until": self.valid_until,
            "created_at": self.created_at,
            "fingerprint": self.fingerprint,
            "active": self.is_active(now),
        })
    }
}

/// One user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Account {
    /// The user name.
    pub name: String,
    /// Inactive users cannot authenticate.
    pub active: bool,
    /// Free-form data the client stores with the user.
    pub extra: Map<String, Value>,
    /// The Argon2id PHC string of the password.
    pub password_hash: String,
    /// Grants by database name (or `*`).
    pub grants: BTreeMap<String, DatabaseGrants>,
    /// Access tokens.
    pub tokens: Vec<AccessToken>,
    /// The id the next access token gets.
    pub next_token_id: u64,
    /// Drawn anew at every change; tokens and cached verifications from another generation
    /// do not authenticate.
    pub generation: u64,
}

impl Account {
    /// The level of this user on database `db` (which may not exist).
    pub fn database_level(&self, db: &str) -> Level {
        self.grants
            .get(db)
            .and_then(|g| g.level)
            .or_else(|| self.grants.get(ANY).and_then(|g| g.level))
            .unwrap_or(Level::None)
    }

    /// The level of this user on collection `collection` of database `db`.
    pub fn collection_level(&self, db: &str, collection: &str) -> Level {
        self.explicit_collection_level(db, collection)
            .unwrap_or_else(|| self.database_level(db))
    }

    /// The collection level from collection grants only, if any applies.
    pub fn explicit_collection_level(&self, db: &str, collection: &str) -> Option<Level> {
        let in_db = |name: &str| {
            self.grants
                .get(name)
                .and_then(|g| g.collections.get(collection).or(g.collections.get(ANY)))
                .copied()
        };
        in_db(db).or_else(|| in_db(ANY))
    }

    /// Sets (`Some`) or clears (`None`) a grant on a database, or on a collection of it.
    pub fn set_grant(&mut self, db: &str, collection: Option<&str>, level: Option<Level>) {
        let grants = self.grants.entry(db.to_owned()).or_default();
        match (collection, level) {
            (None, level) => grants.level = level,
            (Some(c), Some(level)) => {
                grants.collections.insert(c.to_owned(), level);
            }
            (Some(c), None) => {
                grants.collections.remove(c);
            }
        }
        if grants.is_empty() {
            self.grants.remove(db);
        }
    }

    /// `{user, active, extra}`: what `/_api/user` shows of an account.
    pub fn public(&self) -> Value {
        json!({"user": self.name, "active": self.active, "extra": self.extra})
    }

    /// The document stored in `_users`.
    pub fn to_document(&self) -> Value {
        let grants: Map<String, Value> = self
            .grants
            .iter()
            .map(|(db, g)| {
                let collections: Map<String, Value> = g
                    .collections
                    .iter()
                    .map(|(c, l)| (c.clone(), Value::from(l.as_str())))
                    .collect();
                let level = g.level.map_or(Value::Null, |l| Value::from(l.as_str()));
                (
                    db.clone(),
                    json!({"level": level, "collections": collections}),
                )
            })
            .collect();
        let tokens: Vec<Value> = self
            .tokens
            .iter()
            .map(|t| {
                json!({
                    "id": t.id,
                    "name": t.name,
                    "validUntil": t.valid_until,
                    "createdAt": t.created_at,
                    "fingerprint": t.fingerprint,
                    "digest": t.digest,
                })
            })
            .collect();
        json!({
            "user": self.name,
            "active": self.active,
            "extra": self.extra,
            "passwordHash": self.password_hash,
            "grants": grants,
            "tokens": tokens,
            "nextTokenId": self.next_token_id,
            "generation": self.generation,
        })
    }

    /// The account of a stored document; `None` when the document is not one (it is then
    /// skipped and logged by the caller: a damaged account must not authenticate anybody).
    pub fn from_document(document: &Value) -> Option<Account> {
        let name = document.get("user")?.as_str()?.to_owned();
        let mut grants = BTreeMap::new();
        for (db, g) in document.get("grants")?.as_object()? {
            let level = match g.get("level")? {
                Value::Null => None,
                Value::String(s) => Some(Level::parse(s)?),
                _ => return None,
            };
            let mut collections = BTreeMap::new();
            for (c, l) in g.get("collections")?.as_object()? {
                collections.insert(c.clone(), Level::parse(l.as_str()?)?);
            }
            grants.insert(db.clone(), DatabaseGrants { level, collections });
        }
        let mut tokens = Vec::new();
        for t in document.get("tokens")?.as_array()? {
            tokens.push(AccessToken {
                id: t.get("id")?.as_u64()?,
                name: t.get("name")?.as_str()?.to_owned(),
                valid_until: t.get("validUntil")?.as_u64()?,
                created_at: t.get("createdAt")?.as_u64()?,
                fingerprint: t.get("fingerprint")?.as_str()?.to_owned(),
                digest: t.get("digest")?.as_str()?.to_owned(),
            });
        }
        Some(Account {
            name,
            active: document.get("active")?.as_bool()?,
            extra: document.get("extra")?.as_object()?.clone(),
            password_hash: document.get("passwordHash")?.as_str()?.to_owned(),
            grants,
            tokens,
            next_token_id: document.get("nextTokenId")?.as_u64()?,
            generation: document.get("generation")?.as_u64()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account() -> Account {
        Account {
            name: "alice".into(),
            active: true,
            extra: Map::new(),
            password_hash: "$argon2id$x".into(),
            grants: BTreeMap::new(),
            tokens: Vec::new(),
            next_token_id: 1,
            generation: 42,
        }
    }

    #[test]
    fn no_grant_means_no_access() {
        let a = account();
        assert_eq!(a.database_level("db"), Level::None);
        assert_eq!(a.collection_level("db", "c"), Level::None);
    }

    #[test]
    fn collections_fall_back_to_wildcards_then_to_the_database() {
        let mut a = account();
        a.set_grant("db", None, Some(Level::ReadWrite));
        assert_eq!(a.collection_level("db", "c"), Level::ReadWrite);
        a.set_grant("db", Some("c"), Some(Level::ReadOnly));
        assert_eq!(a.collection_level("db", "c"), Level::ReadOnly);
        assert_eq!(a.collection_level("db", "d"), Level::ReadWrite);
        a.set_grant(ANY, Some("d"), Some(Level::None));
        assert_eq!(a.collection_level("db", "d"), Level::None);
        a.set_grant("db", Some(ANY), Some(Level::ReadOnly));
        assert_eq!(a.collection_level("db", "d"), Level::ReadOnly);
        a.set_grant("db", Some("c"), None);
        assert_eq!(a.collection_level("db", "c"), Level::ReadOnly);
        // The `*` database grant applies to databases without one of their own.
        a.set_grant(ANY, None, Some(Level::ReadOnly));
        assert_eq!(a.database_level("other"), Level::ReadOnly);
        assert_eq!(a.database_level("db"), Level::ReadWrite);
        a.set_grant("db", None, None);
        assert_eq!(a.database_level("db"), Level::ReadOnly);
    }

    #[test]
    fn cleared_grants_leave_no_empty_entries() {
        let mut a = account();
        a.set_grant("db", Some("c"), Some(Level::ReadOnly));
        a.set_grant("db", Some("c"), None);
        assert!(a.grants.is_empty());
    }

    #[test]
    fn documents_round_trip_without_the_password() {
        let mut a = account();
        a.extra.insert("k".into(), json!([1, {"x": null}]));
        a.set_grant("db", None, Some(Level::ReadWrite));
        a.set_grant("db", Some("c"), Some(Level::None));
        a.set_grant(ANY, Some(ANY), Some(Level::ReadOnly));
        a.tokens.push(AccessToken {
            id: 3,
            name: "ci".into(),
            valid_until: 100,
            created_at: 50,
            fingerprint: "v1.abc".into(),
            digest: "00".repeat(32),
        });
        let document = a.to_document();
        assert_eq!(Account::from_document(&document), Some(a.clone()));
        assert_eq!(
            a.public(),
            json!({"user": "alice", "active": true, "extra": a.extra})
        );
        let mut broken = document.clone();
        broken["grants"]["db"]["level"] = json!("admin");
        assert_eq!(Account::from_document(&broken), None);
    }
}
