//! [`Users`]: every account, in memory for fast checks and durably in `_system/_users`.
//!
//! What it is: the registry the API asks "who is this?" and "may they?": create, change and
//! remove accounts, grant and revoke levels, make and revoke access tokens, and verify
//! passwords (through [`VerifiedCache`], so steady-state Basic authentication does not hash),
//! access tokens and the generation of user JWTs.
//!
//! What it is not: HTTP (statuses come from the error codes), or the token secrets
//! ([`crate::TokenKeys`]).
//!
//! Invariants: a change is written (synced) to `_users` before it becomes visible in memory
//! and before the reply, so a crash never brings back a revoked permission or an old
//! password; changes are serialised by one lock, and
//! readers see whole accounts (each change replaces the `Arc`); every change to credentials,
//! activity or permissions draws a new random generation, which voids the user's earlier
//! JWTs and cached verifications; Argon2 runs at most [`HASHES_IN_FLIGHT_MAX`] at a time.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use parking_lot::{Condvar, Mutex, RwLock};
use quince_errors::{
    ArangoError, Result, ARANGO_DUPLICATE_NAME, FORBIDDEN, HTTP_BAD_PARAMETER, USER_DUPLICATE,
    USER_INVALID_NAME, USER_INVALID_PASSWORD, USER_NOT_FOUND,
};
use quince_ops::{Engine, UserDocuments, USER_DOCUMENTS_MAX};
use rand::RngCore;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::access_token::{looks_like_token, new_token, token_digest, token_fingerprint};
use crate::account::{AccessToken, Account, DatabaseGrants, ANY};
use crate::jwt::unix_now_secs;
use crate::level::Level;
use crate::password::{hash_password, verify_password, PASSWORD_BYTES_MAX};
use crate::verified::VerifiedCache;

/// The superuser account every installation starts with.
pub const ROOT_USER: &str = "root";

/// The longest user name, in bytes.
pub const USER_NAME_BYTES_MAX: usize = 256;

/// The most access tokens one user may hold.
pub const TOKENS_PER_USER_MAX: usize = 64;

/// The longest access token name, in bytes.
pub const TOKEN_NAME_BYTES_MAX: usize = 256;

/// The most Argon2 computations running at once (each takes about 19 MiB).
pub const HASHES_IN_FLIGHT_MAX: usize = 4;

/// A new account's settings.
#[derive(Clone, Debug, Default)]
pub struct NewUser {
    /// The name.
    pub name: String,
    /// The password (empty when absent, as in ArangoDB).
    pub password: String,
    /// `active` (true when absent).
    pub active: bool,
    /// `extra`.
    pub extra: Map<String, Value>,
}

/// How a change treats `extra`.
#[derive(Clone, Debug)]
pub enum ExtraChange {
    /// Keep it.
    Keep,
    /// Merge these attributes into it (PATCH).
    Merge(Map<String, Value>),
    /// Replace it (PUT).
    Replace(Map<String, Value>),
}

/// A change of an account's settings.
#[derive(Clone, Debug)]
pub struct AccountChange {
    /// A new password.
    pub password: Option<String>,
    /// A new `active`.
    pub active: Option<bool>,
    /// What happens to `extra`.
    pub extra: ExtraChange,
}

/// Every account.
pub struct Users {
    /// Where accounts are kept (replaced by [`Users::reload`]).
    store: RwLock<UserDocuments>,
    /// Accounts by name.
    accounts: RwLock<HashMap<String, Arc<Account>>>,
    /// Access-token digest → (user, token id).
    token_index: RwLock<HashMap<String, (String, u64)>>,
    /// Serialises changes (read, write to disk, publish).
    changes: Mutex<()>,
    /// Recently verified passwords.
    verified: VerifiedCache,
    /// Bounds concurrent Argon2 runs.
    hashing: HashGate,
    /// Called after every stored change of an account (a cluster's coordinator tells the
    /// others to reload).
    changed: std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>,
}

