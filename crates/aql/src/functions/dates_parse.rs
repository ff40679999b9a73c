//! Date inputs and calendar arithmetic for the date functions: parsing ISO 8601 strings and
//! timestamps, the proleptic Gregorian calendar, and timezone offsets.
//!
//! What it is: [`parse_date`] (a date argument to milliseconds since the epoch, UTC),
//! [`Civil`] (calendar fields of a millisecond count), [`days_from_civil`] and its inverse,
//! and [`Zone`] (an IANA timezone from jiff's bundled database, or UTC).
//!
//! What it is not: formatting (`dates_format.rs`) or the functions themselves (`dates.rs`).
//!
//! Invariants: every timestamp handled lies in ArangoDB's valid range
//! `-62167219200000..=253402300799999` (years 0 to 9999); anything else is rejected, and
//! the caller answers `null` with warning 1572.

use std::sync::OnceLock;

use quince_errors::{ArangoError, Result, BAD_PARAMETER};
use regex::Regex;
use serde_json::Value;

/// The earliest valid timestamp: 0000-01-01T00:00:00.000Z.
pub const TIMESTAMP_MIN: i64 = -62_167_219_200_000;
/// The latest valid timestamp: 9999-12-31T23:59:59.999Z.
pub const TIMESTAMP_MAX: i64 = 253_402_300_799_999;

/// Milliseconds per day.
pub const DAY_MS: i64 = 86_400_000;

/// Days since 1970-01-01 of a proleptic Gregorian date (months and days may overflow and
/// are normalized only for days: callers keep months in 1..=12).
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01: (year, month 1..=12, day 1..=31).
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

pub fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap_year(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// The calendar fields of a millisecond count (read as UTC, or as local time after a
/// timezone shift).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Civil {
    pub year: i64,
    pub month: i64,
    pub day: i64,
    pub hour: i64,
    pub minute: i64,
    pub second: i64,
    pub millisecond: i64,
}

impl Civil {
    pub fn from_ms(ms: i64) -> Civil {
        let days = ms.div_euclid(DAY_MS);
        let rest = ms.rem_euclid(DAY_MS);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: rest / 3_600_000,
            minute: rest / 60_000 % 60,
            second: rest / 1000 % 60,
            millisecond: rest % 1000,
        }
    }

    /// The millisecond count of these fields; hours, minutes, seconds and milliseconds may
    /// overflow into the larger fields, and so may the day within its month.
    pub fn to_ms(self) -> i64 {
        days_from_civil(self.year, self.month, 1) * DAY_MS
            + (self.day - 1) * DAY_MS
            + self.hour * 3_600_000
            + self.minute * 60_000
            + self.second * 1000
            + self.millisecond
    }

    /// Days since 1970-01-01.
    pub fn days(self) -> i64 {
        days_from_civil(self.year, self.month, self.day)
    }

    /// 0 for Sunday through 6 for Saturday.
    pub fn weekday(self) -> i64 {
        (self.days() + 4).rem_euclid(7)
    }

    /// 1..=366.
    pub fn day_of_year(self) -> i64 {
        self.days() - days_from_civil(self.year, 1, 1) + 1
    }

    /// The ISO 8601 week and the year it belongs to.
    pub fn iso_week(self) -> (i64, i64) {
        let iso_weekday = (self.weekday() + 6) % 7 + 1; // Monday 1 .. Sunday 7
        let thursday = self.days() - iso_weekday + 4;
        let (year, _, _) = civil_from_days(thursday);
        let week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
        (week, year)
    }
}

fn date_pattern() -> &'static Regex {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    PATTERN.get_or_init(|| {
        Regex::new(concat!(
            r"^\s*([+-]?\d{1,6})(?:-(\d{1,2})(?:-(\d{1,2}))?)?",
            r"(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?",
            r"\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?\s*$"
        ))
        .expect("the date pattern is valid")
    })
}

