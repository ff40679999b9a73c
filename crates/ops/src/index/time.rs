//! [`ttl_seconds`]: the point in time a ttl index reads from a document's attribute.
//!
//! What it is: ArangoDB's rule for ttl index values: a number is a Unix timestamp in seconds;
//! a string is a date `YYYY-MM-DD`, optionally followed by `THH:MM[:SS[.fff]]` (a space also
//! separates date and time) and a time zone (`Z` or `±HH:MM`; none means UTC).
//!
//! What it is not: AQL's date functions (they accept more forms); only what a ttl index reads.
//!
//! Invariants: anything else (a bad date, a negative or non-finite number, another type) has no
//! point in time, so the document is not in the ttl index and never expires.

use serde_json::Value;

/// The seconds since the Unix epoch that `value` names, if any.
pub fn ttl_seconds(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64().filter(|s| s.is_finite() && *s >= 0.0),
        Value::String(s) => parse_date(s),
        _ => None,
    }
}

/// Parses an ISO 8601 date (see the module doc) into seconds since the epoch.
fn parse_date(text: &str) -> Option<f64> {
    let b = text.as_bytes();
    let digits = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter()
            .all(u8::is_ascii_digit)
            .then(|| part.iter().fold(0i64, |n, d| n * 10 + i64::from(d - b'0')))
    };
    let year = digits(0, 4)?;
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let (month, day) = (digits(5, 2)?, digits(8, 2)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let mut seconds = days_from_civil(year, month, day) as f64 * 86_400.0;
    let mut at = 10;
    if matches!(b.get(at), Some(b'T' | b't' | b' ')) {
        let (hour, minute) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
        if b.get(at + 3) != Some(&b':') || hour > 23 || minute > 59 {
            return None;
        }
        seconds += (hour * 3600 + minute * 60) as f64;
        at += 6;
        if b.get(at) == Some(&b':') {
            let second = digits(at + 1, 2)?;
            if second > 59 {
                return None;
            }
            seconds += second as f64;
            at += 3;
            if b.get(at) == Some(&b'.') {
                let start = at + 1;
                let mut end = start;
                while b.get(end).is_some_and(u8::is_ascii_digit) {
                    end += 1;
                }
                if end == start {
                    return None;
                }
                let fraction: f64 = format!("0.{}", &text[start..end]).parse().ok()?;
                seconds += fraction;
                at = end;
            }
        }
        match b.get(at) {
            None => {}
            Some(b'Z' | b'z') if at + 1 == b.len() => {}
            Some(sign @ (b'+' | b'-')) => {
                let (h, m) = (digits(at + 1, 2)?, digits(at + 4, 2)?);
                if b.get(at + 3) != Some(&b':') || at + 6 != b.len() || h > 23 || m > 59 {
                    return None;
                }
                let offset = (h * 3600 + m * 60) as f64;
                seconds += if *sign == b'+' { -offset } else { offset };
            }
            _ => return None,
        }
    } else if at != b.len() {
        return None;
    }
    (seconds >= 0.0).then_some(seconds)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the civil date (proleptic Gregorian calendar).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_dates() {
        assert_eq!(ttl_seconds(&json!(1_700_000_000)), Some(1.7e9));
        assert_eq!(ttl_seconds(&json!("1970-01-01")), Some(0.0));
        assert_eq!(
            ttl_seconds(&json!("2000-03-01T00:00:00Z")),
            Some(951_868_800.0)
        );
        assert_eq!(
            ttl_seconds(&json!("2000-03-01T01:00:00+01:00")),
            Some(951_868_800.0)
        );
        assert_eq!(
            ttl_seconds(&json!("2000-03-01 00:00:01.5")),
            Some(951_868_801.5)
        );
        assert_eq!(ttl_seconds(&json!("2000-02-30")), None);
        assert_eq!(ttl_seconds(&json!("yesterday")), None);
        assert_eq!(ttl_seconds(&json!(-1)), None);
        assert_eq!(ttl_seconds(&json!(null)), None);
        assert_eq!(ttl_seconds(&json!([1])), None);
    }
}
