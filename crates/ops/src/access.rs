//! A database as one caller may use it: [`guard`] wraps a [`DatabaseOps`] so that every
//! collection it hands out, by name, by id, in a listing or through a transaction it begins,
//! has first passed the caller's [`AccessRule`].
//!
//! What it is: the one place a query's reads pass. AQL resolves every collection it touches
//! through its database, at compile time (the collections named in the text, a named graph's)
//! and at run time (`DOCUMENT`, the vertices a traversal or path search reaches, `FULLTEXT`,
//! `NEAR`, `WITHIN`, `WITHIN_RECTANGLE`, `COLLECTION_COUNT`); handing it a guarded database makes
//! each of those a checked read, and `COLLECTIONS()` lists only what the rule lets the caller
//! read. The collections a query writes are known at compile time and checked with
//! [`AccessRule::check`] for [`AccessKind::Write`] before it runs.
//!
//! What it is not: the rule itself (who may do what is the api's: `permission.rs`), or a
//! wrapper of each collection: a collection handed out has passed the read check, and writes
//! reach only collections the query declared, which were checked for writing.
//!
//! Invariants: no collection leaves a guarded database without a passed read check;
//! `collections()` hands out exactly those that would pass it; a transaction begun through a
//! guarded database checks its declared collections (read, write, exclusive) before it
//! begins and gives out a guarded view; catalog changes (create, drop, rename) through a
//! guarded database are refused with 403/11, as no reader needs them.

use std::sync::Arc;

use quince_errors::{ArangoError, Result, FORBIDDEN};
use serde_json::Value;

use crate::catalog::CreateCollection;
use crate::durability::Durability;
use crate::interface::{CollectionOps, DatabaseOps};
use crate::transaction::{Beginner, TransactionOps, TransactionOptions, TransactionStatus};

/// What a caller is about to do with a collection, as ArangoDB names its access modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessKind {
    /// Read documents or properties.
    Read,
    /// Write documents.
    Write,
    /// Write documents with no other writer meanwhile.
    Exclusive,
}

impl AccessKind {
    /// ArangoDB's word for the mode (`read`, `write`, `exclusive`), as its errors print it.
    pub fn as_str(self) -> &'static str {
        match self {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::Exclusive => "exclusive",
        }
    }

    /// True for the modes that write.
    pub fn writes(self) -> bool {
        self != AccessKind::Read
    }
}

/// Who may do what with which collection: implemented by whoever knows the caller.
pub trait AccessRule: Send + Sync {
    /// `Ok` when the caller may `access` collection `collection` of database `database`, else
    /// the error to answer (the rule chooses it: not found for a collection the caller may not
    /// even see, forbidden, read-only).
    fn check(&self, database: &str, collection: &str, access: AccessKind) -> Result<()>;
}

/// `database` as the caller `rule` describes may use it.
pub fn guard(database: Arc<dyn DatabaseOps>, rule: Arc<dyn AccessRule>) -> Arc<dyn DatabaseOps> {
    Arc::new(Guarded {
        inner: database,
        rule,
    })
}

/// A guarded database (see the module's documentation).
struct Guarded {
    inner: Arc<dyn DatabaseOps>,
    rule: Arc<dyn AccessRule>,
}

impl Guarded {
    fn check(&self, collection: &str, access: AccessKind) -> Result<()> {
        self.rule.check(self.inner.name(), collection, access)
    }

    /// Checks every collection a begin declares, by the name the engine resolves it to.
    fn check_declared(&self, options: &TransactionOptions) -> Result<()> {
        let declared = options
            .read
            .iter()
            .map(|name| (name, AccessKind::Read))
            .chain(options.write.iter().map(|name| (name, AccessKind::Write)))
            .chain(
                options
                    .exclusive
                    .iter()
                    .map(|name| (name, AccessKind::Exclusive)),
            );
        for (name, access) in declared {
            let resolved = self
                .inner
                .collection(name)
                .map(|c| c.name())
                .unwrap_or_else(|_| name.clone());
            self.check(&resolved, access)?;
        }
        Ok(())
    }

    fn wrap(&self, transaction: Arc<dyn TransactionOps>) -> Arc<dyn TransactionOps> {
        Arc::new(GuardedTransaction {
            inner: transaction,
            rule: Arc::clone(&self.rule),
        })
    }
}

fn catalog_refused() -> ArangoError {
    ArangoError::with_message(
        FORBIDDEN,
        "forbidden: collections cannot be created, dropped or renamed here",
    )
}

impl DatabaseOps for Guarded {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn id(&self) -> u64 {
        self.inner.id()
    }

    fn is_system(&self) -> bool {
        self.inner.is_system()
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        self.inner
            .collections()
            .into_iter()
            .filter(|c| self.check(&c.name(), AccessKind::Read).is_ok())
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        let collection = self.inner.collection(name_or_id)?;
        self.check(&collection.name(), AccessKind::Read)?;
        Ok(collection)
    }

    fn create_collection(&self, _: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        Err(catalog_refused())
    }