/// Parses an ISO 8601 date string to milliseconds (UTC), honouring a trailing offset.
/// `None` for text that is not a date string or names an invalid calendar date.
pub fn parse_date_string(text: &str) -> Option<i64> {
    let captures = date_pattern().captures(text)?;
    let field = |i: usize, default: i64| -> Option<i64> {
        match captures.get(i) {
            Some(m) => m.as_str().parse().ok(),
            None => Some(default),
        }
    };
    let year = field(1, 0)?;
    let month = field(2, 1)?;
    let day = field(3, 1)?;
    let (hour, minute, second) = (field(4, 0)?, field(5, 0)?, field(6, 0)?);
    let millisecond = match captures.get(7) {
        Some(m) => {
            let digits: String = m.as_str().chars().chain("00".chars()).take(3).collect();
            digits.parse().ok()?
        }
        None => 0,
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    if hour > 24 || minute > 59 || second > 59 {
        return None;
    }
    let offset_ms = match captures.get(8).map(|m| m.as_str()) {
        None | Some("Z") | Some("z") => 0,
        Some(offset) => {
            let sign = if offset.starts_with('-') { -1 } else { 1 };
            let digits: String = offset[1..].chars().filter(char::is_ascii_digit).collect();
            let hours: i64 = digits.get(..2)?.parse().ok()?;
            let minutes: i64 = digits
                .get(2..)
                .filter(|m| !m.is_empty())
                .map_or(Some(0), |m| m.parse().ok())?;
            sign * (hours * 3_600_000 + minutes * 60_000)
        }
    };
    let civil = Civil {
        year,
        month,
        day,
        hour,
        minute,
        second,
        millisecond,
    };
    Some(civil.to_ms() - offset_ms)
}

/// Whether a value is a date string the date functions accept (`IS_DATESTRING`): the
/// format, not the calendar, is checked, so `"2015-02-31"` counts.
pub fn is_date_string(value: &Value) -> bool {
    value.as_str().is_some_and(|s| date_pattern().is_match(s))
}

/// A date argument as milliseconds since the epoch: a number (a timestamp) or an ISO 8601
/// string; `None` for anything else or a value out of range.
pub fn parse_date(value: &Value) -> Option<i64> {
    let ms = match value {
        Value::Number(n) => {
            let f = n.as_f64()?;
            if !f.is_finite() {
                return None;
            }
            f.trunc() as i64
        }
        Value::String(s) => parse_date_string(s)?,
        _ => return None,
    };
    (TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&ms).then_some(ms)
}

/// A timezone: UTC or an IANA zone.
#[derive(Clone, Debug)]
pub struct Zone(Option<jiff::tz::TimeZone>);

impl Zone {
    pub const UTC: Zone = Zone(None);

    /// The zone named by an optional argument (`null` or absent is UTC); an unknown name
    /// fails the query, as ArangoDB documents.
    pub fn from_arg(value: Option<&Value>) -> Result<Zone> {
        match value {
            None | Some(Value::Null) => Ok(Zone::UTC),
            Some(Value::String(name)) => Zone::named(name),
            Some(other) => Err(ArangoError::with_message(
                BAD_PARAMETER,
                format!("invalid timezone '{other}'"),
            )),
        }
    }

    pub fn named(name: &str) -> Result<Zone> {
        if name == "UTC" || name == "Etc/UTC" {
            return Ok(Zone::UTC);
        }
        jiff::tz::TimeZone::get(name)
            .map(|tz| Zone(Some(tz)))
            .map_err(|_| {
                ArangoError::with_message(BAD_PARAMETER, format!("unknown timezone '{name}'"))
            })
    }

    /// The zone's offset from UTC at an instant, in milliseconds.
    pub fn offset_ms(&self, utc_ms: i64) -> i64 {
        let Some(tz) = &self.0 else { return 0 };
        match jiff::Timestamp::from_millisecond(utc_ms) {
            Ok(ts) => i64::from(tz.to_offset(ts).seconds()) * 1000,
            Err(_) => 0,
        }
    }

    /// UTC milliseconds to local wall-clock milliseconds.
    pub fn to_local(&self, utc_ms: i64) -> i64 {
        utc_ms + self.offset_ms(utc_ms)
    }

    /// Local wall-clock milliseconds to UTC (an ambiguous or skipped local time takes the
    /// offset in force before the transition).
    pub fn to_utc(&self, local_ms: i64) -> i64 {
        let guess = local_ms - self.offset_ms(local_ms);
        local_ms - self.offset_ms(guess)
    }

    /// Details of the zone at an instant: abbreviation, DST flag, offset in seconds, and the
    /// transitions around it (UTC milliseconds), for `zoneinfo` results.
    pub fn info(&self, utc_ms: i64) -> (String, bool, i64, Option<i64>, Option<i64>) {
        let Some(tz) = &self.0 else {
            return ("UTC".to_string(), false, 0, None, None);
        };
        let Ok(ts) = jiff::Timestamp::from_millisecond(utc_ms) else {
            return ("UTC".to_string(), false, 0, None, None);
        };
        let info = tz.to_offset_info(ts);
        let next = ts
            .checked_add(jiff::SignedDuration::from_millis(1))
            .unwrap_or(ts);
        let begin = tz
            .preceding(next)
            .next()
            .map(|t| t.timestamp().as_millisecond());
        let end = tz
            .following(ts)
            .next()
            .map(|t| t.timestamp().as_millisecond());
        (
            info.abbreviation().to_string(),
            info.dst().is_dst(),
            i64::from(info.offset().seconds()),
            begin,
            end,
        )
    }
}
