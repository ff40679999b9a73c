//! The `quince` binary: `quince serve` starts the server.
//!
//! What it is: the entry point, dispatching subcommands (`serve` now; `bench` and `import`
//! will join it as further variants of [`config::Command`]).
//!
//! What it is not: the server itself ([`serve`], [`listener`], [`shutdown`]) or the option
//! definitions ([`config`]).

mod config;
mod listener;
mod serve;
mod shutdown;

use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = config::parse_or_exit();
    match cli.command {
        config::Command::Serve(args) => serve::run(args),
    }
}
