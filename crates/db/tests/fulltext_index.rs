//! Fulltext indexes in the local engine: queries of every form (complete and prefix words,
//! and, or, not) against a brute-force evaluation over random texts (a property test), what
//! survives churn, a compaction and a restart, and a stream transaction's view.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use proptest::prelude::*;
use quince_db::{
    Catalog, CollectionOps, DatabaseOps, IndexLookup, WriteKind, WriteOptions, WriteRequest,
};
use quince_ops::{FulltextQuery, TransactionOptions};
use serde_json::{json, Value};

use common::{create, open_os};

fn database(catalog: &Catalog) -> Arc<dyn DatabaseOps> {
    catalog.database("_system").unwrap()
}

fn collection(catalog: &Catalog, name: &str) -> Arc<dyn CollectionOps> {
    let db = database(catalog);
    match db.collection(name) {
        Ok(c) => c,
        Err(_) => db.create_collection(create(name)).unwrap(),
    }
}

fn write(c: &dyn CollectionOps, kind: WriteKind, docs: Vec<Value>) {
    let results = c.write(WriteRequest::new(kind, docs, WriteOptions::default()));
    for item in results.items {
        item.unwrap();
    }
}

fn find(c: &dyn CollectionOps, id: u64, query: &str, limit: Option<usize>) -> Vec<String> {
    let lookup = IndexLookup::Fulltext {
        query: FulltextQuery::parse(query).unwrap(),
        limit,
    };
    let mut keys = Vec::new();
    c.index_lookup(id, &lookup, &mut |hit| {
        keys.push(hit.key.to_owned());
        true
    })
    .unwrap();
    keys
}

/// A small vocabulary with shared prefixes, mixed case and non-ASCII letters.
const WORDS: &[&str] = &[
    "Apfel",
    "apfelbaum",
    "APP",
    "ap",
    "Bär",
    "bären",
    "bar",
    "baz",
    "x",
    "日本",
    "日本語",
    "zz9",
];

/// The words a text gives, as the index derives them (lower-cased, at least 2 characters).
fn brute_words(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() >= 2)
        .collect()
}

/// A query's meaning written out over one document's words.
fn brute_match(terms: &[(char, bool, &str)], words: &BTreeSet<String>) -> bool {
    let mut matched = false;
    for (i, (op, prefix, word)) in terms.iter().enumerate() {
        let word = word.to_lowercase();
        let hit = words.iter().any(|w| {
            if *prefix {
                w.starts_with(&word)
            } else {
                *w == word
            }
        });
        matched = match (i, op) {
            (0, '-') => false,
            (0, _) => hit,
            (_, '|') => matched || hit,
            (_, '-') => matched && !hit,
            _ => matched && hit,
        };
    }
    matched
}

fn arb_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(WORDS), 0..6).prop_map(|w| w.join(", "))
}

fn arb_term() -> impl Strategy<Value = (char, bool, &'static str)> {
    (
        prop::sample::select(vec!['+', '|', '-', ' ']),
        any::<bool>(),
        prop::sample::select(WORDS).prop_filter("a word", |w| w.chars().count() >= 2),
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn queries_equal_brute_force(
        texts in prop::collection::vec(arb_text(), 0..40),
        queries in prop::collection::vec(prop::collection::vec(arb_term(), 1..4), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        let (index, _) = c.create_index(&json!({"type": "fulltext", "fields": ["t"]})).unwrap();
        let docs = texts
            .iter()
            .enumerate()
            .map(|(i, t)| json!({"_key": format!("k{i:02}"), "t": t}));
        write(&*c, WriteKind::Insert, docs.collect());
        for terms in &queries {
            let query: Vec<String> = terms
                .iter()
                .map(|(op, prefix, word)| {
                    let kind = if *prefix { "prefix:" } else { "complete:" };
                    format!("{}{kind}{word}", op.to_string().trim())
                })
                .collect();
            let query = query.join(",");
            let expected: Vec<String> = texts
                .iter()
                .enumerate()
                .filter(|(_, t)| brute_match(terms, &brute_words(t)))
                .map(|(i, _)| format!("k{i:02}"))
                .collect();
            prop_assert_eq!(find(&*c, index.id, &query, None), expected, "{}", query);
        }
        catalog.shutdown().unwrap();
    }
}

#[test]
fn churn_compaction_restart_and_transactions() {
    let dir = tempfile::tempdir().unwrap();
    let id;
    {
        let catalog = open_os(dir.path());
        let c = collection(&catalog, "c");
        id = c
            .create_index(&json!({"type": "fulltext", "fields": ["t"], "minLength": 3}))
            .unwrap()
            .0
            .id;
        for round in 0..3 {
            let docs = (0..100)
                .map(|i| json!({"_key": format!("k{i:03}"), "t": format!("word{} common", (i + round) % 10)}))
                .collect();
            let kind = if round == 0 {
                WriteKind::Insert
            } else {
                WriteKind::Replace
            };
            write(&*c, kind, docs);
        }
        c.compact().unwrap();
        assert_eq!(find(&*c, id, "word0", None).len(), 10);
        assert_eq!(find(&*c, id, "prefix:word", Some(5)).len(), 5);
        catalog.shutdown().unwrap();
    }
    let catalog = open_os(dir.path());
    let c = collection(&catalog, "c");
    assert_eq!(c.indexes()[1].json["minLength"], 3);
    assert_eq!(find(&*c, id, "word0", None).len(), 10);
    assert_eq!(find(&*c, id, "common,-word0,-word1", None).len(), 80);
    let trx = database(&catalog)
        .begin_transaction(TransactionOptions {
            write: vec!["c".into()],
            ..TransactionOptions::default()
        })
        .unwrap();
    let inside = trx.database().collection("c").unwrap();
    write(
        &*inside,
        WriteKind::Remove,
        vec![json!("k000"), json!("k001")],
    );
    write(
        &*inside,
        WriteKind::Insert,
        vec![json!({"_key": "a", "t": "Brand new WORD0"})],
    );
    // The first two committed keys are gone inside; the limit is still met.
    assert_eq!(
        find(&*inside, id, "common", Some(3)),
        ["k002", "k003", "k004"]
    );
    assert_eq!(find(&*inside, id, "word0", Some(2)).first().unwrap(), "a");
    assert_eq!(find(&*inside, id, "brand", None), ["a"]);
    assert!(find(&*c, id, "brand", None).is_empty());
    trx.commit().unwrap();
    assert_eq!(find(&*c, id, "prefix:bra", None), ["a"]);
    catalog.shutdown().unwrap();
}
