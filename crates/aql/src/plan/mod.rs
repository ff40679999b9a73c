//! The execution plan of a query: what the executor really runs, and what `explain` shows.
//!
//! What it is: a [`Plan`] is a [`Pipeline`] of [`Node`]s over numbered variable slots, with
//! every name resolved (variables to slots, collections to handles of the operations
//! interface, functions to the library, bind parameters to their values). It is built by
//! [`compile`] and improved by [`optimize`] (the rules applied are listed in
//! [`Plan::rules`]).
//!
//! What it is not: the executor (`crate::exec`), nor text: `explain` renders a plan as
//! ArangoDB's node JSON (`crate::explain`).
//!
//! Invariants: a pipeline's nodes run in order; the scanning nodes (`ForCollection`) are the
//! only ones that read a collection, and the modification nodes the only ones that write, so
//! a cluster coordinator can cut a plan at the boundary between scanning (on the shards) and
//! gathering (everything after). Slots are unique across a query and its subqueries, so a
//! subquery's row extends its outer row.

pub mod aql_text;
mod compile;
pub mod distribute;
pub mod edge_index;
mod expr;
pub mod indexes;
mod optimize;
pub mod pushdown;
pub mod traversal;

use std::sync::Arc;

use quince_ops::{CollectionOps, OverwriteMode};
use serde_json::Value;

pub use compile::{compile, compile_expression};
pub use expr::{CExpr, CKey, CQuantifier};
pub use optimize::optimize;
pub use traversal::{
    EdgeCollection, GraphEdges, PathCondition, PathSearchNode, PathTarget, TraversalNode,
};

/// Every optimizer rule Quince applies (`GET /_api/query/rules`), by ArangoDB's names.
pub const RULES: &[&str] = &[
    "remove-unnecessary-calculations",
    "use-indexes",
    "use-index-for-sort",
    "move-filters-into-enumerate",
    "reduce-extraction-to-projection",
    "late-document-materialization",
    "optimize-traversals",
    "remove-filter-covered-by-traversal",
    "scatter-in-cluster",
    "distribute-filtercalc-to-cluster",
    "distribute-sort-to-cluster",
];

/// A variable slot: an index into a row.
pub type Slot = usize;

/// A compiled query.
pub struct Plan {
    /// The top-level pipeline.
    pub root: Pipeline,
    /// Every variable's name, by slot (user variables keep their names; the planner's own
    /// start with `#`).
    pub slots: Vec<String>,
    /// The collections the query reads or writes, by name, with how.
    pub collections: Vec<UsedCollection>,
    /// The optimizer rules that changed the plan, in the order applied.
    pub rules: Vec<&'static str>,
    /// True when a modification node is present.
    pub modifies: bool,
    /// True when a modification asked for `waitForSync`.
    pub wait_for_sync: bool,
    /// True when every function called is deterministic and nothing is written (the query
    /// results cache may keep the result).
    pub deterministic: bool,
    /// Warnings of the compile stage (unknown graph options), given to every run.
    pub warnings: Vec<crate::value::Warning>,
}

/// A collection a query touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsedCollection {
    /// Its name.
    pub name: String,
    /// True when the query writes it.
    pub write: bool,
    /// True when a modification asked for `exclusive`.
    pub exclusive: bool,
}

/// A sequence of nodes fed by one input row (the query's empty row, or a subquery's outer
/// row).
pub struct Pipeline {
    /// The nodes, in order.
    pub nodes: Vec<Node>,
}

/// One step of a pipeline.
pub enum Node {
    /// Iterates over a collection's documents.
    ForCollection(ForCollection),
    /// Iterates over the elements of an array value (a subquery's result, a list).
    ForValues {
        /// The loop variable.
        slot: Slot,
        /// The array.
        source: CExpr,
    },
    /// Computes a variable.
    Let {
        /// The variable.
        slot: Slot,
        /// Its value.
        value: CExpr,
    },
    /// Drops rows whose condition is falsy.
    Filter(CExpr),
    /// Sorts all rows (a pipeline breaker).
    Sort(Vec<(CExpr, bool)>),
    /// Skips and caps rows.
    Limit {
        /// Rows skipped.
        offset: u64,
        /// Rows passed on (`None`: no cap).
        count: Option<u64>,
        /// True for the last top-level LIMIT of a `fullCount` query: it counts every row that
        /// reaches it instead of stopping its input.
        full_count: bool,
    },
    /// Groups rows (a pipeline breaker).
    Collect(CollectNode),
    /// Aggregates over neighbouring rows (a pipeline breaker).
    Window(WindowNode),
    /// Hands a value to the output.
    Return {
        /// The value.
        value: CExpr,
        /// `RETURN DISTINCT`.
        distinct: bool,
    },
    /// Writes a document per row.
    Modify(Box<ModifyNode>),
    /// A graph traversal: a row per path reached.
    Traversal(Box<TraversalNode>),
    /// A path search between two vertices.
    PathSearch(Box<PathSearchNode>),
}

/// How a `FOR` over a collection reads it.
pub struct ForCollection {
    /// The loop variable.
    pub slot: Slot,
    /// The collection's name (for explain and errors).
    pub name: String,
    /// The collection.
    pub collection: Arc<dyn CollectionOps>,
    /// Full scan, primary-key lookups or a secondary index.
    pub access: Access,
    /// Conditions evaluated on each document inside the scan, before the row goes on (filters
    /// moved into the scan by the optimizer).
    pub filters: Vec<CExpr>,
    /// Read every document before the first row goes on: the query also writes this
    /// collection, and must not see its own writes through the loop.
    pub snapshot: bool,
    /// When the rest of the query reads the loop variable only as `x.name`: the names, so
    /// only those attributes of each document are built.
    pub projection: Option<Vec<String>>,
    /// When the filters in the scan read the variable only as `x.name`: the names; each
    /// document is first built with only these for the filters, and whole (or as
    /// `projection` says) only when it passes.
    pub filter_projection: Option<Vec<String>>,
    /// What a full scan may leave to where the documents are (a cluster's shards): the
    /// filters, the projection and the limit (`distribute.rs`); `None` for a collection that
    /// is not sharded.
    pub remote: Option<distribute::RemoteScan>,
}

