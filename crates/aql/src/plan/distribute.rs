//! The cluster rules: a full scan of a sharded collection sends its filters, projection and
//! limit to the shards (ArangoDB's `scatter-in-cluster` and
//! `distribute-filtercalc-to-cluster`), so a shard hands over only the documents, and the
//! attributes of them, that the query reads.
//!
//! What it is: [`distribute`], which gives each such scan a [`RemoteScan`]: the conjuncts of
//! its filters that can be written as AQL for a shard (`aql_text.rs`), its projection, and,
//! when every conjunct went and only `LET`s stand between the scan and a `LIMIT` (without
//! `fullCount`), that limit's offset plus count. The executor turns it into the scan's
//! [`quince_ops::ScanHints`], its parameters read from the row when the scan starts.
//!
//! What it is not: a second evaluation. The executor still applies every filter and the limit
//! to what the shards hand over (the hints only make less of it), so a filter the shard did not
//! apply, or applied with a different view, changes no result. Index lookups are not covered
//! (the coordinator asks the shards for index candidates itself), nor sorts.
//!
//! Invariants: a scan of a collection that reports no cluster properties gets nothing (a
//! single server's, and a DB server's shards); the limit is sent only when no row the scan
//! hands over can be dropped between the scan and the `LIMIT`.

use super::aql_text::{render, Rendered};
use super::{Access, CExpr, Node, Pipeline, Slot};

/// What a full scan of a sharded collection sends to the shards.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemoteScan {
    /// The conjuncts of the scan's filters written as AQL (`None`: none could be).
    pub filter: Option<Rendered>,
    /// The attributes the query reads (`None`: whole documents).
    pub attributes: Option<Vec<String>>,
    /// At most this many documents are read.
    pub limit: Option<u64>,
}

/// Gives every full scan of a sharded collection in `pipeline` (and its subqueries) its
/// [`RemoteScan`]; records the rules applied.
pub fn distribute(pipeline: &mut Pipeline, rules: &mut Vec<&'static str>) {
    let (mut scatter, mut filters) = (false, false);
    walk(pipeline, &mut scatter, &mut filters);
    if scatter {
        rules.push("scatter-in-cluster");
    }
    if filters {
        rules.push("distribute-filtercalc-to-cluster");
    }
}

fn walk(pipeline: &mut Pipeline, scatter: &mut bool, filters: &mut bool) {
    for i in 0..pipeline.nodes.len() {
        let limit = limit_after(&pipeline.nodes[i + 1..]);
        let Node::ForCollection(f) = &mut pipeline.nodes[i] else {
            continue;
        };
        if !matches!(f.access, Access::Full) || f.collection.cluster_properties().is_none() {
            continue;
        }
        let mut rendered = Rendered::default();
        let mut every = true;
        for condition in &f.filters {
            let mut parts = Vec::new();
            conjuncts(condition, &mut parts);
            for part in parts {
                every &= append(&mut rendered, part, f.slot);
            }
        }
        *scatter = true;
        *filters |= !rendered.text.is_empty();
        f.remote = Some(RemoteScan {
            filter: (!rendered.text.is_empty()).then_some(rendered),
            attributes: f.projection.clone(),
            limit: limit.filter(|_| every),
        });
    }
    for node in &mut pipeline.nodes {
        node.for_each_subquery_mut(&mut |p| walk(p, scatter, filters));
    }
}

/// Appends `part` to `rendered` (after ` AND ` when it holds a condition already); false when
/// it cannot be written, `rendered` unchanged.
fn append(rendered: &mut Rendered, part: &CExpr, slot: Slot) -> bool {
    let before = rendered.text.len();
    if before > 0 {
        rendered.text.push_str(" AND ");
    }
    if render(part, slot, rendered).is_some() {
        return true;
    }
    rendered.text.truncate(before);
    false
}

/// The conjuncts of a condition (`a && b` is kept exactly when `a` and `b` both are).
fn conjuncts<'e>(condition: &'e CExpr, out: &mut Vec<&'e CExpr>) {
    match condition {
        CExpr::And(a, b) => {
            conjuncts(a, out);
            conjuncts(b, out);
        }
        other => out.push(other),
    }
}

/// The rows a scan followed by `rest` needs at most: the offset plus count of a `LIMIT` that
/// only non-volatile `LET`s separate from it (they keep every row), without `fullCount`.
fn limit_after(rest: &[Node]) -> Option<u64> {
    for node in rest {
        match node {
            Node::Let { value, .. } if !value.is_volatile() => continue,
            Node::Limit {
                offset,
                count: Some(count),
                full_count: false,
            } => return offset.checked_add(*count),
            _ => return None,
        }
    }
    None
}
