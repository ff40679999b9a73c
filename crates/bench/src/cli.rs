//! `quince bench`: from the command line to an exit status.
//!
//! What it is: the order of a run: parse and check the options, resolve and check the
//! endpoints, prepare the server, run the threads, print the report, write the JSON report.
//!
//! What it is not: any of those steps (each has its module).
//!
//! Invariants: exit status 0 when every operation succeeded; 1 when any operation failed or a
//! setup request was refused; 2 for a usage error or an endpoint that cannot be reached.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use quince_client::RequestHead;

use crate::cases::{Workload, CASES};
use crate::options::BenchArgs;
use crate::report;
use crate::runner;
use crate::setup::{self, SetupError};

/// Exit status of a usage error or an unreachable endpoint.
pub const EXIT_USAGE: u8 = 2;
/// Exit status when requests failed.
pub const EXIT_FAILURES: u8 = 1;

/// Runs `quince bench` with these arguments (without the program and subcommand names).
pub fn bench_main(args: &[OsString]) -> ExitCode {
    let mut full: Vec<OsString> = vec!["quince bench".into()];
    full.extend_from_slice(args);
    let cases: String = CASES
        .iter()
        .map(|(name, _, about)| format!("  {name:<18} {about}\n"))
        .collect();
    let command = BenchArgs::command().after_help(format!(
        "Test cases:\n{cases}\nExit status: 0 all operations succeeded, 1 some failed, \
         2 usage error or unreachable endpoint."
    ));
    let matches = match command.try_get_matches_from(full) {
        Ok(m) => m,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { EXIT_USAGE } else { 0 });
        }
    };
    let args = match <BenchArgs as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let settings = match args.into_settings() {
        Ok(s) => s,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let status = |line: &str| {
        if !settings.quiet {
            println!("{line}");
        }
    };
    let head = RequestHead::new(
        &settings.database,
        &settings.endpoints[0].host_port,
        settings.keep_alive,
    )
    .with_basic_auth(&settings.username, &settings.password);
    let targets = match setup::resolve_and_check(&settings, &head) {
        Ok(a) => a,
        Err(e) => return setup_failed(e),
    };
    let workload = Workload::new(
        settings.case,
        &settings.collection,
        settings.complexity,
        settings.requests,
        settings.read_percent,
        settings.preload,
        rand::random(),
    );
    let soft_errors = match setup::prepare(&settings, &workload, &head, &targets[0]) {
        Ok(e) => e,
        Err(e) => return setup_failed(e),
    };
    let bench_head = if settings.async_requests {
        head.clone().with_async()
    } else {
        head.clone()
    };
    let mut outcome = runner::run(&settings, &workload, &bench_head, &targets, &status);
    for key in soft_errors {
        outcome.totals.failures += 1;
        *outcome.totals.errors.entry(key).or_default() += 1;
    }

    let mut stdout = std::io::stdout().lock();
    let _ = report::write_text(&mut stdout, &settings, &outcome);
    let totals = &outcome.totals;
    if totals.failures > 0 {
        eprintln!("WARNING: {} arangob request(s) failed!!", totals.failures);
    }
    if totals.incomplete > 0 {
        eprintln!(
            "WARNING: {} arangob requests with incomplete results!!",
            totals.incomplete
        );
    }
    if let Some(path) = &settings.json_report_file {
        let text = serde_json::to_string_pretty(&report::json_report(&settings, &outcome))
            .expect("a JSON value serialises");
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut file| {
                std::io::Write::write_all(&mut file, format!("{text}\n").as_bytes())
            });
        if let Err(e) = written {
            eprintln!(
                "error: cannot write --json-report-file {}: {e}",
                path.display()
            );
            return ExitCode::from(EXIT_FAILURES);
        }
    }
    if totals.failures > 0 || totals.incomplete > 0 {
        ExitCode::from(EXIT_FAILURES)
    } else {
        ExitCode::SUCCESS
    }
}

fn setup_failed(error: SetupError) -> ExitCode {
    match error {
        SetupError::Unreachable(message) => {
            eprintln!("error: {message}");
            ExitCode::from(EXIT_USAGE)
        }
        SetupError::Refused(message) => {
            eprintln!("error: could not set up the test: {message}");
            ExitCode::from(EXIT_FAILURES)
        }
    }
}

/// Parses `quince bench` arguments for tests and tools.
pub fn parse_args(args: &[&str]) -> Result<BenchArgs, clap::Error> {
    let mut full = vec!["quince bench"];
    full.extend_from_slice(args);
    BenchArgs::try_parse_from(full)
}