impl Users {
    /// Loads every account from `_system/_users` (creating the collection on first start)
    /// and creates `root` with `root_password` when it does not exist. A stored root keeps
    /// its password whatever `root_password` says now, as in ArangoDB.
    pub fn open(engine: &dyn Engine, root_password: &str) -> Result<Users> {
        check_password(root_password)?;
        let store = UserDocuments::open(engine)?;
        let accounts = load_accounts(&store)?;
        let users = Users {
            store: RwLock::new(store),
            accounts: RwLock::new(HashMap::new()),
            token_index: RwLock::new(HashMap::new()),
            changes: Mutex::new(()),
            verified: VerifiedCache::default(),
            hashing: HashGate::default(),
            changed: std::sync::OnceLock::new(),
        };
        for account in accounts.into_values() {
            users.publish(None, account);
        }
        if users.account(ROOT_USER).is_none() {
            let mut grants = BTreeMap::new();
            grants.insert(
                ANY.to_owned(),
                DatabaseGrants {
                    level: Some(Level::ReadWrite),
                    collections: BTreeMap::from([(ANY.to_owned(), Level::ReadWrite)]),
                },
            );
            let root = Account {
                name: ROOT_USER.to_owned(),
                active: true,
                extra: Map::new(),
                password_hash: users.hash(root_password),
                grants,
                tokens: Vec::new(),
                next_token_id: 1,
                generation: new_generation(),
            };
            users
                .store
                .read()
                .put(&document_key(ROOT_USER), root.to_document())?;
            users.publish(None, Arc::new(root));
            tracing::info!(event = "auth.root_created", "created user root");
        }
        Ok(users)
    }

    /// Loads every account again from `_system/_users` of `engine` (after a restore replaced
    /// the databases): from now on the stored accounts, with their grants and tokens, are the
    /// ones that count. Passwords verified before stay verified only for accounts whose
    /// generation is unchanged.
    pub fn reload(&self, engine: &dyn Engine) -> Result<()> {
        let _changing = self.changes.lock();
        let store = UserDocuments::open(engine)?;
        let accounts = load_accounts(&store)?;
        *self.store.write() = store;
        self.accounts.write().clear();
        self.token_index.write().clear();
        for account in accounts.into_values() {
            self.publish(None, account);
        }
        Ok(())
    }

    /// Sets what to call after every stored change of an account (once; later calls are
    /// ignored). A cluster's coordinator uses it to make the other coordinators reload.
    pub fn on_change(&self, changed: Box<dyn Fn() + Send + Sync>) {
        let _ = self.changed.set(changed);
    }

    fn notify_changed(&self) {
        if let Some(changed) = self.changed.get() {
            changed();
        }
    }

    /// The account of that name.
    pub fn account(&self, name: &str) -> Option<Arc<Account>> {
        self.accounts.read().get(name).cloned()
    }

    /// Every account, sorted by name.
    pub fn accounts(&self) -> Vec<Arc<Account>> {
        let mut all: Vec<Arc<Account>> = self.accounts.read().values().cloned().collect();
        all.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }

