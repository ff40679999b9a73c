//! [`FakeEngine`]: a second, in-memory implementation of the operations interface, for api
//! tests and for the conformance suite that holds every implementation to the same rules.
//!
//! What it is: databases and collections in maps, documents as the same stored bytes the local
//! engine writes (`quince-model`'s encoding), the same shared request parsing (`ops::request`),
//! and its own plain decisions for keys, overwrite modes, preconditions, merges, edges and
//! `versionAttribute`. Writes are "durable" at once: a synced write's handle is already
//! resolved.
//!
//! What it is not: persistent, fast, or a model of the local engine's internals (no journals,
//! no compaction, no hooks, no limits on open files). Figures report documents only. Its
//! secondary indexes are definitions only: every lookup, unique check and estimate scans the
//! documents (so they answer as the local engine's, slowly: a geo or fulltext lookup decides
//! every document with the shared rules of `index::lookup`), and so does the edge index of an
//! edge collection; ttl indexes never expire
//! anything (there is no maintenance thread). It has no
//! stream transactions: a begin answers 1653, and no transaction is ever found (1655); the
//! transaction conformance cases run on the local engine.
//!
//! Invariants: the same observable answers as the local engine for every operation of
//! `quince-db`'s `tests/ops_conformance.rs`; one lock per collection serialises its writes, so a write
//! request's items are decided in order, each seeing the earlier ones.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use quince_errors::{
    ArangoError, Result, ARANGO_DATABASE_NOT_FOUND, ARANGO_DATA_SOURCE_NOT_FOUND,
    ARANGO_DOCUMENT_KEY_BAD, ARANGO_DOCUMENT_NOT_FOUND, ARANGO_DUPLICATE_NAME,
    ARANGO_UNIQUE_CONSTRAINT_VIOLATED, ARANGO_USE_SYSTEM_DATABASE, FORBIDDEN,
};
use quince_model::document::{
    edge_ends, encode_document, id_prefix, render_document, render_value, stored_data,
    stored_object, EdgeEnds,
};
use quince_model::key::is_valid_key;
use quince_model::keygen::{KeyGenerator, KeyOptions};
use quince_model::merge::{merge_patch, version_allows_write, MergeOptions};
use quince_model::names::{is_system_name, validate_collection_name, validate_database_name};
use quince_model::rev::{Hlc, RevisionId};
use serde_json::{Map, Value};

use crate::catalog::{
    check_journal_size, CatalogStats, CollectionProperties, CollectionType, CreateCollection,
    FiguresReport, PropertiesUpdate, StoredDocument,
};
use crate::checksum::Checksum;
use crate::computed::ExpressionCompiler;
use crate::durability::Durability;
use crate::index::{
    compare_entries, edge_selectivity, stored_edge_ends, IndexDefinition, IndexDescription,
    IndexHit, IndexLookup, IndexSpec, IndexType, EDGE_INDEX_ID, EDGE_INDEX_NAME,
};
use crate::interface::{CollectionOps, DatabaseOps, Engine};
use crate::options::{OverwriteMode, WriteOptions, WriteOutcome};
use crate::replicated::ReplicatedOp;
use crate::request::{check_revisions, parse_items, DocumentOp, WriteRequest, WriteResults};
use crate::rules::{RuleInput, WriteRules};
use crate::schema::WriteEvent;
use crate::transaction::{TransactionOps, TransactionOptions};

/// What fake databases and collections share: ids, the revision clock, and the compiler of
/// computed values' expressions.
#[derive(Default)]
struct Shared {
    ids: AtomicU64,
    hlc: Hlc,
    /// `None`: computed values are refused (501), as the fake cannot evaluate AQL itself.
    expressions: Option<Arc<dyn ExpressionCompiler>>,
}

impl Shared {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }
}

/// The in-memory engine; starts with `_system`.
pub struct FakeEngine {
    shared: Arc<Shared>,
    databases: RwLock<BTreeMap<String, Arc<FakeDatabase>>>,
}

impl FakeEngine {
    /// An engine holding only an empty `_system`; it refuses computed values (501), having no
    /// expression compiler.
    pub fn new() -> Arc<FakeEngine> {
        FakeEngine::build(Shared::default())
    }

