//! `explain`: a plan rendered as ArangoDB's execution-plan JSON.
//!
//! What it is: [`plan_json`], the nodes Quince really runs (a `SingletonNode`, then one node
//! per pipeline step with its `id` and `dependencies`), the optimizer rules that changed the
//! plan, the collections with their access type, and the variables; [`explain`], the whole
//! `POST /_api/explain` answer.
//!
//! What it is not: a cost model. `estimatedCost` and `estimatedNrItems` are rough (a scan
//! costs the collection's count, a key lookup one per key) and say so by being simple.
//!
//! Invariants: every node of the executed pipeline appears, in execution order; a node that
//! reads through an index names the index; graph operations are `TraversalNode`,
//! `ShortestPathNode` and, for `K_SHORTEST_PATHS`, `K_PATHS` and `ALL_SHORTEST_PATHS`,
//! `EnumeratePathsNode` (ArangoDB 3.12's names).

use serde_json::{json, Value};

use crate::plan::{Access, ModifyOp, Node, Pipeline, Plan};

/// The plan as `extra.plan` / `POST /_api/explain` render it.
pub fn plan_json(plan: &Plan) -> Value {
    let mut nodes = Vec::new();
    let mut next_id = 1u64;
    nodes.push(json!({"type": "SingletonNode", "dependencies": [], "id": 1, "estimatedCost": 1, "estimatedNrItems": 1}));
    let (cost, items) = pipeline_nodes(plan, &plan.root, &mut nodes, &mut next_id, 1);
    let collections: Vec<Value> = plan
        .collections
        .iter()
        .map(|c| json!({"name": c.name, "type": if c.write { "write" } else { "read" }}))
        .collect();
    let variables: Vec<Value> = plan
        .slots
        .iter()
        .enumerate()
        .map(|(id, name)| json!({"id": id, "name": name, "isFullDocumentFromCollection": false}))
        .collect();
    json!({
        "nodes": nodes,
        "rules": plan.rules,
        "collections": collections,
        "variables": variables,
        "estimatedCost": cost,
        "estimatedNrItems": items,
        "isModificationQuery": plan.modifies,
    })
}

fn variable(plan: &Plan, slot: usize) -> Value {
    json!({"id": slot, "name": plan.slots.get(slot).cloned().unwrap_or_default()})
}