    fn drop_collection(&self, _: &str, _: bool) -> Result<u64> {
        Err(catalog_refused())
    }

    fn rename_collection(&self, _: &str, _: &str) -> Result<Arc<dyn CollectionOps>> {
        Err(catalog_refused())
    }

    fn begin_transaction(&self, options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        self.check_declared(&options)?;
        Ok(self.wrap(self.inner.begin_transaction(options)?))
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        Ok(self.wrap(self.inner.transaction(id)?))
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        self.inner
            .running_transactions()
            .into_iter()
            .map(|transaction| self.wrap(transaction))
            .collect()
    }

    fn blocks_on_network(&self) -> bool {
        self.inner.blocks_on_network()
    }

    fn cluster_properties(&self) -> Option<Value> {
        self.inner.cluster_properties()
    }

    fn create_collection_with(
        &self,
        _: CreateCollection,
        _: &Value,
    ) -> Result<Arc<dyn CollectionOps>> {
        Err(catalog_refused())
    }
}

/// A transaction begun (or found) through a guarded database: its view is guarded too.
struct GuardedTransaction {
    inner: Arc<dyn TransactionOps>,
    rule: Arc<dyn AccessRule>,
}

impl TransactionOps for GuardedTransaction {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn status(&self) -> TransactionStatus {
        self.inner.status()
    }

    fn begun_by(&self) -> &Beginner {
        self.inner.begun_by()
    }

    fn database(&self) -> Arc<dyn DatabaseOps> {
        guard(self.inner.database(), Arc::clone(&self.rule))
    }

    fn commit(&self) -> Result<Option<Durability>> {
        self.inner.commit()
    }

    fn abort(&self) -> Result<()> {
        self.inner.abort()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::CollectionType;
    use crate::fake::FakeEngine;
    use crate::interface::Engine;

    /// Lets everyone read `open`, nobody anything else; writes nowhere.
    struct OnlyOpen;

    impl AccessRule for OnlyOpen {
        fn check(&self, _: &str, collection: &str, access: AccessKind) -> Result<()> {
            if collection == "open" && access == AccessKind::Read {
                Ok(())
            } else {
                Err(ArangoError::with_message(
                    FORBIDDEN,
                    format!("forbidden: {collection} [{}]", access.as_str()),
                ))
            }
        }
    }

    fn request(name: &str) -> CreateCollection {
        CreateCollection {
            name: name.to_owned(),
            kind: CollectionType::Document,
            wait_for_sync: None,
            is_system: false,
            key_options: None,
            journal_size: None,
            schema: None,
            computed_values: None,
            cache_enabled: None,
        }
    }

    fn create(database: &dyn DatabaseOps, name: &str) -> Arc<dyn CollectionOps> {
        database.create_collection(request(name)).expect("create")
    }

    #[test]
    fn every_way_to_a_collection_passes_the_rule() {
        let engine = FakeEngine::new();
        let database = engine.database("_system").expect("_system");
        let open = create(&*database, "open");
        let secret = create(&*database, "secret");
        let guarded = guard(Arc::clone(&database), Arc::new(OnlyOpen));

        assert_eq!(guarded.collection("open").expect("open").id(), open.id());
        assert_eq!(
            guarded
                .collection(&open.id().to_string())
                .expect("id")
                .name(),
            "open"
        );
        for name in ["secret".to_owned(), secret.id().to_string()] {
            let error = guarded.collection(&name).err().expect("refused");
            assert!(error.is(FORBIDDEN));
            assert_eq!(error.message, "forbidden: secret [read]");
        }
        assert!(guarded
            .collection("missing")
            .err()
            .expect("missing")
            .is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND));
        let names: Vec<String> = guarded.collections().iter().map(|c| c.name()).collect();
        assert_eq!(names, vec!["open".to_owned()]);
        assert!(guarded.create_collection(request("x")).is_err());
        assert!(guarded.drop_collection("secret", false).is_err());
        assert!(database.collection("secret").is_ok());
    }

    #[test]
    fn a_transaction_checks_what_it_declares_and_its_view_is_guarded() {
        let engine = FakeEngine::new();
        let database = engine.database("_system").expect("_system");
        create(&*database, "open");
        create(&*database, "secret");
        let guarded = guard(database, Arc::new(OnlyOpen));
        let writes = TransactionOptions {
            write: vec!["open".to_owned()],
            ..TransactionOptions::default()
        };
        let error = guarded.begin_transaction(writes).err().expect("refused");
        assert_eq!(error.message, "forbidden: open [write]");
        let reads = TransactionOptions {
            read: vec!["open".to_owned()],
            ..TransactionOptions::default()
        };
        match guarded.begin_transaction(reads) {
            Ok(transaction) => {
                assert!(transaction.database().collection("secret").is_err());
                assert!(transaction.database().collection("open").is_ok());
            }
            // The fake engine has no transactions: nothing else to check there.
            Err(e) => assert!(!e.is(FORBIDDEN), "{e:?}"),
        }
    }
}