    /// An engine holding only an empty `_system` that computes values with `expressions`
    /// (`quince-aql`'s compiler: the one the local engine uses).
    pub fn with_expressions(expressions: Arc<dyn ExpressionCompiler>) -> Arc<FakeEngine> {
        FakeEngine::build(Shared {
            expressions: Some(expressions),
            ..Shared::default()
        })
    }

    fn build(shared: Shared) -> Arc<FakeEngine> {
        let shared = Arc::new(shared);
        let system = FakeDatabase::new(&shared, "_system");
        let databases = RwLock::new(BTreeMap::from([("_system".to_owned(), system)]));
        Arc::new(FakeEngine { shared, databases })
    }
}

impl Engine for FakeEngine {
    fn database(&self, name: &str) -> Option<Arc<dyn DatabaseOps>> {
        let databases = self.databases.read();
        databases
            .get(name)
            .map(|d| Arc::clone(d) as Arc<dyn DatabaseOps>)
    }

    fn database_names(&self) -> Vec<String> {
        self.databases.read().keys().cloned().collect()
    }

    fn create_database(&self, name: &str) -> Result<Arc<dyn DatabaseOps>> {
        validate_database_name(name)?;
        let mut databases = self.databases.write();
        if databases.contains_key(name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        let database = FakeDatabase::new(&self.shared, name);
        databases.insert(name.to_owned(), Arc::clone(&database));
        Ok(database)
    }

    fn drop_database(&self, name: &str) -> Result<()> {
        if name == "_system" {
            return Err(ArangoError::new(ARANGO_USE_SYSTEM_DATABASE));
        }
        match self.databases.write().remove(name) {
            Some(_) => Ok(()),
            None => Err(ArangoError::new(ARANGO_DATABASE_NOT_FOUND)),
        }
    }

    fn stats(&self) -> CatalogStats {
        let databases = self.databases.read();
        let mut stats = CatalogStats {
            databases: databases.len() as u64,
            ..CatalogStats::default()
        };
        for database in databases.values() {
            for collection in database.collections.read().values() {
                stats.collections += 1;
                stats.documents += collection.docs.lock().len() as u64;
            }
        }
        stats
    }
}

/// A fake database.
pub struct FakeDatabase {
    name: String,
    id: u64,
    shared: Arc<Shared>,
    collections: RwLock<BTreeMap<String, Arc<FakeCollection>>>,
}

impl FakeDatabase {
    fn new(shared: &Arc<Shared>, name: &str) -> Arc<FakeDatabase> {
        Arc::new(FakeDatabase {
            name: name.to_owned(),
            id: shared.next_id(),
            shared: Arc::clone(shared),
            collections: RwLock::new(BTreeMap::new()),
        })
    }

    fn find(&self, name_or_id: &str) -> Result<Arc<FakeCollection>> {
        let collections = self.collections.read();
        if let Some(collection) = collections.get(name_or_id) {
            return Ok(Arc::clone(collection));
        }
        let id = name_or_id.parse::<u64>().ok();
        collections
            .values()
            .find(|c| Some(c.id) == id)
            .cloned()
            .ok_or_else(|| ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND))
    }
}

impl DatabaseOps for FakeDatabase {
    fn name(&self) -> &str {
        &self.name
    }

    fn begin_transaction(&self, _options: TransactionOptions) -> Result<Arc<dyn TransactionOps>> {
        Err(ArangoError::with_message(
            quince_errors::TRANSACTION_DISALLOWED_OPERATION,
            "the fake engine has no stream transactions",
        ))
    }

    fn transaction(&self, id: &str) -> Result<Arc<dyn TransactionOps>> {
        Err(crate::transaction::transaction_not_found(id))
    }