    /// Creates an account. 1700 for a bad name, 1701 for a bad password, 1702 if it exists.
    /// Hashes the password: call it off the async workers.
    pub fn create(&self, user: NewUser) -> Result<Arc<Account>> {
        check_name(&user.name)?;
        check_password(&user.password)?;
        if self.account(&user.name).is_some() {
            return Err(ArangoError::new(USER_DUPLICATE));
        }
        let password_hash = self.hash(&user.password);
        let _changing = self.changes.lock();
        if self.account(&user.name).is_some() {
            return Err(ArangoError::new(USER_DUPLICATE));
        }
        if self.accounts.read().len() >= USER_DOCUMENTS_MAX {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("at most {USER_DOCUMENTS_MAX} users"),
            ));
        }
        let account = Account {
            name: user.name.clone(),
            active: user.active,
            extra: user.extra,
            password_hash,
            grants: BTreeMap::new(),
            tokens: Vec::new(),
            next_token_id: 1,
            generation: new_generation(),
        };
        self.store
            .read()
            .put(&document_key(&account.name), account.to_document())?;
        self.notify_changed();
        let account = Arc::new(account);
        self.publish(None, Arc::clone(&account));
        Ok(account)
    }

    /// Changes an account's settings. 1703 if it does not exist. Hashes a new password: call
    /// it off the async workers.
    pub fn change(&self, name: &str, change: AccountChange) -> Result<Arc<Account>> {
        if let Some(password) = &change.password {
            check_password(password)?;
        }
        if self.account(name).is_none() {
            return Err(ArangoError::new(USER_NOT_FOUND));
        }
        let password_hash = change.password.as_deref().map(|p| self.hash(p));
        self.modify(name, true, |account| {
            if let Some(hash) = password_hash {
                account.password_hash = hash;
            }
            if let Some(active) = change.active {
                account.active = active;
            }
            match change.extra {
                ExtraChange::Keep => {}
                ExtraChange::Merge(attributes) => account.extra.extend(attributes),
                ExtraChange::Replace(extra) => account.extra = extra,
            }
            Ok(())
        })
    }

    /// Removes an account. 1703 if it does not exist; root cannot be removed (403/11), so
    /// an installation always keeps its administrator.
    pub fn remove(&self, name: &str) -> Result<()> {
        if name == ROOT_USER {
            return Err(ArangoError::with_message(
                FORBIDDEN,
                "the root user cannot be removed",
            ));
        }
        let _changing = self.changes.lock();
        let current = self
            .account(name)
            .ok_or_else(|| ArangoError::new(USER_NOT_FOUND))?;
        self.store.read().remove(&document_key(name))?;
        self.notify_changed();
        self.accounts.write().remove(name);
        let mut index = self.token_index.write();
        for token in &current.tokens {
            index.remove(&token.digest);
        }
        Ok(())
    }

    /// Grants `level` (or clears the grant, with `None`) on database `db` (or `*`), or on
    /// one of its collections. 1703 if the user does not exist. Voids the user's tokens.
    pub fn set_grant(
        &self,
        name: &str,
        db: &str,
        collection: Option<&str>,
        level: Option<Level>,
    ) -> Result<Arc<Account>> {
        self.modify(name, true, |account| {
            account.set_grant(db, collection, level);
            Ok(())
        })
    }

    /// Removes every grant on database `db` (it was dropped), so that a new database of the
    /// same name starts with nobody's old permissions.
    pub fn forget_database(&self, db: &str) -> Result<()> {
        assert_ne!(db, ANY, "the wildcard is not a database");
        self.prune_grants(|grant_db, _| grant_db != db)
    }

    /// Removes every grant on collection `collection` of database `db` (it was dropped), so
    /// that a new collection of the same name starts with nobody's old permissions (as
    /// ArangoDB does on a drop; a rename leaves grants with the old name, as ArangoDB does).
    pub fn forget_collection(&self, db: &str, collection: &str) -> Result<()> {
        assert_ne!(collection, ANY, "the wildcard is not a collection");
        self.prune_grants(|grant_db, grant_collection| {
            !(grant_db == db && grant_collection == Some(collection))
        })
    }

    /// Keeps only the grants `keep(db, collection)` accepts (`collection` is `None` for a
    /// database's own level; wildcards are passed as `*`); every account that loses one is
    /// rewritten (a new generation).
    pub fn prune_grants(&self, keep: impl Fn(&str, Option<&str>) -> bool) -> Result<()> {
        let holders: Vec<String> = self
            .accounts()
            .into_iter()
            .filter(|a| {
                a.grants.iter().any(|(db, grants)| {
                    (grants.level.is_some() && !keep(db, None))
                        || grants.collections.keys().any(|c| !keep(db, Some(c)))
                })
            })
            .map(|a| a.name.clone())
            .collect();
        for name in holders {
            let pruned = self.modify(&name, true, |account| {
                account.grants.retain(|db, grants| {
                    if !keep(db, None) {
                        grants.level = None;
                    }
                    grants.collections.retain(|c, _| keep(db, Some(c)));
                    grants.level.is_some() || !grants.collections.is_empty()
                });
                Ok(())
            });
            match pruned {
                Ok(_) => {}
                // Removed meanwhile: nothing left to forget.
                Err(e) if e.is(USER_NOT_FOUND) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The active account `name` when `password` is known to be its password without
    /// hashing (it verified before and nothing changed since); else `None`, and the caller
    /// decides whether to pay for [`Users::verify_password`].
    pub fn verified_before(&self, name: &str, password: &str) -> Option<Arc<Account>> {
        let account = self.account(name).filter(|a| a.active)?;
        let fingerprint = self.verified.fingerprint(name, password);
        self.verified
            .is_verified(&fingerprint, account.generation)
            .then_some(account)
    }

    /// The active account `name` when `password` is its password. Hashes: call it off the
    /// async workers.
    pub fn verify_password(&self, name: &str, password: &str) -> Option<Arc<Account>> {
        let Some(account) = self.account(name).filter(|a| a.active) else {
            // As slow as a real check, so response times do not tell which names exist.
            let _slot = self.hashing.enter();
            verify_password(password, unknown_user_hash());
            return None;
        };
        let fingerprint = self.verified.fingerprint(name, password);
        if self.verified.is_verified(&fingerprint, account.generation) {
            return Some(account);
        }
        let matches = {
            let _slot = self.hashing.enter();
            verify_password(password, &account.password_hash)
        };
        if !matches {
            return None;
        }
        self.verified.remember(fingerprint, account.generation);
        Some(account)
    }

    /// The active account that owns access token `token` while the token is valid; when
    /// `name` is given it must be that account's name.
    pub fn verify_access_token(&self, name: Option<&str>, token: &str) -> Option<Arc<Account>> {
        if !looks_like_token(token) {
            return None;
        }
        let digest = token_digest(token);
        let (owner, id) = self.token_index.read().get(&digest).cloned()?;
        if name.is_some_and(|n| n != owner) {
            return None;
        }
        let account = self.account(&owner).filter(|a| a.active)?;
        let now = unix_now_secs();
        account
            .tokens
            .iter()
            .any(|t| t.id == id && t.digest == digest && t.is_active(now))
            .then_some(account)
    }

    /// The active account `name` if a JWT naming it with `generation` is still good: tokens
    /// Quince issued carry the generation and die with it; a user token made elsewhere with
    /// the secret (no `gen`) is as good as the secret.
    pub fn verify_token_user(&self, name: &str, generation: Option<u64>) -> Option<Arc<Account>> {
        let account = self.account(name).filter(|a| a.active)?;
        match generation {
            Some(g) if g != account.generation => None,
            _ => Some(account),
        }
    }

    /// Makes an access token for `name`, valid until `valid_until` (Unix seconds, in the
    /// future) or, when `None`, without expiry; returns its record and the token text (shown
    /// once).
    pub fn create_token(
        &self,
        name: &str,
        token_name: &str,
        valid_until: Option<u64>,
    ) -> Result<(AccessToken, String)> {
        if token_name.is_empty() || token_name.len() > TOKEN_NAME_BYTES_MAX {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("a token name has 1 to {TOKEN_NAME_BYTES_MAX} bytes"),
            ));
        }
        let now = unix_now_secs();
        if valid_until.is_some_and(|t| t <= now) {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "valid_until must be in the future",
            ));
        }
        let valid_until = valid_until.unwrap_or(crate::account::NEVER_EXPIRES);
        let token = new_token();
        let digest = token_digest(&token);
        let mut made = None;
        self.modify(name, false, |account| {
            if account.tokens.iter().any(|t| t.name == token_name) {
                return Err(ArangoError::with_message(
                    ARANGO_DUPLICATE_NAME,
                    format!("an access token named '{token_name}' exists"),
                ));
            }
            if account.tokens.len() >= TOKENS_PER_USER_MAX {
                return Err(ArangoError::with_message(
                    HTTP_BAD_PARAMETER,
                    format!("at most {TOKENS_PER_USER_MAX} access tokens per user"),
                ));
            }
            let record = AccessToken {
                id: account.next_token_id,
                name: token_name.to_owned(),
                valid_until,
                created_at: now,
                fingerprint: token_fingerprint(&digest),
                digest: digest.clone(),
            };
            account.next_token_id += 1;
            account.tokens.push(record.clone());
            made = Some(record);
            Ok(())
        })?;
        Ok((made.expect("set by the change"), token))
    }

    /// Revokes access token `id` of `name`. 404 if it does not exist.
    pub fn delete_token(&self, name: &str, id: u64) -> Result<()> {
        self.modify(name, false, |account| {
            let before = account.tokens.len();
            account.tokens.retain(|t| t.id != id);
            if account.tokens.len() == before {
                return Err(ArangoError::with_message(
                    quince_errors::HTTP_NOT_FOUND,
                    "access token not found",
                ));
            }
            Ok(())
        })?;
        Ok(())
    }

    /// Applies `edit` to a copy of the account, stores it, then publishes it. With
    /// `new_generation`, the account gets a new generation (voiding its JWTs and cached
    /// verifications).
    fn modify(
        &self,
        name: &str,
        new_generation_drawn: bool,
        edit: impl FnOnce(&mut Account) -> Result<()>,
    ) -> Result<Arc<Account>> {
        let _changing = self.changes.lock();
        let current = self
            .account(name)
            .ok_or_else(|| ArangoError::new(USER_NOT_FOUND))?;
        let mut next = (*current).clone();
        edit(&mut next)?;
        if new_generation_drawn {
            next.generation = new_generation();
        }
        self.store
            .read()
            .put(&document_key(name), next.to_document())?;
        self.notify_changed();
        let next = Arc::new(next);
        self.publish(Some(&current), Arc::clone(&next));
        Ok(next)
    }

    /// Makes `next` the visible account, replacing `previous` (and its token digests).
    fn publish(&self, previous: Option<&Account>, next: Arc<Account>) {
        {
            let mut index = self.token_index.write();
            if let Some(previous) = previous {
                for token in &previous.tokens {
                    index.remove(&token.digest);
                }
            }
            for token in &next.tokens {
                index.insert(token.digest.clone(), (next.name.clone(), token.id));
            }
        }
        self.accounts.write().insert(next.name.clone(), next);
    }

    fn hash(&self, password: &str) -> String {
        let _slot = self.hashing.enter();
        hash_password(password)
    }
}

