//! The `quince` binary: `quince serve` starts the server.
//!
//! What it is: the entry point, dispatching subcommands (`serve`). `quince bench`, the hidden
//! `quince bench-chart` and `quince import` are handed to quince-bench and quince-import before
//! clap sees them, because they have their own option sets.
//!
//! What it is not: the server itself ([`serve`], [`listener`], [`shutdown`]) or the option
//! definitions ([`config`]).

mod config;
mod connection;
mod descriptors;
mod governor;
mod listener;
mod serve;
mod shutdown;

use std::process::ExitCode;

fn main() -> ExitCode {
    // `quince bench` (the arangob-compatible load generator) and the benchmark scripts' chart
    // tool take their own options, parsed by quince-bench, which speaks only HTTP.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match args.get(1).and_then(|a| a.to_str()) {
        Some("bench") => return quince_bench::bench_main(&args[2..]),
        Some("bench-chart") => return quince_bench::chart_main(&args[2..]),
        // `quince import` (the arangoimport-compatible loader) also speaks only HTTP.
        Some("import") => return quince_import::import_main(&args[2..]),
        _ => {}
    }
    let cli = config::parse_or_exit();
    match cli.command {
        config::Command::Serve(args) => serve::run(args),
    }
}
