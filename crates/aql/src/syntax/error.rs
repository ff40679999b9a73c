//! The errors of the parser, worded as ArangoDB words them.
//!
//! What it is: constructors for [`ArangoError`]s with the codes of the query parser (1501
//! syntax error, 1502 empty query, 1504 number out of range, 1511 redeclared variable, 1512
//! unknown variable, ...), and ArangoDB's snippet of the query text at the error position.
//!
//! What it is not: a place that decides *whether* something is an error; the lexer and the
//! parser do.
//!
//! Invariants: every message has ArangoDB's client-visible frame `AQL: <detail> (while
//! parsing)`; a positioned message names the position as `near '<snippet>' at position
//! <line>:<column>` (1-based, columns in characters), and the snippet is at most 32
//! characters of the query from that position, followed by `...` when cut.

use quince_errors::ArangoError;
use quince_errors::ErrorCode;

use crate::ast::Span;

/// How many characters of the query an error message quotes (ArangoDB's snippet length).
const SNIPPET_CHARS_MAX: usize = 32;

/// A syntax error (1501) at `span`: `detail` is e.g. `syntax error, unexpected identifier`.
pub(crate) fn syntax(text: &str, span: Span, detail: &str) -> ArangoError {
    positioned(quince_errors::QUERY_PARSE, text, span, detail)
}

/// An error with `code` whose message names the position `span` and quotes the query there.
pub(crate) fn positioned(code: ErrorCode, text: &str, span: Span, detail: &str) -> ArangoError {
    let region = region(text, span);
    ArangoError::with_message(
        code,
        format!(
            "AQL: {detail} near '{region}' at position {}:{} (while parsing)",
            span.line, span.column
        ),
    )
}

/// An error with `code` and no position (ArangoDB throws these without one, e.g. 1511).
pub(crate) fn plain(code: ErrorCode, detail: &str) -> ArangoError {
    ArangoError::with_message(code, format!("AQL: {detail} (while parsing)"))
}

/// The part of `text` from `span` on, as ArangoDB quotes it: at most 32 characters, then
/// `...` if the query goes on. `\r`, `\n` and `\r\n` each end a line.
fn region(text: &str, span: Span) -> String {
    let target_line = span.line.max(1);
    let target_column = span.column.saturating_sub(1);
    let mut line = 1u32;
    let mut column = 0u32;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if line > target_line || (line >= target_line && column >= target_column) {
            break;
        }
        rest = &rest[c.len_utf8()..];
        match c {
            '\n' => {
                line += 1;
                column = 0;
            }
            '\r' => {
                line += 1;
                column = 0;
                if let Some(after) = rest.strip_prefix('\n') {
                    rest = after;
                }
            }
            _ => column += 1,
        }
    }
    let mut snippet: String = rest.chars().take(SNIPPET_CHARS_MAX).collect();
    if rest.chars().nth(SNIPPET_CHARS_MAX).is_some() {
        snippet.push_str("...");
    }
    snippet
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: u32, column: u32) -> Span {
        Span { line, column }
    }

    #[test]
    fn region_starts_at_the_position_and_is_cut_after_32_characters() {
        assert_eq!(region("this is not AQL", at(1, 1)), "this is not AQL");
        assert_eq!(region("RETURN x y", at(1, 10)), "y");
        assert_eq!(region("a\nbc d", at(2, 3)), " d");
        assert_eq!(region("a\r\nbc d", at(2, 2)), "c d");
        let long = "x".repeat(40);
        assert_eq!(region(&long, at(1, 1)), format!("{}...", "x".repeat(32)));
        assert_eq!(region("", at(1, 1)), "");
    }

    #[test]
    fn messages_carry_arangodb_frame() {
        let e = syntax(
            "this is not AQL",
            at(1, 1),
            "syntax error, unexpected identifier",
        );
        assert_eq!(e.num(), 1501);
        assert_eq!(
            e.message,
            "AQL: syntax error, unexpected identifier near 'this is not AQL' at position 1:1 \
             (while parsing)"
        );
        let e = plain(
            quince_errors::QUERY_VARIABLE_REDECLARED,
            "variable 'x' is assigned multiple times",
        );
        assert_eq!(e.num(), 1511);
        assert_eq!(
            e.message,
            "AQL: variable 'x' is assigned multiple times (while parsing)"
        );
    }
}
