//! ArangoDB's boolean option values: `true`/`false`, `yes`/`no`, `on`/`off`, `1`/`0`, `y`/`n`.
//!
//! What it is: [`parse_bool`], the clap value parser of every boolean option of `quince serve`,
//! `quince bench` and `quince import`, so the three accept the same spellings as arangod,
//! arangobench and arangoimport.
//!
//! What it is not: the rule for query parameters. There ArangoDB reads any value that is not a
//! true spelling as false and never fails; the api crate keeps that rule.
//!
//! Invariants: case and surrounding whitespace are ignored; anything else is an error whose
//! message lists the accepted spellings.

/// Parses one of ArangoDB's boolean spellings.
pub fn parse_bool(text: &str) -> Result<bool, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "on" | "1" | "y" => Ok(true),
        "false" | "no" | "off" | "0" | "n" => Ok(false),
        other => Err(format!(
            "'{other}' is not a boolean (use true/false, yes/no, on/off, 1/0)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bool;

    #[test]
    fn arangodb_spellings_in_any_case() {
        for (text, value) in [
            ("true", true),
            ("1", true),
            ("on", true),
            ("Yes", true),
            (" Y ", true),
            ("No", false),
            ("0", false),
            ("off", false),
            ("FALSE", false),
            ("n", false),
        ] {
            assert_eq!(parse_bool(text), Ok(value), "{text}");
        }
    }

    #[test]
    fn other_values_are_errors_that_list_the_spellings() {
        for text in ["maybe", "", "2", "truth"] {
            let message = parse_bool(text).unwrap_err();
            assert!(message.contains("yes/no"), "{text}: {message}");
        }
    }
}
