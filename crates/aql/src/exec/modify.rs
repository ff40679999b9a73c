//! The data-modification nodes: one write through the operations interface per row.
//!
//! What it is: [`Executor::modify`] for INSERT, UPDATE, REPLACE, REMOVE and UPSERT, with
//! AQL's options, `NEW` and `OLD`, and `ignoreErrors` counting failed writes in
//! `writesIgnored`.
//!
//! What it is not: atomicity. A modifying query runs inside a transaction (its own, or the
//! stream transaction of its request: `crate::query`), which makes its writes all or nothing.
//!
//! Invariants: a row's write is decided by the engine's one write path, so unique indexes,
//! revisions and key rules hold alike for AQL and the document API; a write error fails the
//! query unless `ignoreErrors` is set.

use quince_errors::{ArangoError, Result};
use quince_ops::{WriteKind, WriteOptions, WriteRequest};
use serde_json::{Map, Value};

use crate::plan::{ModifyNode, ModifyOp};
use crate::value::equal;

use super::{Env, Executor, Row};

impl Executor<'_> {
    /// Applies node `m` to `row`, setting `NEW` and `OLD`.
    pub(super) fn modify(&mut self, m: &ModifyNode, row: &mut Row) -> Result<()> {
        self.ctx.control.check()?;
        let (kind, item, old) = match &m.kind {
            ModifyOp::Insert(document) => {
                let document = self.eval(document, Env::of(row))?.into_owned();
                (WriteKind::Insert, object(document)?, None)
            }
            ModifyOp::Update(key, document) | ModifyOp::Replace(key, document) => {
                let kind = if matches!(m.kind, ModifyOp::Update(..)) {
                    WriteKind::Update
                } else {
                    WriteKind::Replace
                };
                let mut document = object(self.eval(document, Env::of(row))?.into_owned())?;
                if let Some(key) = key {
                    let key = key_of(self.eval(key, Env::of(row))?.as_ref())?;
                    if let Value::Object(map) = &mut document {
                        map.insert("_key".into(), Value::String(key));
                    }
                } else if document.get("_key").is_none() {
                    return Err(missing_key());
                }
                (kind, document, None)
            }
            ModifyOp::Remove(key) => {
                let key = self.eval(key, Env::of(row))?.into_owned();
                let selector = match key {
                    Value::String(_) => key,
                    Value::Object(ref map)
                        if map.contains_key("_key") || map.contains_key("_id") =>
                    {
                        key
                    }
                    _ => return Err(missing_key()),
                };
                (WriteKind::Remove, selector, None)
            }
            ModifyOp::Upsert {
                example,
                filter,
                insert,
                update,
                replace,
                old_slot,
            } => {
                let found = match (example, filter) {
                    (Some(example), _) => {
                        let example = self.eval(example, Env::of(row))?.into_owned();
                        self.find_example(m, &example)?
                    }
                    (None, Some((condition, slot))) => {
                        self.find_filter(m, condition, *slot, row)?
                    }
                    (None, None) => None,
                };
                match found {
                    Some(old) => {
                        let key = old.get("_key").cloned().unwrap_or(Value::Null);
                        row[*old_slot] = old.clone();
                        let mut document = object(self.eval(update, Env::of(row))?.into_owned())?;
                        if let Value::Object(map) = &mut document {
                            map.insert("_key".into(), key);
                        }
                        let kind = if *replace {
                            WriteKind::Replace
                        } else {
                            WriteKind::Update
                        };
                        (kind, document, Some(old))
                    }
                    None => {
                        row[*old_slot] = Value::Null;
                        let document = self.eval(insert, Env::of(row))?.into_owned();
                        (WriteKind::Insert, object(document)?, None)
                    }
                }
            }
        };
        let options = WriteOptions {
            wait_for_sync: m.options.wait_for_sync,
            return_new: m.new_slot.is_some(),
            return_old: m.old_slot.is_some(),
            overwrite_mode: m.options.overwrite_mode,
            keep_null: m.options.keep_null,
            merge_objects: m.options.merge_objects,
            ignore_revs: m.options.ignore_revs,
            if_match: None,
            version_attribute: None,
            // AQL does not know whether its caller is an administrator, so it never skips the
            // schema (`skipDocumentValidation` stays among the options not acted on).
            skip_document_validation: false,
        };
        let mut results = m
            .collection
            .write(WriteRequest::new(kind, vec![item], options));
        if let Some(durability) = results.durability.take() {
            self.ctx.durabilities.push(durability);
        }
        let outcome = results.items.pop().expect("one result per item");
        match outcome {
            Ok(outcome) => {
                self.ctx.stats.writes_executed += 1;
                if let Some(slot) = m.new_slot {
                    row[slot] = outcome.new.unwrap_or(Value::Null);
                }
                if let Some(slot) = m.old_slot {
                    row[slot] = outcome.old.or(old).unwrap_or(Value::Null);
                }
                Ok(())
            }
            Err(_) if m.options.ignore_errors => {
                self.ctx.stats.writes_ignored += 1;
                for slot in [m.new_slot, m.old_slot].into_iter().flatten() {
                    row[slot] = Value::Null;
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// The first document whose attributes equal the example's.
    fn find_example(&mut self, m: &ModifyNode, example: &Value) -> Result<Option<Value>> {
        let Value::Object(example) = example else {
            return Err(ArangoError::with_message(
                quince_errors::QUERY_PARSE,
                "AQL: UPSERT search expression must be an object (while executing)".to_owned(),
            ));
        };
        if let Some(Value::String(key)) = example.get("_key") {
            return match m.collection.read(key) {
                Ok(doc) => {
                    let doc: Value = serde_json::from_slice(&doc.json).unwrap_or(Value::Null);
                    Ok(matches(&doc, example).then_some(doc))
                }
                Err(e) if e.is(quince_errors::ARANGO_DOCUMENT_NOT_FOUND) => Ok(None),
                Err(e) => Err(e),
            };
        }
        if let Some(found) = self.find_by_index(m, example)? {
            return Ok(found);
        }
        let mut found = None;
        m.collection.scan(&mut |stored| {
            self.ctx.stats.scanned_full += 1;
            match serde_json::from_slice::<Value>(&stored.json) {
                Ok(doc) if matches(&doc, example) => {
                    found = Some(doc);
                    false
                }
                _ => true,
            }
        })?;
        Ok(found)
    }

    /// The example's match through a persistent index whose every field the example gives
    /// (and, for a sparse index, gives non-null): `Some(answer)` when such an index exists.
    fn find_by_index(
        &mut self,
        m: &ModifyNode,
        example: &Map<String, Value>,
    ) -> Result<Option<Option<Value>>> {
        let index = m.collection.indexes().into_iter().find(|ix| {
            ix.kind == quince_ops::IndexType::Persistent
                && ix
                    .fields
                    .iter()
                    .all(|f| example.get(f).is_some_and(|v| !(ix.sparse && v.is_null())))
        });
        let Some(index) = index else {
            return Ok(None);
        };
        let values: Vec<Value> = index.fields.iter().map(|f| example[f].clone()).collect();
        let mut hits = Vec::new();
        m.collection.index_lookup(
            index.id,
            &quince_ops::IndexLookup::equal(values),
            &mut |hit| {
                hits.push((hit.key.to_owned(), hit.document.map(<[u8]>::to_vec)));
                true
            },
        )?;
        for (key, carried) in hits {
            self.ctx.stats.scanned_index += 1;
            let Some(doc) = quince_ops::hit_document(&*m.collection, &key, carried)? else {
                continue;
            };
            let doc: Value = serde_json::from_slice(&doc).unwrap_or(Value::Null);
            if matches(&doc, example) {
                return Ok(Some(Some(doc)));
            }
        }
        Ok(Some(None))
    }

    /// The first document for which `condition` (over `CURRENT`) holds.
    fn find_filter(
        &mut self,
        m: &ModifyNode,
        condition: &crate::plan::CExpr,
        slot: usize,
        row: &mut Row,
    ) -> Result<Option<Value>> {
        let mut documents = Vec::new();
        m.collection.scan(&mut |stored| {
            documents.push(stored.json);
            true
        })?;
        for json in documents {
            self.ctx.stats.scanned_full += 1;
            let doc: Value = serde_json::from_slice(&json).unwrap_or(Value::Null);
            row[slot] = doc;
            if crate::value::truthy(self.eval(condition, Env::of(row))?.as_ref()) {
                return Ok(Some(std::mem::take(&mut row[slot])));
            }
        }
        Ok(None)
    }
}

fn matches(document: &Value, example: &Map<String, Value>) -> bool {
    example
        .iter()
        .all(|(name, value)| equal(document.get(name).unwrap_or(&Value::Null), value))
}

fn object(value: Value) -> Result<Value> {
    match value {
        Value::Object(_) => Ok(value),
        _ => Err(ArangoError::with_message(
            quince_errors::ARANGO_DOCUMENT_TYPE_INVALID,
            "AQL: invalid document type (while executing)".to_owned(),
        )),
    }
}

fn key_of(value: &Value) -> Result<String> {
    match value {
        Value::String(key) => Ok(key.clone()),
        Value::Object(map) => match map.get("_key") {
            Some(Value::String(key)) => Ok(key.clone()),
            _ => Err(missing_key()),
        },
        _ => Err(missing_key()),
    }
}

fn missing_key() -> ArangoError {
    ArangoError::with_message(
        quince_errors::ARANGO_DOCUMENT_KEY_MISSING,
        "AQL: missing document key (while executing)".to_owned(),
    )
}
