//! Every integration test of `quince-server` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-server --test integration NAME::`).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `every_test_file_is_built` fails otherwise.

#[path = "h2c_upgrade.rs"]
mod h2c_upgrade;
#[path = "help.rs"]
mod help;
#[path = "smoke.rs"]
mod smoke;
#[path = "tls.rs"]
mod tls;

/// A test file that is neither a module here nor a `[[test]]` would never run.
#[test]
fn every_test_file_is_built() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    let here = include_str!("integration.rs");
    for entry in std::fs::read_dir(dir.join("tests")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if !name.ends_with(".rs") || name == "integration.rs" {
            continue;
        }
        let module = format!("#[path = \"{name}\"]");
        let binary = format!("path = \"tests/{name}\"");
        assert!(
            here.contains(&module) || manifest.contains(&binary),
            "tests/{name} is not built: add it to tests/integration.rs"
        );
    }
}