    fn running_transactions(&self) -> Vec<Arc<dyn TransactionOps>> {
        Vec::new()
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn collections(&self) -> Vec<Arc<dyn CollectionOps>> {
        let collections = self.collections.read();
        collections
            .values()
            .map(|c| Arc::clone(c) as Arc<dyn CollectionOps>)
            .collect()
    }

    fn collection(&self, name_or_id: &str) -> Result<Arc<dyn CollectionOps>> {
        Ok(self.find(name_or_id)?)
    }

    fn create_collection(&self, request: CreateCollection) -> Result<Arc<dyn CollectionOps>> {
        validate_collection_name(&request.name, request.is_system)?;
        let rules = WriteRules::parse(
            request.schema.as_ref().unwrap_or(&Value::Null),
            request.computed_values.as_ref().unwrap_or(&Value::Null),
            self.shared.expressions.as_deref(),
        )?;
        let keygen = KeyGenerator::new(KeyOptions::parse(request.key_options.as_ref())?, 0);
        let journal_size = request.journal_size.unwrap_or(32 << 20);
        check_journal_size(journal_size)?;
        let mut collections = self.collections.write();
        if collections.contains_key(&request.name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        let id = self.shared.next_id();
        let properties = CollectionProperties {
            id,
            name: request.name.clone(),
            kind: request.kind,
            is_system: is_system_name(&request.name),
            globally_unique_id: format!("c{id}"),
            wait_for_sync: request.wait_for_sync.unwrap_or(false),
            journal_size,
            key_options: keygen.report(),
            schema: rules.schema_json(),
            computed_values: rules.computed_values_json(),
            cache_enabled: request.cache_enabled.unwrap_or(false),
        };
        let collection = Arc::new(FakeCollection {
            id,
            shared: Arc::clone(&self.shared),
            properties: RwLock::new(properties),
            keygen,
            docs: Mutex::new(BTreeMap::new()),
            revision: AtomicU64::new(0),
            indexes: Mutex::new(Vec::new()),
            rules: RwLock::new(Arc::new(rules)),
        });
        collections.insert(request.name, Arc::clone(&collection));
        Ok(collection)
    }

    fn drop_collection(&self, name: &str, is_system: bool) -> Result<u64> {
        let collection = self.find(name)?;
        if CollectionOps::is_system(&*collection) && !is_system {
            return Err(ArangoError::new(FORBIDDEN));
        }
        self.collections.write().remove(&collection.name());
        Ok(collection.id)
    }

    fn rename_collection(&self, name: &str, new_name: &str) -> Result<Arc<dyn CollectionOps>> {
        let collection = self.find(name)?;
        let old_name = collection.name();
        if old_name == new_name {
            return Ok(collection);
        }
        if CollectionOps::is_system(&*collection) {
            return Err(ArangoError::with_message(
                FORBIDDEN,
                "system collections cannot be renamed",
            ));
        }
        validate_collection_name(new_name, false)?;
        let mut collections = self.collections.write();
        if collections.contains_key(new_name) {
            return Err(ArangoError::new(ARANGO_DUPLICATE_NAME));
        }
        collection.properties.write().name = new_name.to_owned();
        collections.remove(&old_name);
        collections.insert(new_name.to_owned(), Arc::clone(&collection));
        Ok(collection)
    }
}

/// A fake collection: documents as stored bytes by key.
pub struct FakeCollection {
    id: u64,
    shared: Arc<Shared>,
    properties: RwLock<CollectionProperties>,
    keygen: KeyGenerator,
    /// Key to (revision, stored bytes); the lock serialises writes.
    docs: Mutex<BTreeMap<String, (RevisionId, Vec<u8>)>>,
    revision: AtomicU64,
    /// The secondary indexes' definitions, in creation order (their entries are computed by
    /// scanning the documents whenever they are needed). Locked after `docs`.
    indexes: Mutex<Vec<IndexSpec>>,
    /// The compiled `schema` and `computedValues`, applied to every insert, update and
    /// replace ([`WriteRules::apply`]); swapped whole by a property change.
    rules: RwLock<Arc<WriteRules>>,
}

/// Every entry of `spec` over `docs`, sorted in index order (values, then key).
fn all_entries(
    spec: &IndexSpec,
    docs: &BTreeMap<String, (RevisionId, Vec<u8>)>,
) -> Vec<(Box<[Value]>, String)> {
    let mut entries = Vec::new();
    for (key, (_, stored)) in docs {
        // Stored documents were accepted by every index, so their entries are within bounds.
        for entry in spec.entries(&stored_object(stored)).unwrap_or_default() {
            entries.push((entry, key.clone()));
        }
    }
    entries.sort_by(|a, b| compare_entries(&a.0, &b.0).then_with(|| a.1.cmp(&b.1)));
    entries
}

/// The unique constraint error ArangoDB answers.
fn unique_violation(spec: &IndexSpec, key: &str) -> ArangoError {
    let definition = &spec.definition;
    ArangoError::with_message(
        ARANGO_UNIQUE_CONSTRAINT_VIOLATED,
        format!(
            "unique constraint violated - in index {} of type {} over '{}'; conflicting key: {key}",
            definition.name,
            definition.kind.name(),
            definition.fields.join(", ")
        ),
    )
}

/// What a decision writes.
enum Effect {
    Put(RevisionId, Vec<u8>),
    Remove(RevisionId),
    Nothing,
}

impl FakeCollection {
    fn prefix(&self) -> String {
        id_prefix(&self.properties.read().name)
    }

    fn outcome(&self, key: &str, rev: RevisionId, synced: bool) -> WriteOutcome {
        WriteOutcome {
            id: format!("{}/{key}", self.properties.read().name),
            key: key.to_owned(),
            rev: rev.encode(),
            old_rev: None,
            new: None,
            old: None,
            synced,
        }
    }

    fn preconditions(
        &self,
        key: &str,
        current: RevisionId,
        expected_rev: Option<&str>,
        options: &WriteOptions,
    ) -> Result<()> {
        check_revisions(&self.name(), key, current, expected_rev, options)
    }

    fn edge<'b>(&self, body: &'b Map<String, Value>) -> Result<Option<EdgeEnds<'b>>> {
        match self.properties.read().kind {
            CollectionType::Edge => Ok(Some(edge_ends(body)?)),
            CollectionType::Document => Ok(None),
        }
    }

