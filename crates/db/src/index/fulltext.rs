//! The lookup of a fulltext index in the local engine: each term of the query reads the
//! range of the index's sorted entries that holds its word, or every word with its prefix
//! ([`quince_ops::fulltext::Term::lookup`]), and the terms' documents are combined left to
//! right ([`quince_ops::FulltextQuery::evaluate`]).
//!
//! What it is not: a ranking. Hits come by key, cut to the limit.
//!
//! Invariants: a term's range holds exactly the entries of the words it matches (the words
//! are kept in byte order), so the result is what [`quince_ops::FulltextQuery::matches`]
//! decides document by document in the fake engine and for a transaction's own writes.

use std::collections::BTreeSet;

use quince_errors::Result;
use quince_ops::{IndexHit, IndexLookup};
use serde_json::Value;

use super::{scan_sorted, SortedIndex};

/// Answers a `Fulltext` lookup (checked to fit the index).
pub(super) fn lookup(
    index: &SortedIndex,
    lookup: &IndexLookup,
    visit: &mut dyn FnMut(IndexHit<'_>) -> bool,
) -> Result<()> {
    let IndexLookup::Fulltext { query, .. } = lookup else {
        unreachable!("checked to be a fulltext lookup");
    };
    let keys = query.evaluate(|term| {
        let mut keys = BTreeSet::new();
        scan_sorted(index, &term.lookup(), &mut |hit| {
            keys.insert(hit.key.to_owned());
            true
        });
        Ok(keys)
    })?;
    let mut hits: Vec<(Box<[Value]>, String)> =
        keys.into_iter().map(|key| (Box::default(), key)).collect();
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
