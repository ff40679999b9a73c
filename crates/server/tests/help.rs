//! The `quince` binary's help: the top level lists every subcommand with its one-line
//! description, and each tool's `--help` is the tool's own, with its ArangoDB option names.

use std::process::{Command, Output};

fn quince(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_quince"))
        .args(args)
        .output()
        .expect("the quince binary runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("help is UTF-8")
}

/// The help line of `command`, e.g. `  bench  Loads a server…`.
fn command_line<'a>(help: &'a str, command: &str) -> Option<&'a str> {
    help.lines()
        .find(|line| line.split_whitespace().next() == Some(command))
}

#[test]
fn top_level_help_lists_serve_bench_and_import() {
    let output = quince(&["--help"]);
    assert!(output.status.success(), "{output:?}");
    let help = stdout(&output);
    for command in ["serve", "bench", "import"] {
        let line = command_line(&help, command)
            .unwrap_or_else(|| panic!("`{command}` is not listed in:\n{help}"));
        assert!(
            line.split_whitespace().count() > 2,
            "`{command}` has no description: {line:?}"
        );
    }
    // The chart tool of the benchmark scripts stays out of the list.
    assert!(command_line(&help, "bench-chart").is_none(), "{help}");
}

#[test]
fn each_tool_prints_its_own_help() {
    for (tool, option) in [
        ("bench", "--concurrency"),
        ("import", "--on-duplicate"),
        ("serve", "--database.directory"),
    ] {
        let output = quince(&[tool, "--help"]);
        assert!(output.status.success(), "{tool}: {output:?}");
        let help = stdout(&output);
        assert!(
            help.contains(option),
            "`quince {tool} --help` lacks {option}:\n{help}"
        );
    }
}

#[test]
fn tool_options_reach_the_tool() {
    let output = quince(&["import", "--type", "xml"]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("possible values: json, jsonl, csv, tsv"),
        "{error}"
    );
}
