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

/// The words of every `--option` in `text`.
fn options_in(text: &str) -> std::collections::BTreeSet<String> {
    let mut found = std::collections::BTreeSet::new();
    for (at, _) in text.match_indices("--") {
        let rest = &text[at + 2..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '.' || *c == '-')
            .collect();
        // `--cluster.*` names a family, not an option.
        let family = rest[name.len()..].starts_with('*');
        if name.starts_with(|c: char| c.is_ascii_lowercase()) && !family {
            found.insert(format!("--{}", name.trim_end_matches(['.', '-'])));
        }
    }
    found
}

fn repository_file(path: &str) -> String {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The README's Options section tells the truth about `--help`: it names exactly the
/// subcommands the top-level help lists, every `serve` option it shows exists, and every
/// option `serve --help` has is documented there or, for the cluster's, in docs/cluster.md.
#[test]
fn the_readme_options_section_matches_the_help() {
    let readme = repository_file("README.md");
    let section = readme
        .split("\n## Options\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README.md has an Options section");
    let sentence = section
        .lines()
        .find(|line| line.contains("`quince --help` lists the subcommands"))
        .expect("the Options section names the subcommands");
    let named: Vec<&str> = sentence
        .split('`')
        .skip(3)
        .step_by(2)
        .take_while(|word| !word.contains(' '))
        .collect();
    let help = stdout(&quince(&["--help"]));
    let listed: Vec<&str> = help
        .split("Commands:")
        .nth(1)
        .expect("a Commands section")
        .lines()
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .collect();
    assert_eq!(named, listed, "README: {sentence:?}\nhelp:\n{help}");

    let serve_help = options_in(&stdout(&quince(&["serve", "--help"])));
    let shown = options_in(section.split("\n`quince import`").next().unwrap());
    for option in &shown {
        assert!(
            serve_help.contains(option),
            "README names {option}, which `quince serve --help` does not have"
        );
    }
    let cluster = options_in(&repository_file("docs/cluster.md"));
    for option in &serve_help {
        if option == "--help" || option == "--version" {
            continue;
        }
        assert!(
            shown.contains(option) || cluster.contains(option),
            "`quince serve --help` has {option}, which neither README.md's Options nor \
             docs/cluster.md documents"
        );
    }
}
