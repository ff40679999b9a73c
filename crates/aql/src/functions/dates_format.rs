//! Spelling dates: ISO 8601 strings and `DATE_FORMAT`'s placeholders.
//!
//! What it is: [`iso_string`] (`YYYY-MM-DDTHH:MM:SS.mmmZ`) and [`format`], the
//! `DATE_FORMAT` language (`%yyyy`, `%mm`, `%dd`, ..., `%%`, `%&`), matched longest first and
//! case-insensitively.
//!
//! What it is not: localized: month and weekday names are English.
//!
//! Invariants: unknown placeholders and a lone `%` print nothing, as in ArangoDB.

use super::dates_parse::{days_in_month, is_leap_year, Civil};

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The ISO 8601 text of a timestamp, always UTC with milliseconds.
pub fn iso_string(ms: i64) -> String {
    let c = Civil::from_ms(ms);
    format!(
        "{}T{:02}:{:02}:{:02}.{:03}Z",
        date_part(c),
        c.hour,
        c.minute,
        c.second,
        c.millisecond
    )
}

/// The same fields without the `Z` (a local wall-clock time).
pub fn local_iso_string(ms: i64) -> String {
    let mut text = iso_string(ms);
    text.pop();
    text
}

fn year_text(year: i64) -> String {
    if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!("{}{:06}", if year < 0 { '-' } else { '+' }, year.abs())
    }
}

fn date_part(c: Civil) -> String {
    format!("{}-{:02}-{:02}", year_text(c.year), c.month, c.day)
}

/// The placeholders, longest first so that `%yyyy` wins over `%yy` and `%y`.
const PLACEHOLDERS: [&str; 29] = [
    "yyyyyy", "mmmm", "wwww", "yyyy", "mmm", "www", "xxx", "fff", "yy", "mm", "dd", "hh", "ii",
    "ss", "kk", "t", "z", "w", "y", "m", "d", "h", "i", "s", "f", "x", "k", "l", "q",
];

/// `DATE_FORMAT`'s output for a local time `local_ms` (whose UTC instant is `utc_ms`).
pub fn format(local_ms: i64, utc_ms: i64, pattern: &str) -> String {
    let c = Civil::from_ms(local_ms);
    let mut out = String::new();
    let mut rest = pattern;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(tail) = rest.strip_prefix('%') {
            out.push('%');
            rest = tail;
            continue;
        }
        if let Some(tail) = rest.strip_prefix('&') {
            rest = tail;
            continue;
        }
        if rest.starts_with('a') || rest.starts_with('A') {
            out.push_str(&days_in_month(c.year, c.month).to_string());
            rest = &rest[1..];
            continue;
        }
        let lower = rest.to_ascii_lowercase();
        let Some(placeholder) = PLACEHOLDERS.iter().find(|p| lower.starts_with(*p)) else {
            continue;
        };
        rest = &rest[placeholder.len()..];
        let (week, _) = c.iso_week();
        let text = match *placeholder {
            "t" => utc_ms.to_string(),
            "z" => iso_string(utc_ms),
            "w" => c.weekday().to_string(),
            "www" => WEEKDAYS[c.weekday() as usize][..3].to_string(),
            "wwww" => WEEKDAYS[c.weekday() as usize].to_string(),
            "y" => c.year.to_string(),
            "yy" => {
                let two = format!("{:02}", c.year.abs() % 100);
                if c.year < 0 {
                    format!("-{two}")
                } else {
                    two
                }
            }
            "yyyy" => year_text(c.year),
            "yyyyyy" => format!("{}{:06}", if c.year < 0 { '-' } else { '+' }, c.year.abs()),
            "m" => c.month.to_string(),
            "mm" => format!("{:02}", c.month),
            "mmm" => MONTHS[(c.month - 1) as usize][..3].to_string(),
            "mmmm" => MONTHS[(c.month - 1) as usize].to_string(),
            "d" => c.day.to_string(),
            "dd" => format!("{:02}", c.day),
            "h" => c.hour.to_string(),
            "hh" => format!("{:02}", c.hour),
            "i" => c.minute.to_string(),
            "ii" => format!("{:02}", c.minute),
            "s" => c.second.to_string(),
            "ss" => format!("{:02}", c.second),
            "f" => c.millisecond.to_string(),
            "fff" => format!("{:03}", c.millisecond),
            "x" => c.day_of_year().to_string(),
            "xxx" => format!("{:03}", c.day_of_year()),
            "k" => week.to_string(),
            "kk" => format!("{week:02}"),
            "l" => u8::from(is_leap_year(c.year)).to_string(),
            "q" => ((c.month - 1) / 3 + 1).to_string(),
            _ => String::new(),
        };
        out.push_str(&text);
    }
    out.push_str(rest);
    out
}
