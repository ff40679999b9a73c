//! The workspace's test layout: a crate with `autotests = false` links its integration tests
//! into `tests/integration.rs`, so a file of its `tests/` that is neither a module there nor a
//! `[[test]]` of its own in Cargo.toml would never be built or run. One check for every crate.

use std::path::Path;

#[test]
fn every_test_file_of_every_crate_is_built() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut checked = 0;
    for entry in std::fs::read_dir(&crates).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else {
            continue;
        };
        if !manifest.contains("autotests = false") {
            continue;
        }
        let linked = std::fs::read_to_string(dir.join("tests/integration.rs")).unwrap_or_default();
        for file in std::fs::read_dir(dir.join("tests")).unwrap() {
            let name = file.unwrap().file_name().into_string().unwrap();
            if !name.ends_with(".rs") || name == "integration.rs" {
                continue;
            }
            let module = format!("#[path = \"{name}\"]");
            let binary = format!("path = \"tests/{name}\"");
            assert!(
                linked.contains(&module) || manifest.contains(&binary),
                "{}/tests/{name} is not built: add it to its tests/integration.rs",
                dir.display()
            );
            checked += 1;
        }
    }
    // The seven crates that link their tests so, with about a hundred files between them.
    assert!(
        checked > 90,
        "only {checked} test files found under {}",
        crates.display()
    );
}