/// Appends the nodes of `pipeline`; the estimated cost and item count after its last node.
fn pipeline_nodes(
    plan: &Plan,
    pipeline: &Pipeline,
    nodes: &mut Vec<Value>,
    next_id: &mut u64,
    mut parent: u64,
) -> (f64, f64) {
    let mut cost = 1.0f64;
    let mut items = 1.0f64;
    for node in &pipeline.nodes {
        *next_id += 1;
        let id = *next_id;
        let mut body = match node {
            Node::ForCollection(f) => {
                let count = f.collection.count() as f64;
                match &f.access {
                    Access::Full => {
                        items *= count.max(1.0);
                        json!({
                            "type": "EnumerateCollectionNode",
                            "collection": f.name,
                            "outVariable": variable(plan, f.slot),
                            "random": false,
                            "producesResult": true,
                            "filter": !f.filters.is_empty(),
                            "readOwnWrites": f.snapshot,
                            "projections": f.projection.clone().unwrap_or_default(),
                            "filterProjections": f.filter_projection.clone().unwrap_or_default(),
                        })
                    }
                    Access::Index(a) => {
                        items *= (count * 0.1).max(1.0);
                        json!({
                            "type": "IndexNode",
                            "collection": f.name,
                            "outVariable": variable(plan, f.slot),
                            "indexes": [a.index.json],
                            "ascending": !a.reverse,
                            "reverse": a.reverse,
                            "producesResult": true,
                            "filter": !f.filters.is_empty(),
                            "indexCoversProjections": a.projection.is_some(),
                            "projections": a.projection.clone().unwrap_or_default(),
                        })
                    }
                    Access::Keys(_) => json!({
                        "type": "IndexNode",
                        "collection": f.name,
                        "outVariable": variable(plan, f.slot),
                        "indexes": [{
                            "id": "0", "type": "primary", "name": "primary",
                            "fields": ["_key"], "unique": true, "sparse": false,
                            "selectivityEstimate": 1,
                        }],
                        "producesResult": true,
                        "filter": !f.filters.is_empty(),
                    }),
                }
            }
            Node::ForValues { slot, .. } => {
                items *= 10.0;
                json!({"type": "EnumerateListNode", "outVariable": variable(plan, *slot)})
            }
            Node::Let { slot, value } => {
                let mut subquery = None;
                if let crate::plan::CExpr::Subquery(p) = value {
                    let mut inner = Vec::new();
                    let mut inner_id = *next_id;
                    pipeline_nodes(plan, p, &mut inner, &mut inner_id, 0);
                    *next_id = inner_id;
                    subquery = Some(json!({"nodes": inner}));
                }
                match subquery {
                    Some(s) => {
                        json!({"type": "SubqueryNode", "outVariable": variable(plan, *slot), "subquery": s})
                    }
                    None => {
                        json!({"type": "CalculationNode", "outVariable": variable(plan, *slot)})
                    }
                }
            }
            Node::Filter(_) => {
                items *= 0.5;
                json!({"type": "FilterNode"})
            }
            Node::Sort(keys) => json!({
                "type": "SortNode",
                "elements": keys.iter().map(|(_, asc)| json!({"ascending": asc})).collect::<Vec<_>>(),
                "stable": false,
            }),
            Node::Limit {
                offset,
                count,
                full_count,
            } => {
                if let Some(c) = count {
                    items = items.min(*c as f64);
                }
                json!({"type": "LimitNode", "offset": offset, "limit": count.unwrap_or(u64::MAX), "fullCount": full_count})
            }
            Node::Collect(c) => json!({
                "type": "CollectNode",
                "groups": c.groups.iter().map(|(s, _)| json!({"outVariable": variable(plan, *s)})).collect::<Vec<_>>(),
                "aggregates": c.aggregates.iter().map(|(s, _, _)| json!({"outVariable": variable(plan, *s)})).collect::<Vec<_>>(),
                "collectOptions": {"method": "sorted"},
            }),
            Node::Window(w) => json!({
                "type": "WindowNode",
                "aggregates": w.aggregates.iter().map(|(s, _, _)| json!({"outVariable": variable(plan, *s)})).collect::<Vec<_>>(),
            }),
            Node::Return { distinct, .. } => json!({"type": "ReturnNode", "distinct": distinct}),
            Node::Traversal(t) => {
                items *= 10.0;
                crate::plan::traversal::explain_traversal(t, &|s| variable(plan, s))
            }
            Node::PathSearch(p) => {
                items *= 10.0;
                crate::plan::traversal::explain_path_search(p, &|s| variable(plan, s))
            }
            Node::Modify(m) => {
                let kind = match m.kind {
                    ModifyOp::Insert(_) => "InsertNode",
                    ModifyOp::Update(..) => "UpdateNode",
                    ModifyOp::Replace(..) => "ReplaceNode",
                    ModifyOp::Remove(_) => "RemoveNode",
                    ModifyOp::Upsert { .. } => "UpsertNode",
                };
                json!({
                    "type": kind,
                    "collection": m.name,
                    "modificationFlags": {
                        "ignoreErrors": m.options.ignore_errors,
                        "waitForSync": m.options.wait_for_sync,
                        "keepNull": m.options.keep_null,
                        "mergeObjects": m.options.merge_objects,
                        "ignoreRevs": m.options.ignore_revs,
                        "exclusive": m.options.exclusive,
                    },
                })
            }
        };
        cost += items;
        body["id"] = json!(id);
        body["dependencies"] = if parent == 0 {
            json!([])
        } else {
            json!([parent])
        };
        body["estimatedCost"] = json!(cost);
        body["estimatedNrItems"] = json!(items);
        nodes.push(body);
        parent = id;
    }
    (cost, items)
}

/// The body of `POST /_api/explain` for a prepared query.
pub fn explain(prepared: &crate::Prepared, all_plans: bool) -> Value {
    let plan = plan_json(prepared.plan());
    let stats = json!({
        "rulesExecuted": prepared.plan().rules.len(),
        "rulesSkipped": 0,
        "plansCreated": 1,
        "peakMemoryUsage": 0,
        "executionTime": prepared.prepare_time,
    });
    let mut body = if all_plans {
        json!({"plans": [plan]})
    } else {
        json!({"plan": plan})
    };
    body["cacheable"] = json!(prepared.cacheable());
    body["warnings"] = json!([]);
    body["stats"] = stats;
    body["error"] = json!(false);
    body["code"] = json!(200);
    body
}