    fn decide(
        &self,
        docs: &BTreeMap<String, (RevisionId, Vec<u8>)>,
        op: DocumentOp,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(String, Effect, WriteOutcome)> {
        match op {
            DocumentOp::Insert(body) => {
                let key = match body.get("_key") {
                    None => self.keygen.generate()?,
                    Some(Value::String(key)) => {
                        self.keygen.accept_user_key(key)?;
                        key.clone()
                    }
                    Some(_) => return Err(ArangoError::new(ARANGO_DOCUMENT_KEY_BAD)),
                };
                self.edge(&body)?;
                let Some((current, stored)) = docs.get(&key) else {
                    let rev = self.shared.hlc.next();
                    let event = WriteEvent::Insert;
                    let ruled = self.ruled(event, &key, rev, &body, &body, options, None)?;
                    let edge = self.edge(&ruled)?;
                    let value = encode_document(&key, rev, edge, &ruled);
                    let mut outcome = self.outcome(&key, rev, sync);
                    if options.return_new {
                        outcome.new = Some(render_value(&value, &self.prefix()));
                    }
                    return Ok((key, Effect::Put(rev, value), outcome));
                };
                let merge = match options.overwrite_mode {
                    OverwriteMode::Conflict => {
                        return Err(ArangoError::new(ARANGO_UNIQUE_CONSTRAINT_VIOLATED))
                    }
                    OverwriteMode::Ignore => {
                        let outcome = self.outcome(&key, *current, sync);
                        return Ok((key, Effect::Nothing, outcome));
                    }
                    OverwriteMode::Replace => false,
                    OverwriteMode::Update => true,
                };
                let (effect, outcome) =
                    self.write_over(&key, *current, stored, &body, merge, None, options, sync)?;
                Ok((key, effect, outcome))
            }
            DocumentOp::Modify {
                key,
                body,
                merge,
                expected_rev,
            } => {
                let (current, stored) = docs
                    .get(&key)
                    .filter(|_| is_valid_key(&key))
                    .ok_or_else(|| ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND))?;
                let expected = expected_rev.as_deref();
                let (effect, outcome) = self.write_over(
                    &key, *current, stored, &body, merge, expected, options, sync,
                )?;
                Ok((key, effect, outcome))
            }
            DocumentOp::Remove { key, expected_rev } => {
                let (current, stored) = docs
                    .get(&key)
                    .filter(|_| is_valid_key(&key))
                    .ok_or_else(|| ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND))?;
                self.preconditions(&key, *current, expected_rev.as_deref(), options)?;
                let mut outcome = self.outcome(&key, *current, sync);
                if options.return_old {
                    outcome.old = Some(render_value(stored, &self.prefix()));
                }
                Ok((key, Effect::Remove(self.shared.hlc.next()), outcome))
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write_over(
        &self,
        key: &str,
        current: RevisionId,
        stored: &[u8],
        body: &Map<String, Value>,
        merge: bool,
        expected_rev: Option<&str>,
        options: &WriteOptions,
        sync: bool,
    ) -> Result<(Effect, WriteOutcome)> {
        self.preconditions(key, current, expected_rev, options)?;
        let prefix = self.prefix();
        let old_object = stored_object(stored);
        let mut outcome = self.outcome(key, current, sync);
        outcome.old_rev = Some(current.encode());
        if options.return_old {
            outcome.old = Some(render_value(stored, &prefix));
        }
        if let Some(attribute) = &options.version_attribute {
            if !version_allows_write(&old_object, body, attribute) {
                if options.return_new {
                    outcome.new = Some(render_value(stored, &prefix));
                }
                return Ok((Effect::Nothing, outcome));
            }
        }
        let merged;
        let new_body = if merge {
            let rules = MergeOptions {
                keep_null: options.keep_null,
                merge_objects: options.merge_objects,
            };
            merged = merge_patch(&old_object, body, rules);
            &merged
        } else {
            body
        };
        let rev = self.shared.hlc.next();
        let event = if merge {
            WriteEvent::Update
        } else {
            WriteEvent::Replace
        };
        let old = Some(&old_object);
        let ruled = self.ruled(event, key, rev, new_body, body, options, old)?;
        let edge = self.edge(&ruled)?;
        let value = encode_document(key, rev, edge, &ruled);
        outcome.rev = rev.encode();
        if options.return_new {
            outcome.new = Some(render_value(&value, &prefix));
        }
        Ok((Effect::Put(rev, value), outcome))
    }
}

impl FakeCollection {
    /// `body` after the collection's rules for `event` (computed values, then the schema);
    /// `written` is what the client sent, `old` the version a modification replaces.
    #[allow(clippy::too_many_arguments)]
    fn ruled<'b>(
        &self,
        event: WriteEvent,
        key: &str,
        rev: RevisionId,
        body: &'b Map<String, Value>,
        written: &Map<String, Value>,
        options: &WriteOptions,
        old: Option<&Map<String, Value>>,
    ) -> Result<Cow<'b, Map<String, Value>>> {
        let rules = Arc::clone(&self.rules.read());
        if !rules.applies_to(event) {
            return Ok(Cow::Borrowed(body));
        }
        let id = format!("{}/{key}", self.name());
        let rev = rev.encode();
        let input = RuleInput {
            event,
            key,
            id: &id,
            rev: &rev,
            written,
            skip_validation: options.skip_document_validation,
        };
        // An insert has no old version; the schema asks for one only for modifications.
        let mut old = || Ok(old.cloned().unwrap_or_default());
        rules.apply(&input, Cow::Borrowed(body), &mut old)
    }

