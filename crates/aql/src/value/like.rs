//! `LIKE` patterns: `%` matches any run of characters, `_` exactly one, a backslash makes
//! the next character literal.
//!
//! What it is: the translation of a `LIKE` pattern into an anchored regular expression for
//! the `regex` crate (compiled and cached by [`super::RegexCache`]).
//!
//! What it is not: ArangoSearch's `LIKE()`, which is backed by a view's index.
//!
//! Invariants: the translation escapes every other character, so a pattern without
//! wildcards matches only the identical string; `%` and `_` also match line breaks.

/// The anchored regular expression equivalent to a `LIKE` pattern. A trailing lone backslash
/// stands for itself.
pub fn like_to_regex(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    out.push_str("(?s)^");
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some(next) => out.push_str(&regex::escape(&next.to_string())),
                None => out.push_str("\\\\"),
            },
            '%' => out.push_str(".*"),
            '_' => out.push('.'),
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push('$');
    out
}
