//! [`CoordinatorCollection`]: one sharded collection as the coordinator's engine hands it
//! out (`CollectionOps`).
//!
//! What it is: a handle that names its collection by id and reads its Plan value from the
//! cache at each call (a rename is seen at once; a dropped collection answers 1203); documents
//! go through `documents.rs` and `reads.rs`, DDL through `ddl.rs` and `indexes.rs`; whole-
//! collection operations (count, figures, revision, checksum, truncate, compact, scan, index
//! selectivity) fan out to every shard's leader through the ordinary collection API of the
//! shard collections and are combined here (counts and figures summed, the highest revision,
//! checksums XORed: each shard's checksum is an XOR over its documents, so the XOR of the
//! shards' is the collection's). A scan sends the query's filter, projection and limit
//! ([`ScanHints`]) to each shard as a cursor query (`scan.rs`). An index lookup asks each
//! shard for the documents it could hit, through the shard's own index where a condition
//! says which (edge lookups, and persistent indexes' equalities and ranges), and selects and
//! orders the hits with the rules every engine shares (`IndexSpec`,
//! `IndexLookup::entries_hits` and `finish`), each hit with its document: the same hits in
//! the same order as a local engine's.
//!
//! What it is not: a merge of sorted shard streams: an index lookup's hits are gathered whole
//! before the first is handed over; geo, fulltext and ttl lookups read every shard whole.
//!
//! Invariants: every call may block on the network; the infallible getters answer from the
//! Plan value last seen once the collection is gone.

use std::collections::HashMap;
use std::sync::Arc;

use quince_client::request::{encode_segment, Method};
use quince_errors::{
    ArangoError, Result, ARANGO_DATA_SOURCE_NOT_FOUND, ARANGO_INDEX_NOT_FOUND, BAD_PARAMETER,
    CLUSTER_NOT_ALL_SHARDING_ATTRIBUTES_GIVEN, FORBIDDEN, INTERNAL,
};
use quince_model::rev::RevisionId;
use quince_ops::{
    CollectionOps, CollectionProperties, CollectionType, EdgeDirection, FiguresReport,
    IndexDefinition, IndexDescription, IndexHit, IndexLookup, IndexSpec, IndexType,
    PropertiesUpdate, ReadRequest, ScanCounts, ScanHints, StoredDocument, WriteRequest,
    WriteResults, EDGE_INDEX_ID, EDGE_INDEX_NAME,
};
use serde_json::{json, Map, Value};

use super::catalog::CollectionEntry;
use super::context::Context;
use super::shard_requests::{error_from_body, ShardCall};
use super::{ddl, documents, indexes, reads, scan};
use crate::layout::ReplicationMode;
use crate::sharding::shard_index;

/// One sharded collection.
pub struct CoordinatorCollection {
    ctx: Arc<Context>,
    db: String,
    id: u64,
    /// The Plan value as last seen (answers the infallible getters after a drop).
    last: parking_lot::Mutex<Arc<CollectionEntry>>,
}

impl CoordinatorCollection {
    /// A handle on the collection of `entry`.
    pub fn new(ctx: Arc<Context>, entry: Arc<CollectionEntry>) -> CoordinatorCollection {
        CoordinatorCollection {
            ctx,
            db: entry.db.clone(),
            id: entry.plan.id,
            last: parking_lot::Mutex::new(entry),
        }
    }

    /// The collection's Plan value now (1203 once dropped).
    fn plan(&self) -> Result<Arc<CollectionEntry>> {
        let catalog = self.ctx.cache.catalog();
        match catalog.collection_by_id(&self.db, self.id) {
            Some(entry) => {
                *self.last.lock() = entry.clone();
                Ok(entry)
            }
            None => Err(ArangoError::new(ARANGO_DATA_SOURCE_NOT_FOUND)),
        }
    }

    fn current(&self) -> Arc<CollectionEntry> {
        self.plan().unwrap_or_else(|_| self.last.lock().clone())
    }