    /// 1210 when `value`, written as `key`, would share a unique index's values with another
    /// document (or with itself, for an array without `deduplicate`).
    fn check_unique(
        &self,
        docs: &BTreeMap<String, (RevisionId, Vec<u8>)>,
        key: &str,
        value: &[u8],
    ) -> Result<()> {
        let indexes = self.indexes.lock();
        for spec in indexes.iter().filter(|s| s.definition.unique) {
            let entries = spec.entries(&stored_object(value))?;
            if spec.self_conflict(&entries) {
                return Err(unique_violation(spec, key));
            }
            for (other, (_, stored)) in docs.iter().filter(|(k, _)| k.as_str() != key) {
                let theirs = spec.entries(&stored_object(stored)).unwrap_or_default();
                let clash = entries.iter().any(|mine| {
                    theirs
                        .iter()
                        .any(|t| compare_entries(mine, t) == std::cmp::Ordering::Equal)
                });
                if clash {
                    return Err(unique_violation(spec, other));
                }
            }
        }
        Ok(())
    }

    /// The selectivity of `spec` over `docs`: distinct values / entries (1 when empty).
    fn selectivity(spec: &IndexSpec, docs: &BTreeMap<String, (RevisionId, Vec<u8>)>) -> f64 {
        let entries = all_entries(spec, docs);
        if entries.is_empty() {
            return 1.0;
        }
        let distinct = 1 + entries
            .windows(2)
            .filter(|w| compare_entries(&w[0].0, &w[1].0) != std::cmp::Ordering::Equal)
            .count();
        distinct as f64 / entries.len() as f64
    }
}

