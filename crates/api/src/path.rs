//! The request target taken apart: the `/_db/{name}/` prefix, the path segments and the query
//! parameters, all percent-decoded.
//!
//! What it is: [`parse_target`], a pure function from the raw target (`/_db/x/_api/...?a=b`)
//! to a [`Target`].
//!
//! What it is not: routing or database lookup. A database name that does not exist still
//! parses; the pipeline resolves it.
//!
//! Invariants: segments are split on `/` *before* decoding, so an encoded `%2F` stays inside
//! its segment; empty segments (doubled or trailing slashes) are dropped; every string handed
//! out is valid UTF-8 (malformed encodings are a 400, never replaced silently).

use percent_encoding::percent_decode;
use quince_errors::{ArangoError, Result, HTTP_BAD_PARAMETER};

use crate::limits::QUERY_PARAMS_MAX;

/// The database used when the path has no `/_db/{name}` prefix.
pub const SYSTEM_DATABASE: &str = "_system";

/// A request target, decoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The database name from the `/_db/{name}` prefix, or `_system`.
    pub database: String,
    /// The decoded path after the prefix, starting with `/` (for messages such as
    /// `unknown path '…'`).
    pub path: String,
    /// The decoded, non-empty segments of [`Target::path`].
    pub segments: Vec<String>,
    /// The decoded query parameters, in order (`+` stands for a space, as in forms).
    pub query: Vec<(String, String)>,
}

/// Takes a raw request target (`path[?query]`) apart.
pub fn parse_target(target: &str) -> Result<Target> {
    let (raw_path, raw_query) = match target.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (target, None),
    };
    let (database, rest) = split_database(raw_path)?;
    let path = decode(rest)?;
    let segments = rest
        .split('/')
        .filter(|s| !s.is_empty())
        .map(decode)
        .collect::<Result<Vec<_>>>()?;
    let query = match raw_query {
        Some(q) => parse_query(q)?,
        None => Vec::new(),
    };
    Ok(Target {
        database,
        path,
        segments,
        query,
    })
}

/// Splits `/_db/{name}/rest` into the decoded name and `/rest`; other paths belong to
/// `_system`.
fn split_database(raw_path: &str) -> Result<(String, &str)> {
    let Some(after) = raw_path.strip_prefix("/_db/") else {
        let path = if raw_path.is_empty() { "/" } else { raw_path };
        return Ok((SYSTEM_DATABASE.to_string(), path));
    };
    let (name, rest) = match after.find('/') {
        Some(i) => (&after[..i], &after[i..]),
        None => (after, "/"),
    };
    Ok((decode(name)?, rest))
}

/// Parses `a=1&b&c=x+y` into decoded pairs; a key without `=` has an empty value.
fn parse_query(raw: &str) -> Result<Vec<(String, String)>> {
    let mut params = Vec::new();
    for pair in raw.split('&').filter(|p| !p.is_empty()) {
        if params.len() == QUERY_PARAMS_MAX {
            return Err(ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                format!("too many query parameters (at most {QUERY_PARAMS_MAX})"),
            ));
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        params.push((decode_form(key)?, decode_form(value)?));
    }
    Ok(params)
}

/// Percent-decodes one path piece to UTF-8.
fn decode(raw: &str) -> Result<String> {
    percent_decode(raw.as_bytes())
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| malformed())
}

/// Percent-decodes one query piece, where `+` is a space.
fn decode_form(raw: &str) -> Result<String> {
    if raw.contains('+') {
        decode(&raw.replace('+', " "))
    } else {
        decode(raw)
    }
}

fn malformed() -> ArangoError {
    ArangoError::with_message(
        HTTP_BAD_PARAMETER,
        "invalid URL: percent-encoding is not valid UTF-8",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_paths_belong_to_system() {
        let t = parse_target("/_api/version").unwrap();
        assert_eq!(t.database, "_system");
        assert_eq!(t.path, "/_api/version");
        assert_eq!(t.segments, ["_api", "version"]);
        assert!(t.query.is_empty());
    }

    #[test]
    fn database_prefix_is_decoded_and_removed() {
        let t = parse_target("/_db/caf%C3%A9%20x/_api/document/c/k%2Fy?x=1").unwrap();
        assert_eq!(t.database, "café x");
        assert_eq!(t.path, "/_api/document/c/k/y");
        // The encoded slash stays inside its segment.
        assert_eq!(t.segments, ["_api", "document", "c", "k/y"]);
        assert_eq!(t.query, [("x".to_string(), "1".to_string())]);
    }

    #[test]
    fn prefix_without_rest_is_the_root_path() {
        let t = parse_target("/_db/foo").unwrap();
        assert_eq!(t.database, "foo");
        assert_eq!(t.path, "/");
        assert!(t.segments.is_empty());
    }

    #[test]
    fn empty_segments_are_dropped() {
        let t = parse_target("//_api//collection/").unwrap();
        assert_eq!(t.segments, ["_api", "collection"]);
    }

    #[test]
    fn query_pairs_are_form_decoded() {
        let t = parse_target("/x?a=1&flag&b=x+y%2Bz&&c=%E2%9C%93").unwrap();
        let q: Vec<(&str, &str)> = t
            .query
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(q, [("a", "1"), ("flag", ""), ("b", "x y+z"), ("c", "✓")]);
    }

    #[test]
    fn invalid_utf8_is_a_bad_request() {
        let err = parse_target("/_db/%FF/_api/version").unwrap_err();
        assert_eq!((err.status, err.num()), (400, 400));
        assert!(parse_target("/_api/document/c/%C3").is_err());
        assert!(parse_target("/x?a=%FE").is_err());
    }

    #[test]
    fn query_parameter_count_is_bounded() {
        let many: Vec<String> = (0..=QUERY_PARAMS_MAX).map(|i| format!("p{i}=1")).collect();
        let err = parse_target(&format!("/x?{}", many.join("&"))).unwrap_err();
        assert_eq!(err.status, 400);
    }
}
