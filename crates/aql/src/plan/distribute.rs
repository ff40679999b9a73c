//! The cluster rules: a full scan of a sharded collection sends its filters, projection, sort
//! and limit to the shards (ArangoDB's `scatter-in-cluster`,
//! `distribute-filtercalc-to-cluster` and `distribute-sort-to-cluster`), so a shard hands over
//! only the documents, and the attributes of them, that the query reads.
//!
//! What it is: [`distribute`], which gives each such scan a [`RemoteScan`]: the conjuncts of
//! its filters that can be written as AQL for a shard (`aql_text.rs`), its projection, and,
//! when every conjunct went and only `LET`s stand between the scan and a `LIMIT` (without
//! `fullCount`), that limit's offset plus count, with the keys of a `SORT` right before the
//! `LIMIT` when they read nothing those `LET`s define. The executor turns it into the scan's
//! [`quince_ops::ScanHints`], its parameters read from the row when the scan starts.
//!
//! What it is not: a second evaluation. The executor still applies every filter, the sort and
//! the limit to what the shards hand over (the hints only make less of it), so a filter the
//! shard did not apply changes no result, and the first rows of the sorted union of each
//! shard's first rows are the first rows overall. Index lookups are not covered (the
//! coordinator asks the shards for index candidates itself).
//!
//! Invariants: a scan of a collection that reports no cluster properties gets nothing (a
//! single server's, and a DB server's shards); the limit is sent only when no row the scan
//! hands over can be dropped before the `LIMIT`, and with a sort only when the sort comes
//! right before it.

use std::collections::HashSet;

use super::aql_text::{render, Param, Rendered};
use super::{Access, CExpr, Node, Pipeline, Slot};

/// What a full scan of a sharded collection sends to the shards.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemoteScan {
    /// The conjuncts of the scan's filters written as AQL (`None`: none could be).
    pub filter: Option<String>,
    /// The sort keys (text, ascending) that the limit keeps the first rows of.
    pub sort: Vec<(String, bool)>,
    /// The bind parameters of the filter and the sort keys.
    pub params: Vec<(String, Param)>,
    /// The attributes the query reads (`None`: whole documents).
    pub attributes: Option<Vec<String>>,
    /// At most this many documents are read.
    pub limit: Option<u64>,
}

/// Gives every full scan of a sharded collection in `pipeline` (and its subqueries) its
/// [`RemoteScan`]; records the rules applied.
pub fn distribute(pipeline: &mut Pipeline, rules: &mut Vec<&'static str>) {
    let mut applied = Applied::default();
    walk(pipeline, &mut applied);
    if applied.scatter {
        rules.push("scatter-in-cluster");
    }
    if applied.filters {
        rules.push("distribute-filtercalc-to-cluster");
    }
    if applied.sort {
        rules.push("distribute-sort-to-cluster");
    }
}

#[derive(Default)]
struct Applied {
    scatter: bool,
    filters: bool,
    sort: bool,
}

fn walk(pipeline: &mut Pipeline, applied: &mut Applied) {
    for i in 0..pipeline.nodes.len() {
        let (head, rest) = pipeline.nodes.split_at_mut(i + 1);
        let Node::ForCollection(f) = &mut head[i] else {
            continue;
        };
        if !matches!(f.access, Access::Full) || f.collection.cluster_properties().is_none() {
            continue;
        }
        let mut scratch = Rendered::default();
        let mut conditions = Vec::new();
        let mut every = true;
        for condition in &f.filters {
            for part in condition.conjuncts() {
                match text_of(part, f.slot, &mut scratch) {
                    Some(text) => conditions.push(text),
                    None => every = false,
                }
            }
        }
        let mut remote = RemoteScan {
            filter: (!conditions.is_empty()).then(|| conditions.join(" AND ")),
            attributes: f.projection.clone(),
            ..RemoteScan::default()
        };
        if every {
            if let Some((limit, keys)) = limit_after(rest) {
                let sort: Option<Vec<(String, bool)>> = keys
                    .iter()
                    .map(|(key, ascending)| {
                        text_of(key, f.slot, &mut scratch).map(|text| (text, *ascending))
                    })
                    .collect();
                // A sort whose keys cannot be sent makes the limit meaningless on a shard.
                if let Some(sort) = sort {
                    applied.sort |= !sort.is_empty();
                    remote.sort = sort;
                    remote.limit = Some(limit);
                }
            }
        }
        remote.params = scratch.params;
        applied.scatter = true;
        applied.filters |= remote.filter.is_some();
        f.remote = Some(remote);
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| walk(p, applied));
    }
}

/// `expr` written as AQL in `scratch` (its parameters added there), or `None`.
fn text_of(expr: &CExpr, slot: Slot, scratch: &mut Rendered) -> Option<String> {
    render(expr, slot, scratch)?;
    Some(std::mem::take(&mut scratch.text))
}

/// The rows a scan followed by `rest` needs at most, and the sort keys they are the first of
/// (empty: any rows): a `LIMIT` (without `fullCount`) that only non-volatile `LET`s separate
/// from the scan, or a `SORT` followed by such a `LIMIT` whose keys read no variable those
/// `LET`s define.
fn limit_after(rest: &[Node]) -> Option<(u64, &[(CExpr, bool)])> {
    let mut defined = HashSet::new();
    let mut sort: Option<&[(CExpr, bool)]> = None;
    for node in rest {
        match node {
            Node::Let { slot, value } if sort.is_none() && !value.is_volatile() => {
                defined.insert(*slot);
            }
            Node::Sort(keys) if sort.is_none() => {
                let mut reads_later = false;
                for (key, _) in keys {
                    key.visit_slots(&mut |s| reads_later |= defined.contains(&s));
                }
                if reads_later {
                    return None;
                }
                sort = Some(keys);
            }
            Node::Limit {
                offset,
                count: Some(count),
                full_count: false,
            } => return Some((offset.checked_add(*count)?, sort.unwrap_or(&[]))),
            _ => return None,
        }
    }
    None
}