/// Every readable account of `store` by name (damaged ones are logged and left out).
fn load_accounts(store: &UserDocuments) -> Result<HashMap<String, Arc<Account>>> {
    let mut accounts = HashMap::new();
    for document in store.load()? {
        match Account::from_document(&document) {
            Some(account) => {
                accounts.insert(account.name.clone(), Arc::new(account));
            }
            None => {
                let key = document.get("_key").and_then(Value::as_str).unwrap_or("?");
                tracing::error!(
                    event = "auth.account_unreadable",
                    key,
                    "a stored account is damaged and is ignored: nobody can log in with it"
                );
            }
        }
    }
    Ok(accounts)
}

/// The key of an account's document: a digest of the name, since names may hold characters
/// keys may not.
fn document_key(name: &str) -> String {
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("u{hex}")
}

/// A hash no password is checked against successfully in practice, verified for unknown users.
fn unknown_user_hash() -> &'static str {
    static HASH: OnceLock<String> = OnceLock::new();
    HASH.get_or_init(|| hash_password(&crate::access_token::new_token()))
}

/// A fresh random generation (never 0, so a default is never current).
fn new_generation() -> u64 {
    loop {
        let g = rand::thread_rng().next_u64();
        if g != 0 {
            return g;
        }
    }
}

/// 1700 unless the name is 1 to [`USER_NAME_BYTES_MAX`] bytes without control characters
/// or `:` (which would split a Basic credential).
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= USER_NAME_BYTES_MAX
        && !name.chars().any(|c| c.is_control() || c == ':');
    if ok {
        Ok(())
    } else {
        Err(ArangoError::new(USER_INVALID_NAME))
    }
}

/// 1701 for a password longer than [`PASSWORD_BYTES_MAX`].
fn check_password(password: &str) -> Result<()> {
    if password.len() <= PASSWORD_BYTES_MAX {
        Ok(())
    } else {
        Err(ArangoError::with_message(
            USER_INVALID_PASSWORD,
            format!("a password has at most {PASSWORD_BYTES_MAX} bytes"),
        ))
    }
}

/// A counting gate: at most [`HASHES_IN_FLIGHT_MAX`] holders at once.
#[derive(Default)]
struct HashGate {
    inside: Mutex<usize>,
    freed: Condvar,
}

/// A place inside the gate, given back on drop.
struct HashSlot<'a>(&'a HashGate);

impl HashGate {
    fn enter(&self) -> HashSlot<'_> {
        let mut inside = self.inside.lock();
        while *inside >= HASHES_IN_FLIGHT_MAX {
            self.freed.wait(&mut inside);
        }
        *inside += 1;
        HashSlot(self)
    }
}

impl Drop for HashSlot<'_> {
    fn drop(&mut self) {
        *self.0.inside.lock() -= 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
#[path = "users_tests.rs"]
mod tests;
