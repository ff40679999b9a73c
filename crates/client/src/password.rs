//! Where every `quince` command finds the password: the one rule that `serve` (root's
//! password), `bench`, `import`, `dump` and `restore` (the password they log in with) share.
//!
//! What it is: [`password`], which takes the command line's `--server.password` (for `serve`
//! also spelled `--database.password`) and falls back to the environment variables of
//! [`PASSWORD_VARIABLES`], in that order.
//!
//! What it is not: a prompt. A tool run without a password and without the variables logs in
//! with an empty one, as ArangoDB's tools do with `--server.authentication false`.
//!
//! Invariants: an option given on the command line wins even when empty; a variable that is
//! set wins even when empty; the order of the variables is fixed and documented in the
//! README's Quick start.

/// The environment variables read, in order, when no password option is given:
/// Quince's own, then the one ArangoDB's Docker image reads for root's password.
pub const PASSWORD_VARIABLES: [&str; 2] = ["QUINCE_ROOT_PASSWORD", "ARANGO_ROOT_PASSWORD"];

/// The password: the option when given, else the first of [`PASSWORD_VARIABLES`] that is set
/// (`None` when neither is).
pub fn password(option: Option<String>) -> Option<String> {
    password_from(option, |name| std::env::var(name).ok())
}

/// [`password`] with the environment passed in, so that the rule is testable without
/// changing the process's environment.
pub fn password_from(
    option: Option<String>,
    variable: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    option.or_else(|| PASSWORD_VARIABLES.iter().find_map(|name| variable(name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_option_then_each_variable_in_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(key, _)| *key == name)
                    .map(|(_, value)| value.to_string())
            }
        };
        let both = env(&[("QUINCE_ROOT_PASSWORD", "q"), ("ARANGO_ROOT_PASSWORD", "a")]);
        assert_eq!(password_from(Some("o".into()), both).as_deref(), Some("o"));
        assert_eq!(
            password_from(Some(String::new()), both).as_deref(),
            Some("")
        );
        assert_eq!(password_from(None, both).as_deref(), Some("q"));
        let arango = env(&[("ARANGO_ROOT_PASSWORD", "a")]);
        assert_eq!(password_from(None, arango).as_deref(), Some("a"));
        assert_eq!(password_from(None, env(&[])), None);
        let empty = env(&[("QUINCE_ROOT_PASSWORD", ""), ("ARANGO_ROOT_PASSWORD", "a")]);
        assert_eq!(password_from(None, empty).as_deref(), Some(""));
    }
}
