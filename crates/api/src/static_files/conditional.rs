//! Which bytes of a static file a GET or HEAD gets: 304 for a matching `If-None-Match` or a
//! satisfied `If-Modified-Since`, one `Range` (206), an unsatisfiable range (416), or the
//! whole file.
//!
//! What it is: [`select`], a pure function of the request headers and the file's validators.
//!
//! What it is not: reading files or building replies (`super`).
//!
//! Invariants: `If-None-Match` wins over `If-Modified-Since` (RFC 9110 §13.2.2); a range
//! list with more than one range, a malformed range, or an `If-Range` that does not match
//! the current file yields the whole file (a server may always ignore `Range`); a returned
//! partial range is within the file (`start <= end < len`).

use http::header::{IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE, RANGE};
use http::HeaderMap;

/// What to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Selection {
    /// 304: the client's copy is current.
    NotModified,
    /// 200 with the whole file.
    Full,
    /// 206 with bytes `start..=end`.
    Partial { start: u64, end: u64 },
    /// 416: the range starts beyond the file.
    Unsatisfiable,
}

/// Picks the reply for a file of `len` bytes with this `etag` (quoted) and modification
/// time (whole Unix seconds).
pub(crate) fn select(headers: &HeaderMap, etag: &str, modified_secs: u64, len: u64) -> Selection {
    if let Some(value) = headers.get(IF_NONE_MATCH) {
        if value
            .to_str()
            .is_ok_and(|list| list.split(',').any(|tag| tag_matches(tag, etag)))
        {
            return Selection::NotModified;
        }
    } else if let Some(since) = header_date(headers, IF_MODIFIED_SINCE) {
        if modified_secs <= since {
            return Selection::NotModified;
        }
    }
    let Some(range) = headers.get(RANGE).and_then(|v| v.to_str().ok()) else {
        return Selection::Full;
    };
    if let Some(condition) = headers.get(IF_RANGE).and_then(|v| v.to_str().ok()) {
        let current = if condition.trim_start().starts_with('"') {
            condition.trim() == etag
        } else {
            header_date(headers, IF_RANGE).is_some_and(|date| modified_secs <= date)
        };
        if !current {
            return Selection::Full;
        }
    }
    parse_range(range, len)
}

/// One `bytes=` range against a file of `len` bytes.
fn parse_range(text: &str, len: u64) -> Selection {
    let Some(spec) = text.trim().strip_prefix("bytes=") else {
        return Selection::Full;
    };
    if spec.contains(',') {
        return Selection::Full;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Selection::Full;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        // A suffix: the last `n` bytes.
        let Ok(n) = last.parse::<u64>() else {
            return Selection::Full;
        };
        if n == 0 || len == 0 {
            return Selection::Unsatisfiable;
        }
        return Selection::Partial {
            start: len - n.min(len),
            end: len - 1,
        };
    }
    let Ok(start) = first.parse::<u64>() else {
        return Selection::Full;
    };
    let end = if last.is_empty() {
        u64::MAX
    } else {
        match last.parse::<u64>() {
            Ok(end) if end >= start => end,
            _ => return Selection::Full,
        }
    };
    if start >= len {
        return Selection::Unsatisfiable;
    }
    Selection::Partial {
        start,
        end: end.min(len - 1),
    }
}

/// An entity tag from a list matches ours (weak comparison, as for `If-None-Match`).
fn tag_matches(tag: &str, etag: &str) -> bool {
    let tag = tag.trim();
    tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag
}

/// A header holding an HTTP date, as Unix seconds.
fn header_date(headers: &HeaderMap, name: http::header::HeaderName) -> Option<u64> {
    let text = headers.get(name)?.to_str().ok()?;
    let time = httpdate::parse_http_date(text.trim()).ok()?;
    time.duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    const TAG: &str = "\"a-1\"";

    fn with(pairs: &[(http::header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        h
    }

    #[test]
    fn validators_give_304() {
        let none = HeaderMap::new();
        assert_eq!(select(&none, TAG, 100, 10), Selection::Full);
        assert_eq!(
            select(&with(&[(IF_NONE_MATCH, "\"x\", W/\"a-1\"")]), TAG, 100, 10),
            Selection::NotModified
        );
        assert_eq!(
            select(&with(&[(IF_NONE_MATCH, "*")]), TAG, 100, 10),
            Selection::NotModified
        );
        assert_eq!(
            select(&with(&[(IF_NONE_MATCH, "\"x\"")]), TAG, 100, 10),
            Selection::Full
        );
        let date =
            httpdate::fmt_http_date(std::time::UNIX_EPOCH + std::time::Duration::from_secs(100));
        assert_eq!(
            select(&with(&[(IF_MODIFIED_SINCE, &date)]), TAG, 100, 10),
            Selection::NotModified
        );
        assert_eq!(
            select(&with(&[(IF_MODIFIED_SINCE, &date)]), TAG, 101, 10),
            Selection::Full
        );
        // A non-matching If-None-Match overrides a satisfied If-Modified-Since.
        assert_eq!(
            select(
                &with(&[(IF_NONE_MATCH, "\"x\""), (IF_MODIFIED_SINCE, &date)]),
                TAG,
                100,
                10
            ),
            Selection::Full
        );
    }

    #[test]
    fn single_ranges_are_served_and_others_ignored() {
        let r = |spec: &str, len| select(&with(&[(RANGE, spec)]), TAG, 1, len);
        assert_eq!(r("bytes=0-3", 10), Selection::Partial { start: 0, end: 3 });
        assert_eq!(r("bytes=5-", 10), Selection::Partial { start: 5, end: 9 });
        assert_eq!(
            r("bytes=5-100", 10),
            Selection::Partial { start: 5, end: 9 }
        );
        assert_eq!(r("bytes=-3", 10), Selection::Partial { start: 7, end: 9 });
        assert_eq!(r("bytes=-30", 10), Selection::Partial { start: 0, end: 9 });
        assert_eq!(r("bytes=10-", 10), Selection::Unsatisfiable);
        assert_eq!(r("bytes=-0", 10), Selection::Unsatisfiable);
        assert_eq!(r("bytes=0-", 0), Selection::Unsatisfiable);
        assert_eq!(r("bytes=0-1,3-4", 10), Selection::Full);
        assert_eq!(r("bytes=4-2", 10), Selection::Full);
        assert_eq!(r("items=0-1", 10), Selection::Full);
        assert_eq!(r("bytes=x-1", 10), Selection::Full);
        let stale = with(&[(RANGE, "bytes=0-1"), (IF_RANGE, "\"old\"")]);
        assert_eq!(select(&stale, TAG, 1, 10), Selection::Full);
        let fresh = with(&[(RANGE, "bytes=0-1"), (IF_RANGE, TAG)]);
        assert_eq!(
            select(&fresh, TAG, 1, 10),
            Selection::Partial { start: 0, end: 1 }
        );
    }
}
