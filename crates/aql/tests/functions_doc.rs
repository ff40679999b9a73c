//! `docs/aql.md`'s function table and the registry agree: every function the table calls
//! supported is registered, every registered function has a supported row, and no function
//! is both supported and not.

use std::collections::BTreeSet;

use quince_aql::functions::{all, lookup};

fn rows() -> Vec<(String, bool)> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/aql.md"))
        .expect("docs/aql.md exists");
    let section = text
        .split("## Functions")
        .nth(1)
        .expect("a Functions section");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            let name = cells[1]
                .trim_matches('`')
                .trim_end_matches("()")
                .to_string();
            let status = cells[2];
            assert!(
                status == "supported" || status == "not supported",
                "row {name}: unknown status {status:?}"
            );
            (name, status == "supported")
        })
        .collect()
}

#[test]
fn the_function_table_matches_the_registry() {
    let rows = rows();
    assert!(
        rows.len() > 250,
        "the table lists ArangoDB's functions ({} rows)",
        rows.len()
    );
    let supported: BTreeSet<String> = rows
        .iter()
        .filter(|(_, s)| *s)
        .map(|(n, _)| n.clone())
        .collect();
    let unsupported: BTreeSet<String> = rows
        .iter()
        .filter(|(_, s)| !*s)
        .map(|(n, _)| n.clone())
        .collect();
    let registered: BTreeSet<String> = all().map(|f| f.name.to_string()).collect();
    let both: Vec<_> = supported.intersection(&unsupported).collect();
    assert!(both.is_empty(), "both supported and not: {both:?}");
    let missing: Vec<_> = supported.difference(&registered).collect();
    assert!(
        missing.is_empty(),
        "documented as supported but not registered: {missing:?}"
    );
    let undocumented: Vec<_> = registered.difference(&supported).collect();
    assert!(
        undocumented.is_empty(),
        "registered but without a supported row: {undocumented:?}"
    );
    for name in &unsupported {
        assert!(
            lookup(name).is_none(),
            "{name} is documented unsupported but registered"
        );
    }
}

#[test]
fn registered_names_are_upper_case_unique_and_arities_are_ordered() {
    let mut seen = BTreeSet::new();
    for function in all() {
        assert_eq!(function.name, function.name.to_uppercase());
        assert!(
            seen.insert(function.name),
            "{} registered twice",
            function.name
        );
        assert!(function.min_args <= function.max_args, "{}", function.name);
        assert!(std::ptr::eq(lookup(function.name).unwrap(), function));
    }
    for name in [
        "RAND",
        "UUID",
        "SLEEP",
        "DATE_NOW",
        "DOCUMENT",
        "RANDOM_TOKEN",
        "NOOPT",
    ] {
        assert!(
            !lookup(name).unwrap().deterministic,
            "{name} is not deterministic"
        );
    }
    for name in ["CONCAT", "LENGTH", "DATE_ISO8601", "NOEVAL"] {
        assert!(
            lookup(name).unwrap().deterministic,
            "{name} is deterministic"
        );
    }
}
