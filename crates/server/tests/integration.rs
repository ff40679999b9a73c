//! Every integration test of `quince-server` in one binary: each file of this folder is a
//! module here, by its own name, so the files link once instead of once each and their
//! tests run side by side (`cargo test -p quince-server --test integration NAME::`).
//!
//! Invariant: every `.rs` file of `tests/` is a module here or a `[[test]]` of its own in
//! Cargo.toml (`autotests` is off); `quince-server`'s `test_files.rs` checks every crate.

#[path = "h2c_upgrade.rs"]
mod h2c_upgrade;
#[path = "help.rs"]
mod help;
#[path = "smoke.rs"]
mod smoke;
#[path = "test_files.rs"]
mod test_files;
#[path = "tls.rs"]
mod tls;
