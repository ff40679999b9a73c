//! The `quince` binary: `quince serve` starts the server; `quince start` starts and
//! supervises a cluster of them ([`start`]); `quince bench`, `quince import`, `quince dump`
//! and `quince restore` are its HTTP tools.
//!
//! What it is: the entry point, dispatching the subcommands that [`config::Command`] lists, so
//! `quince --help` names every one. `quince bench`, the hidden `quince bench-chart` and
//! `quince import`, `quince dump`, `quince restore` and `quince start` have their own option
//! sets: clap hands their arguments on untouched, and quince-bench, quince-import,
//! quince-dump and [`start`] parse them (their `--help` included).
//!
//! What it is not: the server itself ([`serve`], [`listener`], [`shutdown`]), the option
//! definitions ([`config`]) or the tools, which speak only HTTP and never reach the server's
//! crates.

mod admin_hooks;
mod cluster_member;
mod cluster_options;
mod config;
mod connection;
mod descriptors;
mod governor;
mod h2c;
mod listener;
mod logging;
mod memory;
mod options_report;
mod serve;
mod shutdown;
mod start;
mod tls;

use std::process::ExitCode;

/// jemalloc, not the system allocator: measured in docs/benchmarks/write-path.md (fewer
/// instructions per request, memory per stored document within the target). Every
/// allocation is charged to the memory account of the AQL query its thread runs, if any
/// (`quince_memory::Counting`: the query memory limits count real sizes).
#[global_allocator]
static ALLOCATOR: quince_memory::Counting<tikv_jemallocator::Jemalloc> =
    quince_memory::Counting(tikv_jemallocator::Jemalloc);

use config::Command;

fn main() -> ExitCode {
    let cli = config::parse_or_exit();
    match cli.command {
        Command::Serve(args) => serve::run(*args),
        Command::Bench(tool) => quince_bench::bench_main(&tool.args),
        Command::BenchChart(tool) => quince_bench::chart_main(&tool.args),
        Command::Import(tool) => quince_import::import_main(&tool.args),
        Command::Dump(tool) => quince_dump::dump_main(&tool.args),
        Command::Restore(tool) => quince_dump::restore_main(&tool.args),
        Command::Start(tool) => start::start_main(&tool.args),
    }
}