    /// One request per shard on the shard collection's API (`/_api/collection/<shard>/<rest>`),
    /// the replies' JSON bodies in shard order.
    fn per_shard(&self, method: Method, rest: &str, read_only: bool) -> Result<Vec<Value>> {
        let plan = self.plan()?;
        let calls: Vec<ShardCall> = plan
            .shards
            .iter()
            .map(|shard| ShardCall {
                db: self.db.clone(),
                shard: shard.clone(),
                method,
                path: rest.replace("{shard}", &encode_segment(shard)),
                body: None,
                read_only,
            })
            .collect();
        self.ctx
            .router
            .to_leaders(&calls)
            .into_iter()
            .map(|reply| {
                let reply = reply?;
                if reply.status >= 400 {
                    return Err(error_from_body(reply.status, &reply.body));
                }
                serde_json::from_slice(&reply.body).map_err(|e| {
                    ArangoError::with_message(INTERNAL, format!("a DB server's reply: {e}"))
                })
            })
            .collect()
    }

    /// Each index's selectivity estimates on the shards, by index name.
    fn shard_estimates(&self) -> std::collections::HashMap<String, Vec<f64>> {
        let mut estimates: std::collections::HashMap<String, Vec<f64>> = Default::default();
        let Ok(plan) = self.plan() else {
            return estimates;
        };
        let calls: Vec<ShardCall> = plan
            .shards
            .iter()
            .map(|shard| ShardCall {
                db: self.db.clone(),
                shard: shard.clone(),
                method: Method::Get,
                path: format!("/_api/index?collection={}", encode_segment(shard)),
                body: None,
                read_only: true,
            })
            .collect();
        for reply in self.ctx.router.to_leaders(&calls).into_iter().flatten() {
            let Ok(body) = serde_json::from_slice::<Value>(&reply.body) else {
                continue;
            };
            for index in body
                .get("indexes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let (Some(name), Some(estimate)) = (
                    index.get("name").and_then(Value::as_str),
                    index.get("selectivityEstimate").and_then(Value::as_f64),
                ) {
                    estimates
                        .entry(name.to_string())
                        .or_default()
                        .push(estimate);
                }
            }
        }
        estimates
    }
}

/// The mean of the shards' estimates (1 when no shard reported one).
fn mean(values: Option<&Vec<f64>>) -> f64 {
    match values {
        Some(values) if !values.is_empty() => values.iter().sum::<f64>() / values.len() as f64,
        _ => 1.0,
    }
}

fn figure(value: &Value, path: &[&str]) -> u64 {
    let mut at = value;
    for part in path {
        match at.get(part) {
            Some(next) => at = next,
            None => return 0,
        }
    }
    at.as_u64().unwrap_or(0)
}

