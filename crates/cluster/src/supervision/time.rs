//! Wall-clock times as the supervision stores them: milliseconds since the Unix epoch, written
//! as ISO 8601 UTC text (`2026-01-01T00:00:00.000Z`, ArangoDB's `LastAckedTime`).
//!
//! What it is: [`millis`] (a `SystemTime` as milliseconds), [`iso8601`] and [`parse_iso8601`]
//! (whole seconds or milliseconds, `Z` only).
//!
//! What it is not: a calendar library: no time zones, no dates before 1970.
//!
//! Invariants: `parse_iso8601(&iso8601(ms)) == Some(ms)` for every `ms` up to year 9999.

use std::time::{SystemTime, UNIX_EPOCH};

/// `time` as milliseconds since the Unix epoch (0 before it).
pub fn millis(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day number (the inverse of [`days_from_civil`]).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let month = if month_index < 10 {
        month_index + 3
    } else {
        month_index - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `ms` as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
pub fn iso8601(ms: u64) -> String {
    let seconds = i64::try_from(ms / 1000).unwrap_or(i64::MAX);
    let (year, month, day) = civil_from_days(seconds.div_euclid(86_400));
    let of_day = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60,
        ms % 1000
    )
}

/// Milliseconds since the Unix epoch of `YYYY-MM-DDTHH:MM:SS[.mmm]Z`; `None` for anything else.
pub fn parse_iso8601(text: &str) -> Option<u64> {
    let text = text.strip_suffix('Z')?;
    let (date, time) = text.split_once('T')?;
    let mut date_parts = date.split('-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: i64 = date_parts.next()?.parse().ok()?;
    let day: i64 = date_parts.next()?.parse().ok()?;
    if date_parts.next().is_some() || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let (clock, fraction) = match time.split_once('.') {
        Some((clock, fraction)) => (clock, Some(fraction)),
        None => (time, None),
    };
    let mut clock_parts = clock.split(':');
    let hour: i64 = clock_parts.next()?.parse().ok()?;
    let minute: i64 = clock_parts.next()?.parse().ok()?;
    let second: i64 = clock_parts.next()?.parse().ok()?;
    if clock_parts.next().is_some() || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let millis = match fraction {
        None => 0,
        Some(digits) if (1..=9).contains(&digits.len()) => {
            let padded: String = digits.chars().chain("00".chars()).take(3).collect();
            padded.parse::<i64>().ok()?
        }
        Some(_) => return None,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    u64::try_from(seconds * 1000 + millis).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_round_trip_through_iso_text() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_767_225_600_123), "2026-01-01T00:00:00.123Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        for ms in [
            0,
            1,
            59_999,
            951_868_799_999,
            1_767_225_600_123,
            253_402_300_799_999,
        ] {
            assert_eq!(parse_iso8601(&iso8601(ms)), Some(ms), "{ms}");
        }
        assert_eq!(
            parse_iso8601("2026-01-01T00:00:01Z"),
            Some(1_767_225_601_000)
        );
        assert_eq!(
            parse_iso8601("2026-01-01T00:00:01.5Z"),
            Some(1_767_225_601_500)
        );
        for bad in [
            "",
            "2026-01-01",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00+01:00",
        ] {
            assert_eq!(parse_iso8601(bad), None, "{bad}");
        }
    }
}