impl FakeCollection {
    fn is_edge(&self) -> bool {
        self.kind() == CollectionType::Edge
    }

    /// The edge index's description over `docs`.
    fn edge_index(&self, docs: &BTreeMap<String, (RevisionId, Vec<u8>)>) -> IndexDescription {
        let ends: Vec<(String, String)> = docs
            .values()
            .filter_map(|(_, stored)| stored_edge_ends(stored))
            .collect();
        let distinct = |pick: fn(&(String, String)) -> &str| {
            let mut vertices: Vec<&str> = ends.iter().map(pick).collect();
            vertices.sort_unstable();
            vertices.dedup();
            vertices.len() as u64
        };
        let selectivity =
            edge_selectivity(ends.len() as u64, distinct(|e| &e.0), distinct(|e| &e.1));
        IndexDescription::edge(&self.name(), selectivity)
    }

    /// The edge index's hits for `lookup`, in key order.
    fn edge_hits(&self, lookup: &IndexLookup) -> Result<Vec<(Box<[Value]>, String)>> {
        let IndexLookup::Edge { direction, vertex } = lookup else {
            return Err(ArangoError::with_message(
                quince_errors::BAD_PARAMETER,
                "the edge index takes edge lookups only",
            ));
        };
        let docs = self.docs.lock();
        Ok(docs
            .iter()
            .filter_map(|(key, (_, stored))| {
                let ends = stored_edge_ends(stored)?;
                (direction.pick(&ends) == vertex)
                    .then(|| (direction.hit_values(&ends), key.clone()))
            })
            .collect())
    }
}

impl CollectionOps for FakeCollection {
    fn indexes(&self) -> Vec<IndexDescription> {
        let docs = self.docs.lock();
        let name = self.name();
        let mut all = vec![IndexDescription::primary(&name)];
        if self.is_edge() {
            all.push(self.edge_index(&docs));
        }
        for spec in self.indexes.lock().iter() {
            let selectivity = Self::selectivity(spec, &docs);
            all.push(spec.definition.describe(&name, selectivity));
        }
        all
    }

    fn create_index(&self, body: &Value) -> Result<(IndexDescription, bool)> {
        let mut definition = IndexDefinition::parse(body)?;
        let docs = self.docs.lock();
        let mut indexes = self.indexes.lock();
        let name = self.name();
        if let Some(existing) = indexes
            .iter()
            .find(|s| s.definition.same_index(&definition))
        {
            let selectivity = Self::selectivity(existing, &docs);
            return Ok((existing.definition.describe(&name, selectivity), false));
        }
        definition.id = self.shared.next_id();
        if definition.name.is_empty() {
            definition.name = format!("idx_{}", definition.id);
        }
        let taken = definition.name == "primary"
            || (self.is_edge() && definition.name == EDGE_INDEX_NAME)
            || indexes.iter().any(|s| s.definition.name == definition.name);
        if taken {
            return Err(ArangoError::with_message(
                ARANGO_DUPLICATE_NAME,
                format!("duplicate value for index name '{}'", definition.name),
            ));
        }
        let spec = IndexSpec::new(definition)?;
        for (_, (_, stored)) in docs.iter() {
            spec.entries(&stored_object(stored))?;
        }
        if spec.definition.unique {
            let entries = all_entries(&spec, &docs);
            if let Some(w) = entries
                .windows(2)
                .find(|w| compare_entries(&w[0].0, &w[1].0) == std::cmp::Ordering::Equal)
            {
                return Err(unique_violation(&spec, &w[1].1));
            }
        }
        let description = spec
            .definition
            .describe(&name, Self::selectivity(&spec, &docs));
        indexes.push(spec);
        Ok((description, true))
    }