impl CollectionOps for CoordinatorCollection {
    fn name(&self) -> String {
        self.current().name.clone()
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn kind(&self) -> CollectionType {
        if self.current().kind == 3 {
            CollectionType::Edge
        } else {
            CollectionType::Document
        }
    }

    fn wait_for_sync(&self) -> bool {
        documents::collection_wait_for_sync(&self.current())
    }

    fn is_system(&self) -> bool {
        quince_model::names::is_system_name(&self.current().name)
    }

    fn properties(&self) -> CollectionProperties {
        let plan = self.current();
        let property = |name: &str| plan.properties.get(name).cloned().unwrap_or(Value::Null);
        CollectionProperties {
            id: plan.id,
            name: plan.name.clone(),
            kind: self.kind(),
            is_system: quince_model::names::is_system_name(&plan.name),
            globally_unique_id: format!("c{}", plan.id),
            wait_for_sync: property("waitForSync").as_bool().unwrap_or(false),
            journal_size: property("journalSize").as_u64().unwrap_or(32 << 20),
            key_options: property("keyOptions"),
            schema: property("schema"),
            computed_values: property("computedValues"),
            cache_enabled: property("cacheEnabled").as_bool().unwrap_or(false),
        }
    }

    fn update_properties(&self, update: PropertiesUpdate) -> Result<CollectionProperties> {
        let plan = self.plan()?;
        ddl::update_properties(&self.ctx, &self.db, &plan.name, &update)?;
        self.plan()?;
        Ok(self.properties())
    }

    fn update_cluster_properties(&self, body: &Value) -> Result<()> {
        let plan = self.plan()?;
        ddl::update_cluster_properties(&self.ctx, &self.db, &plan.name, body)
    }

    fn cluster_properties(&self) -> Option<Map<String, Value>> {
        let plan = self.current();
        let mut out = Map::new();
        out.insert("numberOfShards".into(), json!(plan.number_of_shards));
        out.insert("shardKeys".into(), json!(plan.shard_keys));
        out.insert("replicationFactor".into(), json!(plan.replication_factor));
        out.insert("writeConcern".into(), json!(plan.write_concern));
        out.insert("minReplicationFactor".into(), json!(plan.write_concern));
        out.insert("shardingStrategy".into(), json!(plan.sharding_strategy));
        if let Some(prototype) = &plan.distribute_shards_like {
            out.insert("distributeShardsLike".into(), json!(prototype));
        }
        let mode = match plan.replication_mode {
            ReplicationMode::Synchronous => "synchronous",
            ReplicationMode::Asynchronous => "asynchronous",
        };
        out.insert("replicationMode".into(), json!(mode));
        Some(out)
    }

    fn shards(&self, details: bool) -> Result<Value> {
        let plan = self.plan()?;
        if !details {
            return Ok(json!(plan.shards));
        }
        let catalog = self.ctx.cache.catalog();
        let mut out = Map::new();
        for shard in &plan.shards {
            let servers: Vec<String> = catalog
                .shard_plans
                .get(shard)
                .map(|p| p.servers().cloned().collect())
                .unwrap_or_default();
            out.insert(shard.clone(), json!(servers));
        }
        Ok(Value::Object(out))
    }

    fn responsible_shard(&self, document: &Value) -> Result<String> {
        let plan = self.plan()?;
        let Some(object) = document.as_object() else {
            return Err(ArangoError::with_message(
                BAD_PARAMETER,
                "expecting a JSON object as body",
            ));
        };
        if !crate::sharding::has_all_shard_keys(&plan.shard_keys, object) {
            return Err(ArangoError::new(CLUSTER_NOT_ALL_SHARDING_ATTRIBUTES_GIVEN));
        }
        Ok(plan.shards[shard_index(&plan.shard_keys, plan.shards.len(), object)].clone())
    }

    fn count(&self) -> u64 {
        match self.per_shard(Method::Get, "/_api/collection/{shard}/count", true) {
            Ok(replies) => replies.iter().map(|r| figure(r, &["count"])).sum(),
            Err(error) => {
                tracing::warn!(event = "coordinator.count_failed", "{error}");
                0
            }
        }
    }

    fn figures(&self) -> FiguresReport {
        let plan = self.current();
        let mut report = FiguresReport {
            index_count: 1 + u64::from(plan.kind == 3) + plan.indexes.len() as u64,
            ..FiguresReport::default()
        };
        let replies = match self.per_shard(Method::Get, "/_api/collection/{shard}/figures", true) {
            Ok(replies) => replies,
            Err(error) => {
                tracing::warn!(event = "coordinator.figures_failed", "{error}");
                return report;
            }
        };
        let s = &mut report.storage;
        for reply in &replies {
            let f = reply.get("figures").unwrap_or(&Value::Null);
            s.alive_count += figure(f, &["alive", "count"]);
            s.alive_size += figure(f, &["alive", "size"]);
            s.dead_count += figure(f, &["dead", "count"]);
            s.dead_size += figure(f, &["dead", "size"]);
            s.dead_deletion += figure(f, &["dead", "deletion"]);
            s.datafiles_count += figure(f, &["datafiles", "count"]);
            s.datafiles_file_size += figure(f, &["datafiles", "fileSize"]);
            s.journals_count += figure(f, &["journals", "count"]);
            s.journals_file_size += figure(f, &["journals", "fileSize"]);
            s.compactors_count += figure(f, &["compactors", "count"]);
            s.compactors_file_size += figure(f, &["compactors", "fileSize"]);
            s.index_size += figure(f, &["indexes", "size"]);
            s.documents_size += figure(f, &["documentsSize"]);
            s.last_tick = s.last_tick.max(figure(f, &["lastTick"]));
            s.journal_size = s.journal_size.max(figure(reply, &["journalSize"]));
        }
        report
    }

    fn revision(&self) -> String {
        match self.per_shard(Method::Get, "/_api/collection/{shard}/revision", true) {
            Ok(replies) => highest_revision(&replies),
            Err(error) => {
                tracing::warn!(event = "coordinator.revision_failed", "{error}");
                "0".to_string()
            }
        }
    }

    fn checksum(&self, with_revisions: bool, with_data: bool) -> Result<(String, String)> {
        let rest = format!(
            "/_api/collection/{{shard}}/checksum?withRevisions={with_revisions}&withData={with_data}"
        );
        let replies = self.per_shard(Method::Get, &rest, true)?;
        let mut sum = 0u64;
        for reply in &replies {
            let text = reply.get("checksum").and_then(Value::as_str).unwrap_or("0");
            sum ^= text.parse::<u64>().map_err(|_| {
                ArangoError::with_message(INTERNAL, "a DB server's checksum is not a number")
            })?;
        }
        Ok((sum.to_string(), highest_revision(&replies)))
    }

    fn truncate(&self, wait_for_sync: bool) -> Result<()> {
        let rest = format!("/_api/collection/{{shard}}/truncate?waitForSync={wait_for_sync}");
        self.per_shard(Method::Put, &rest, false).map(|_| ())
    }

    fn compact(&self) -> Result<()> {
        self.per_shard(Method::Put, "/_api/collection/{shard}/compact", false)
            .map(|_| ())
    }

    fn read(&self, key: &str) -> Result<StoredDocument> {
        if !quince_model::key::is_valid_key(key) {
            // No document has it (a selector would call it malformed: 1205).
            return Err(ArangoError::new(quince_errors::ARANGO_DOCUMENT_NOT_FOUND));
        }
        let request = ReadRequest {
            selectors: vec![json!({ "_key": key })],
            ignore_revs: true,
        };
        let mut found = None;
        self.read_many(&request, &mut |result| {
            found = Some(result);
            false
        })?;
        found.unwrap_or_else(|| Err(ArangoError::new(INTERNAL)))
    }

    fn read_rev(&self, key: &str) -> Result<String> {
        self.read(key).map(|document| document.rev)
    }

    fn read_many(
        &self,
        request: &ReadRequest,
        visit: &mut dyn FnMut(Result<StoredDocument>) -> bool,
    ) -> Result<()> {
        let plan = self.plan()?;
        reads::read_many(&self.ctx.router, &self.db, &plan, request, visit);
        Ok(())
    }

    fn scan(&self, visit: &mut dyn FnMut(StoredDocument) -> bool) -> Result<()> {
        self.scan_hinted(&ScanHints::default(), visit).map(|_| ())
    }

    fn scan_hinted(
        &self,
        hints: &ScanHints,
        visit: &mut dyn FnMut(StoredDocument) -> bool,
    ) -> Result<Option<ScanCounts>> {
        let plan = self.plan()?;
        let mut counts = ScanCounts::default();
        for shard in &plan.shards {
            let (query, bind_vars) = scan::shard_query(shard, hints);
            let shard_counts = scan::run(
                &self.ctx.router,
                &self.db,
                shard,
                &query,
                bind_vars,
                &mut |document| visit(reads::stored(document, &plan.name)),
            )?;
            counts.scanned += shard_counts.counts.scanned;
            counts.filtered += shard_counts.counts.filtered;
            if shard_counts.stopped {
                break;
            }
        }
        Ok(Some(counts))
    }

    fn write(&self, request: WriteRequest) -> WriteResults {
        match self.plan() {
            Ok(plan) => {
                documents::write(&self.ctx.router, &self.ctx.keys, &self.db, &plan, request)
            }
            Err(error) => WriteResults {
                items: request.items.iter().map(|_| Err(error.clone())).collect(),
                durability: None,
                synced: request.options.wait_for_sync,
            },
        }
    }

    fn insert_texts(
        &self,
        documents: Vec<quince_model::object_text::ObjectText>,
        options: quince_ops::WriteOptions,
    ) -> WriteResults {
        match self.plan() {
            Ok(plan) => documents::insert_texts(
                &self.ctx.router,
                &self.ctx.keys,
                &self.db,
                &plan,
                documents,
                options,
            ),
            Err(error) => WriteResults {
                items: documents.iter().map(|_| Err(error.clone())).collect(),
                durability: None,
                synced: options.wait_for_sync,
            },
        }
    }

    fn indexes(&self) -> Vec<IndexDescription> {
        let plan = self.current();
        let estimates = self.shard_estimates();
        let mut all = vec![IndexDescription::primary(&plan.name)];
        if plan.kind == 3 {
            all.push(IndexDescription::edge(
                &plan.name,
                mean(estimates.get(EDGE_INDEX_NAME)),
            ));
        }
        for stored in &plan.indexes {
            if let Ok(definition) = IndexDefinition::from_stored(stored) {
                let estimate = mean(estimates.get(&definition.name));
                all.push(definition.describe(&plan.name, estimate));
            }
        }
        all
    }

    fn create_index(&self, definition: &Value) -> Result<(IndexDescription, bool)> {
        let plan = self.plan()?;
        let (definition, new) = indexes::create_index(&self.ctx, &self.db, &plan.name, definition)?;
        let estimate = mean(self.shard_estimates().get(&definition.name));
        Ok((definition.describe(&plan.name, estimate), new))
    }

    fn drop_index(&self, id_or_name: &str) -> Result<IndexDescription> {
        let plan = self.plan()?;
        let id = id_or_name.parse::<u64>().ok();
        if id == Some(0) || id_or_name == "primary" {
            return Err(ArangoError::new(ARANGO_INDEX_NOT_FOUND));
        }
        if plan.kind == 3 && (id == Some(EDGE_INDEX_ID) || id_or_name == EDGE_INDEX_NAME) {
            return Err(ArangoError::new(FORBIDDEN));
        }
        let definition = indexes::drop_index(&self.ctx, &self.db, &plan.name, id_or_name)?;
        Ok(definition.describe(&plan.name, 1.0))
    }

    fn index_lookup(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        self.index_lookup_with(index_id, lookup, true, visit)
    }

    fn index_lookup_with(
        &self,
        index_id: u64,
        lookup: &IndexLookup,
        documents: bool,
        visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
    ) -> Result<()> {
        // The shards send the documents the lookup could hit (found through their own
        // indexes where a condition says which: `scan::lookup_query`; else every document),
        // and the hits are selected and ordered here with the rules every engine shares.
        let entry = self.plan()?;
        let selector = if entry.kind == 3 && index_id == EDGE_INDEX_ID {
            let IndexLookup::Edge { direction, vertex } = lookup else {
                return Err(ArangoError::with_message(
                    BAD_PARAMETER,
                    "the edge index takes edge lookups only",
                ));
            };
            HitSelector::Edge(*direction, vertex.clone())
        } else {
            let definition = entry
                .indexes
                .iter()
                .filter_map(|stored| IndexDefinition::from_stored(stored).ok())
                .find(|definition| definition.id == index_id)
                .ok_or_else(|| ArangoError::new(ARANGO_INDEX_NOT_FOUND))?;
            lookup.check_for(&definition)?;
            HitSelector::Index(Box::new(IndexSpec::new(definition)?))
        };
        let fields = match &selector {
            HitSelector::Index(spec) if spec.definition.kind == IndexType::Persistent => {
                Some(spec.definition.fields.as_slice())
            }
            _ => None,
        };
        // Without documents, each shard sends only what the hits are made of.
        let attributes = (!documents).then(|| selector.attributes());
        let mut hits: Vec<(Box<[Value]>, String)> = Vec::new();
        let mut found: HashMap<String, Vec<u8>> = HashMap::new();
        let mut consider = |json: Vec<u8>| {
            let (values, key) = selector.hits(lookup, &json);
            if !values.is_empty() {
                hits.extend(values.into_iter().map(|values| (values, key.clone())));
                if documents {
                    found.insert(key, json);
                }
            }
            true
        };
        for shard in &entry.shards {
            let (query, binds) = scan::lookup_query(shard, lookup, fields, attributes.as_deref())
                .unwrap_or_else(|| {
                    let hints = ScanHints {
                        attributes: attributes.clone(),
                        ..ScanHints::default()
                    };
                    scan::shard_query(shard, &hints)
                });
            scan::run(
                &self.ctx.router,
                &self.db,
                shard,
                &query,
                binds,
                &mut |doc| consider(reads::stored(doc, &entry.name).json),
            )?;
        }
        lookup.finish(&mut hits);
        for (values, key) in &hits {
            let hit = IndexHit {
                key,
                values,
                document: found.get(key).map(Vec::as_slice),
            };
            if !visit(hit) {
                break;
            }
        }
        Ok(())
    }
}

/// How a coordinator picks an index's hits out of a shard's documents.
enum HitSelector {
    /// The edges of a vertex in one direction.
    Edge(EdgeDirection, String),
    /// The entries of a secondary index that the lookup selects.
    Index(Box<IndexSpec>),
}

impl HitSelector {
    /// The top-level attributes the hits are made of (`_key`, the edge ends or the indexed
    /// fields' first names).
    fn attributes(&self) -> Vec<String> {
        let mut names = vec!["_key".to_string()];
        match self {
            HitSelector::Edge(..) => names.extend(["_from".to_string(), "_to".to_string()]),
            HitSelector::Index(spec) => {
                for field in &spec.definition.fields {
                    let first = field.split(['.', '[']).next().unwrap_or(field);
                    if !names.iter().any(|n| n == first) {
                        names.push(first.to_string());
                    }
                }
            }
        }
        names
    }