/// How documents are found.
pub enum Access {
    /// Every document.
    Full,
    /// The documents whose `_key` is the value (a string, or each string of an array).
    Keys(CExpr),
    /// A range of a secondary index.
    Index(Box<IndexAccess>),
}

/// A read through a secondary (persistent) index: equality on a prefix of its fields, then an
/// optional range on the next field, in index order (or reversed).
pub struct IndexAccess {
    /// The index.
    pub index: quince_ops::IndexDescription,
    /// One value per leading field, compared with `==` (a value that is an array under
    /// `in_last` holds the candidates of the last one).
    pub prefix: Vec<CExpr>,
    /// The last prefix value is a list of candidates (`IN`): one lookup per candidate.
    pub in_last: bool,
    /// The lower bound on the field after the prefix, and whether it is included.
    pub low: Option<(CExpr, bool)>,
    /// The upper bound, and whether it is included.
    pub high: Option<(CExpr, bool)>,
    /// Read in descending order.
    pub reverse: bool,
    /// When the rest of the query reads only these top-level attributes of the document (the
    /// index's fields, and `_key`), the document is never fetched: an object of them is built
    /// from the index entry (late materialization avoided altogether).
    pub projection: Option<Vec<String>>,
}

/// `COLLECT` compiled.
pub struct CollectNode {
    /// Group variables and the values grouped by.
    pub groups: Vec<(Slot, CExpr)>,
    /// Aggregate variables, the aggregate function and its input.
    pub aggregates: Vec<(Slot, Aggregate, CExpr)>,
    /// `INTO var [= expr]`: the variable and what each member contributes (`None`: an object
    /// of the `keep` variables).
    pub into: Option<(Slot, Option<CExpr>)>,
    /// The variables an `INTO` without expression keeps (their names and slots).
    pub keep: Vec<(String, Slot)>,
    /// `WITH COUNT INTO var`.
    pub count: Option<Slot>,
}

/// An aggregate function of `COLLECT ... AGGREGATE` and `WINDOW`.
#[derive(Clone, Copy)]
pub enum Aggregate {
    /// LENGTH / COUNT: the number of values.
    Count,
    /// SUM.
    Sum,
    /// MIN (nulls ignored).
    Min,
    /// MAX.
    Max,
    /// Any other aggregate: the library function applied to the array of values.
    Function(&'static crate::functions::Function),
}

/// `WINDOW` compiled.
pub struct WindowNode {
    /// The range value of the range-based form (`None`: row-based).
    pub range_value: Option<CExpr>,
    /// Rows (or range units) before; `None` is unbounded.
    pub preceding: Option<f64>,
    /// Rows (or range units) after; `None` is unbounded.
    pub following: Option<f64>,
    /// The aggregates.
    pub aggregates: Vec<(Slot, Aggregate, CExpr)>,
}

/// A data-modification node.
pub struct ModifyNode {
    /// Which operation.
    pub kind: ModifyOp,
    /// The collection's name.
    pub name: String,
    /// The collection.
    pub collection: Arc<dyn CollectionOps>,
    /// The options.
    pub options: ModifyOptions,
    /// `NEW`, when a later node reads it.
    pub new_slot: Option<Slot>,
    /// `OLD`, when a later node reads it.
    pub old_slot: Option<Slot>,
}

/// The compiled operations of [`ModifyNode`].
pub enum ModifyOp {
    /// INSERT.
    Insert(CExpr),
    /// UPDATE (key expression of the WITH form, document).
    Update(Option<CExpr>, CExpr),
    /// REPLACE.
    Replace(Option<CExpr>, CExpr),
    /// REMOVE.
    Remove(CExpr),
    /// UPSERT.
    Upsert {
        /// An example object (`Some`) or a filter over the candidate's slot.
        example: Option<CExpr>,
        /// `UPSERT FILTER cond`: the condition and the slot `CURRENT` binds.
        filter: Option<(CExpr, Slot)>,
        /// The document inserted.
        insert: CExpr,
        /// The patch or replacement (sees `OLD`).
        update: CExpr,
        /// REPLACE instead of UPDATE.
        replace: bool,
        /// The slot of `OLD` inside the update expression.
        old_slot: Slot,
    },
}

/// The `OPTIONS` of a modification, with AQL's defaults.
#[derive(Clone, Debug)]
pub struct ModifyOptions {
    /// Errors of single documents are counted in `writesIgnored` instead of failing.
    pub ignore_errors: bool,
    /// Durable before the query answers.
    pub wait_for_sync: bool,
    /// Update rule.
    pub keep_null: bool,
    /// Update rule.
    pub merge_objects: bool,
    /// A `_rev` in the document is ignored (AQL's default: true).
    pub ignore_revs: bool,
    /// INSERT's overwrite mode.
    pub overwrite_mode: OverwriteMode,
    /// Lock the collection exclusively.
    pub exclusive: bool,
    /// Options given but not acted on (refillIndexCaches, ...), kept for explain.
    pub other: Value,
}

impl Default for ModifyOptions {
    fn default() -> Self {
        ModifyOptions {
            ignore_errors: false,
            wait_for_sync: false,
            keep_null: true,
            merge_objects: true,
            ignore_revs: true,
            overwrite_mode: OverwriteMode::Conflict,
            exclusive: false,
            other: Value::Null,
        }
    }
}