    fn drop_index(&self, id_or_name: &str) -> Result<IndexDescription> {
        let docs = self.docs.lock();
        let mut indexes = self.indexes.lock();
        let id = id_or_name.parse::<u64>().ok();
        if self.is_edge() && (id == Some(EDGE_INDEX_ID) || id_or_name == EDGE_INDEX_NAME) {
            return Err(ArangoError::new(FORBIDDEN));
        }
        let at = indexes
            .iter()
            .position(|s| Some(s.definition.id) == id || s.definition.name == id_or_name)
            .ok_or_else(|| ArangoError::new(quince_errors::ARANGO_INDEX_NOT_FOUND))?;
        let spec = indexes.remove(at);
        Ok(spec
            .definition
            .describe(&self.name(), Self::selectivity(&spec, &docs)))
    }

    fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        let mut hits: Vec<(Box<[Value]>, String)> = if self.is_edge() && index_id == EDGE_INDEX_ID {
            self.edge_hits(lookup)?
        } else {
            let docs = self.docs.lock();
            let indexes = self.indexes.lock();
            let spec = indexes
                .iter()
                .find(|s| s.definition.id == index_id)
                .ok_or_else(|| ArangoError::new(quince_errors::ARANGO_INDEX_NOT_FOUND))?;
            lookup.check_for(&spec.definition)?;
            let mut hits = Vec::new();
            for (key, (_, stored)) in docs.iter() {
                let entries = spec.entries(&stored_object(stored)).unwrap_or_default();
                for values in lookup.entries_hits(&entries) {
                    hits.push((values, key.clone()));
                }
            }
            hits
        };
        lookup.finish(&mut hits);
        for (values, key) in &hits {
            if !visit(IndexHit {
                key,
                values,
                document: None,
            }) {
                break;
            }
        }
        Ok(())
    }

    fn name(&self) -> String {
        self.properties.read().name.clone()
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn kind(&self) -> CollectionType {
        self.properties.read().kind
    }

    fn wait_for_sync(&self) -> bool {
        self.properties.read().wait_for_sync
    }

    fn is_system(&self) -> bool {
        self.properties.read().is_system
    }

    fn properties(&self) -> CollectionProperties {
        let mut properties = self.properties.read().clone();
        properties.key_options = self.keygen.report();
        properties
    }

    fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties> {
        if let Some(size) = update.journal_size {
            check_journal_size(size)?;
        }
        let rules = if update.schema.is_some() || update.computed_values.is_some() {
            let current = Arc::clone(&self.rules.read());
            Some(current.updated(
                update.schema.as_ref(),
                update.computed_values.as_ref(),
                self.shared.expressions.as_deref(),
            )?)
        } else {
            None
        };
        {
            // Writes take `docs` first: holding it, the new rules apply from one write on.
            let _docs = self.docs.lock();
            let mut properties = self.properties.write();
            if let Some(rules) = rules {
                properties.schema = rules.schema_json();
                properties.computed_values = rules.computed_values_json();
                *self.rules.write() = rules;
            }
            if let Some(size) = update.journal_size {
                properties.journal_size = size;
            }
            if let Some(sync) = update.wait_for_sync {
                properties.wait_for_sync = sync;
            }
            if let Some(cache) = update.cache_enabled {
                properties.cache_enabled = cache;
            }
        }
        Ok(self.properties())
    }

    fn count(&self) -> u64 {
        self.docs.lock().len() as u64
    }

    fn figures(&self) -> FiguresReport {
        let docs = self.docs.lock();
        let indexes = self.indexes.lock();
        let edge = u64::from(self.is_edge());
        let mut report = FiguresReport {
            index_count: 1 + edge + indexes.len() as u64,
            ..FiguresReport::default()
        };
        report.indexes.push(crate::catalog::IndexFigures {
            id: 0,
            kind: "primary",
            count: docs.len() as u64,
            memory: 0,
        });
        if self.is_edge() {
            report.indexes.push(crate::catalog::IndexFigures {
                id: EDGE_INDEX_ID,
                kind: IndexType::Edge.name(),
                count: docs.len() as u64,
                memory: 0,
            });
        }
        for spec in indexes.iter() {
            report.indexes.push(crate::catalog::IndexFigures {
                id: spec.definition.id,
                kind: spec.definition.kind.name(),
                count: all_entries(spec, &docs).len() as u64,
                memory: 0,
            });
        }
        report.storage.alive_count = docs.len() as u64;
        report.storage.documents_size = docs.values().map(|(_, v)| v.len() as u64).sum();
        report
    }

    fn revision(&self) -> String {
        match self.revision.load(Ordering::Acquire) {
            0 => "0".to_owned(),
            rev => RevisionId(rev).encode(),
        }
    }

    fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        let mut sum = Checksum::default();
        for (key, (rev, stored)) in self.docs.lock().iter() {
            let data = with_data.then(|| stored_data(stored));
            sum.add(key.as_bytes(), with_revisions.then_some(rev.0), data);
        }
        Ok((sum.value().to_string(), self.revision()))
    }

    fn truncate(&self, _wait_for_sync: bool) -> Result<()> {
        self.docs.lock().clear();
        let rev = self.shared.hlc.next();
        self.revision.fetch_max(rev.0, Ordering::AcqRel);
        Ok(())
    }

    fn compact(&self) -> Result<()> {
        Ok(())
    }

    fn apply_replicated(&self, ops: &[ReplicatedOp], _wait_for_sync: bool) -> Result<()> {
        let mut docs = self.docs.lock();
        for op in ops {
            match op {
                ReplicatedOp::Put(document) => {
                    let (key, rev) = ReplicatedOp::put_parts(document)?;
                    let edge = if self.is_edge() {
                        Some(edge_ends(document)?)
                    } else {
                        None
                    };
                    let value = encode_document(key, rev, edge, document);
                    self.check_unique(&docs, key, &value)?;
                    self.shared.hlc.observe(rev);
                    self.revision.fetch_max(rev.0, Ordering::AcqRel);
                    docs.insert(key.to_owned(), (rev, value));
                }
                ReplicatedOp::Remove(key) => {
                    if docs.remove(key).is_some() {
                        let rev = self.shared.hlc.next();
                        self.revision.fetch_max(rev.0, Ordering::AcqRel);
                    }
                }
                ReplicatedOp::Truncate => {
                    docs.clear();
                    let rev = self.shared.hlc.next();
                    self.revision.fetch_max(rev.0, Ordering::AcqRel);
                }
            }
        }
        Ok(())
    }

    fn read(&self, key: &str) -> Result<StoredDocument> {
        let docs = self.docs.lock();
        let (rev, stored) = docs
            .get(key)
            .ok_or_else(|| ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND))?;
        Ok(StoredDocument {
            rev: rev.encode(),
            json: render_document(stored, &self.prefix()),
        })
    }

    fn read_rev(&self, key: &str) -> Result<String> {
        self.docs
            .lock()
            .get(key)
            .map(|(rev, _)| rev.encode())
            .ok_or_else(|| ArangoError::new(ARANGO_DOCUMENT_NOT_FOUND))
    }

    fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()> {
        let documents: Vec<StoredDocument> = {
            let docs = self.docs.lock();
            let prefix = self.prefix();
            docs.values()
                .map(|(rev, stored)| StoredDocument {
                    rev: rev.encode(),
                    json: render_document(stored, &prefix),
                })
                .collect()
        };
        for document in documents {
            if !visit(document) {
                break;
            }
        }
        Ok(())
    }

    fn write(&self, request: WriteRequest) -> WriteResults {
        let (ops, options) = parse_items(request, &self.name());
        let sync = options.wait_for_sync || self.wait_for_sync();
        let mut docs = self.docs.lock();
        let mut wrote = false;
        let items = ops
            .into_iter()
            .map(|op| {
                let (key, effect, outcome) = self.decide(&docs, op?, &options, sync)?;
                if let Effect::Put(_, value) = &effect {
                    self.check_unique(&docs, &key, value)?;
                }
                match effect {
                    Effect::Put(rev, value) => {
                        self.revision.fetch_max(rev.0, Ordering::AcqRel);
                        docs.insert(key, (rev, value));
                        wrote = true;
                    }
                    Effect::Remove(rev) => {
                        self.revision.fetch_max(rev.0, Ordering::AcqRel);
                        docs.remove(&key);
                        wrote = true;
                    }
                    Effect::Nothing => {}
                }
                Ok(outcome)
            })
            .collect();
        WriteResults {
            items,
            durability: (sync && wrote).then(|| Durability::ready(Ok(()))),
            synced: sync,
        }
    }
}