    /// The hits (indexed values) the stored document `json` gives `lookup`, and its key.
    fn hits(&self, lookup: &IndexLookup, json: &[u8]) -> (Vec<Box<[Value]>>, String) {
        let Ok(Value::Object(document)) = serde_json::from_slice::<Value>(json) else {
            return (Vec::new(), String::new());
        };
        let text = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        let key = text("_key").unwrap_or_default();
        let found = match self {
            HitSelector::Edge(direction, vertex) => match (text("_from"), text("_to")) {
                (Some(from), Some(to)) => {
                    let ends = (from, to);
                    if direction.pick(&ends) == vertex {
                        vec![direction.hit_values(&ends)]
                    } else {
                        Vec::new()
                    }
                }
                _ => Vec::new(),
            },
            HitSelector::Index(spec) => spec
                .entries(&document)
                .map(|entries| lookup.entries_hits(&entries))
                .unwrap_or_default(),
        };
        (found, key)
    }
}

/// The highest of the shards' `revision` answers ("0" when none wrote).
fn highest_revision(replies: &[Value]) -> String {
    replies
        .iter()
        .filter_map(|r| r.get("revision").and_then(Value::as_str))
        .filter_map(|text| RevisionId::decode(text).map(|rev| (rev.0, text.to_string())))
        .max_by_key(|(rev, _)| *rev)
        .map_or_else(|| "0".to_string(), |(_, text)| text)
}
