//! String functions: concatenation, length, case, substrings, trimming, splitting,
//! substitution, searching, and the few string-shaped conversions (`JSON_*`, `IPV4_*`).
//!
//! What it is: ArangoDB 3.12's string functions over Rust strings. Positions and lengths
//! count Unicode scalar values (characters), except `SUBSTRING_BYTES`.
//!
//! What it is not: the regex and `LIKE` functions (`strings_regex.rs`), the hashes and
//! encodings (`hashes.rs`), or ArangoSearch's `TOKENS` and n-gram functions.
//!
//! Invariants: arguments documented as strings are cast with `TO_STRING` (ArangoDB casts
//! rather than warns for these); numbers are cast with `TO_NUMBER`; a function whose output
//! can be much larger than its input (`CONCAT_SEPARATOR`, `SPLIT`, `SUBSTITUTE`) admits it
//! against the query's memory limits before building it, and every loop over the input
//! checks the query every `STEPS_PER_CHECK` steps (`LEVENSHTEIN_DISTANCE` once per row of its
//! table, which it keeps three rows of).

use quince_errors::Result;
use serde_json::Value;

use super::args::{admit_elements, arg, flag, int, invalid, Steps, TextOut};
use super::FunctionContext;
use crate::value::{to_json_text, to_string_value};

type Out = Result<Value>;

fn text(args: &[Value], i: usize) -> String {
    to_string_value(arg(args, i))
}

fn chars(s: &str) -> Vec<char> {
    s.chars().collect()
}

pub fn concat(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let items: &[Value] = match args {
        [Value::Array(items)] => items,
        _ => args,
    };
    let mut out = TextOut::with_capacity(ctx, 0)?;
    let mut steps = Steps::default();
    for item in items.iter().filter(|v| !v.is_null()) {
        steps.step(ctx)?;
        out.push_str(ctx, &to_string_value(item))?;
    }
    Ok(Value::String(out.finish()))
}

pub fn concat_separator(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let separator = text(args, 0);
    let items: &[Value] = match &args[1..] {
        [Value::Array(items)] => items,
        rest => rest,
    };
    // The separators alone may be far larger than the input: the buffer grows by admitted
    // amounts only.
    let mut out = TextOut::with_capacity(ctx, 0)?;
    let mut steps = Steps::default();
    for (i, item) in items.iter().filter(|v| !v.is_null()).enumerate() {
        steps.step(ctx)?;
        if i > 0 {
            out.push_str(ctx, &separator)?;
        }
        out.push_str(ctx, &to_string_value(item))?;
    }
    Ok(Value::String(out.finish()))
}

pub fn char_length(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::from(text(args, 0).chars().count()))
}

/// `LENGTH`/`COUNT`: elements of an array, attributes of an object, characters of a string
/// or of a number's text, 1 for `true`, 0 for `false` and `null`.
pub fn length(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::from(match arg(args, 0) {
        Value::Null | Value::Bool(false) => 0,
        Value::Bool(true) => 1,
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        other => to_string_value(other).chars().count(),
    }))
}

pub fn lower(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(text(args, 0).to_lowercase()))
}

pub fn upper(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(text(args, 0).to_uppercase()))
}

pub fn substring(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = chars(&text(args, 0));
    let len = value.len() as i64;
    let mut offset = int(arg(args, 1));
    if offset < 0 {
        offset = (len + offset).max(0);
    }
    let offset = offset.min(len);
    let count = if args.len() > 2 && !arg(args, 2).is_null() {
        int(arg(args, 2)).max(0)
    } else {
        len
    };
    let end = offset.saturating_add(count).min(len);
    Ok(Value::String(
        value[offset as usize..end as usize].iter().collect(),
    ))
}

pub fn substring_bytes(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = text(args, 0);
    let len = value.len() as i64;
    let mut offset = int(arg(args, 1));
    if offset < 0 {
        offset = (len + offset).max(0);
    }
    let offset = offset.min(len) as usize;
    let end = if args.len() > 2 && !arg(args, 2).is_null() {
        (offset as i64)
            .saturating_add(int(arg(args, 2)).max(0))
            .min(len) as usize
    } else {
        len as usize
    };
    match value.get(offset..end) {
        Some(part) => Ok(Value::String(part.to_string())),
        None => invalid(ctx, "SUBSTRING_BYTES"),
    }
}

pub fn left(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let n = int(arg(args, 1)).max(0) as usize;
    Ok(Value::String(text(args, 0).chars().take(n).collect()))
}

pub fn right(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = chars(&text(args, 0));
    let n = (int(arg(args, 1)).max(0) as usize).min(value.len());
    Ok(Value::String(value[value.len() - n..].iter().collect()))
}

/// Which ends `TRIM` strips.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ends {
    Both,
    Start,
    End,
}

const WHITESPACE: &str = "\r\n \t";

fn trim_with(value: &str, strip: &str, ends: Ends) -> String {
    let set: Vec<char> = strip.chars().collect();
    let is_strip = |c: char| set.contains(&c);
    match ends {
        Ends::Both => value.trim_matches(is_strip).to_string(),
        Ends::Start => value.trim_start_matches(is_strip).to_string(),
        Ends::End => value.trim_end_matches(is_strip).to_string(),
    }
}

pub fn trim(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = text(args, 0);
    let (strip, ends) = match arg(args, 1) {
        Value::Null => (WHITESPACE.to_string(), Ends::Both),
        Value::Number(n) => {
            let ends = match n.as_f64().unwrap_or(0.0) as i64 {
                1 => Ends::Start,
                2 => Ends::End,
                _ => Ends::Both,
            };
            (WHITESPACE.to_string(), ends)
        }
        other => (to_string_value(other), Ends::Both),
    };
    Ok(Value::String(trim_with(&value, &strip, ends)))
}

fn trim_chars(args: &[Value]) -> String {
    match arg(args, 1) {
        Value::Null => WHITESPACE.to_string(),
        other => to_string_value(other),
    }
}

pub fn ltrim(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(trim_with(
        &text(args, 0),
        &trim_chars(args),
        Ends::Start,
    )))
}

pub fn rtrim(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(trim_with(
        &text(args, 0),
        &trim_chars(args),
        Ends::End,
    )))
}

/// The matches of several needles in one haystack, earliest first, for `SPLIT` and
/// `SUBSTITUTE`. Each needle's next match is remembered until the search passes it, so a
/// scan over the whole haystack costs one pass per needle, not one per match and needle
/// (with thousands of needles the latter took minutes).
struct Matches<'a> {
    haystack: &'a str,
    needles: &'a [String],
    /// Per needle: not looked up yet, or its first match at or after the last `from` it was
    /// looked up for (`None` when there is none: there is none further on either).
    next: Vec<Option<Option<usize>>>,
}

impl<'a> Matches<'a> {
    fn new(haystack: &'a str, needles: &'a [String]) -> Matches<'a> {
        Matches {
            haystack,
            needles,
            next: vec![None; needles.len()],
        }
    }

    /// The first match of any needle at or after byte `from` (a character boundary):
    /// (position, needle index), the lowest index among needles matching at one position.
    fn find(&mut self, from: usize) -> Option<(usize, usize)> {
        let mut best: Option<(usize, usize)> = None;
        for (i, needle) in self.needles.iter().enumerate() {
            if needle.is_empty() {
                continue;
            }
            let position = match self.next[i] {
                Some(Some(p)) if p >= from => Some(p),
                Some(None) => None,
                _ => {
                    let p = self.haystack[from..]
                        .find(needle.as_str())
                        .map(|p| from + p);
                    self.next[i] = Some(p);
                    p
                }
            };
            if let Some(p) = position {
                if best.is_none_or(|(b, _)| p < b) {
                    best = Some((p, i));
                }
            }
        }
        best
    }
}

pub fn split(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = text(args, 0);
    let limit = match arg(args, 2) {
        Value::Null => usize::MAX,
        other => match int(other) {
            n if n > 0 => n as usize,
            _ => usize::MAX,
        },
    };
    let separators: Vec<String> = match arg(args, 1) {
        Value::Null if args.len() < 2 => return Ok(Value::Array(vec![Value::String(value)])),
        Value::Array(items) => items.iter().map(to_string_value).collect(),
        other => vec![to_string_value(other)],
    };
    let mut parts = Vec::new();
    let mut steps = Steps::default();
    if separators.iter().all(String::is_empty) {
        // One string per character: far more memory than the text itself.
        let count = value.chars().count().min(limit);
        admit_elements(ctx, count as u64 * 2)?;
        for c in value.chars().take(count) {
            steps.step(ctx)?;
            parts.push(Value::String(c.to_string()));
        }
    } else {
        let mut start = 0;
        let mut matches = Matches::new(&value, &separators);
        while let Some((at, which)) = matches.find(start) {
            if parts.len() >= limit {
                break;
            }
            steps.step(ctx)?;
            parts.push(Value::String(value[start..at].to_string()));
            start = at + separators[which].len();
        }
        parts.push(Value::String(value[start..].to_string()));
    }
    parts.truncate(limit);
    Ok(Value::Array(parts))
}

pub fn substitute(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = text(args, 0);
    let (search, replace, limit): (Vec<String>, Vec<Option<String>>, &Value) = match arg(args, 1) {
        Value::Object(map) => (
            map.keys().cloned().collect(),
            map.values()
                .map(|v| (!v.is_null()).then(|| to_string_value(v)))
                .collect(),
            arg(args, 2),
        ),
        Value::Array(items) => {
            let search: Vec<String> = items.iter().map(to_string_value).collect();
            let replace = match arg(args, 2) {
                Value::Array(r) => (0..search.len())
                    .map(|i| r.get(i).map(to_string_value))
                    .collect(),
                Value::Null => vec![None; search.len()],
                other => vec![Some(to_string_value(other)); search.len()],
            };
            (search, replace, arg(args, 3))
        }
        other => {
            let replace = match arg(args, 2) {
                Value::Null => None,
                r => Some(to_string_value(r)),
            };
            (vec![to_string_value(other)], vec![replace], arg(args, 3))
        }
    };
    let mut remaining = match limit {
        Value::Null => usize::MAX,
        other => match int(other) {
            n if n > 0 => n as usize,
            _ => usize::MAX,
        },
    };
    // The replacements may be far larger than the text: the buffer grows by admitted
    // amounts only.
    let mut out = TextOut::with_capacity(ctx, value.len())?;
    let mut steps = Steps::default();
    let mut start = 0;
    let mut matches = Matches::new(&value, &search);
    while remaining > 0 {
        let Some((at, which)) = matches.find(start) else {
            break;
        };
        steps.step(ctx)?;
        out.push_str(ctx, &value[start..at])?;
        out.push_str(ctx, replace[which].as_deref().unwrap_or(""))?;
        start = at + search[which].len();
        remaining -= 1;
    }
    out.push_str(ctx, &value[start..])?;
    Ok(Value::String(out.finish()))
}

/// The character index of byte position `byte` in `s`.
fn char_index(s: &str, byte: usize) -> usize {
    s[..byte].chars().count()
}

pub fn contains(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (value, search) = (text(args, 0), text(args, 1));
    let found = value.find(&search);
    if flag(args, 2, false) {
        return Ok(Value::from(
            found.map_or(-1, |b| char_index(&value, b) as i64),
        ));
    }
    Ok(Value::Bool(found.is_some()))
}

/// The characters of `text` within `[start, end]` (character positions, `end` inclusive)
/// and the start position; `None` when the range is empty or inverted.
fn search_window(args: &[Value]) -> Option<(Vec<char>, usize)> {
    let value = chars(&text(args, 0));
    let start = if args.len() > 2 && !arg(args, 2).is_null() {
        int(arg(args, 2))
    } else {
        0
    };
    if start < 0 {
        return None;
    }
    let end = if args.len() > 3 && !arg(args, 3).is_null() {
        let end = int(arg(args, 3));
        if end < start {
            return None;
        }
        (end as usize + 1).min(value.len())
    } else {
        value.len()
    };
    let start = start as usize;
    if start > end {
        return Some((Vec::new(), start));
    }
    Some((value[..end].to_vec(), start))
}

pub fn find_first(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let search = chars(&text(args, 1));
    let Some((window, start)) = search_window(args) else {
        return Ok(Value::from(-1));
    };
    if search.is_empty() {
        return Ok(Value::from(start));
    }
    let found = (start..window.len())
        .find(|&i| window[i..].starts_with(&search))
        .map_or(-1, |i| i as i64);
    Ok(Value::from(found))
}

pub fn find_last(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let search = chars(&text(args, 1));
    let Some((window, start)) = search_window(args) else {
        return Ok(Value::from(-1));
    };
    if search.is_empty() {
        return Ok(Value::from(window.len()));
    }
    let found = (start..window.len())
        .rev()
        .find(|&i| window[i..].starts_with(&search))
        .map_or(-1, |i| i as i64);
    Ok(Value::from(found))
}

/// `REVERSE`: an array's elements or a string's characters in reverse order.
pub fn reverse(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(match arg(args, 0) {
        Value::Array(items) => Value::Array(items.iter().rev().cloned().collect()),
        Value::Null => Value::Null,
        other => Value::String(to_string_value(other).chars().rev().collect()),
    })
}

pub fn starts_with(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let value = text(args, 0);
    Ok(Value::Bool(match arg(args, 1) {
        Value::Array(prefixes) => {
            let needed = match arg(args, 2) {
                Value::Null => 1,
                other => int(other).max(0) as usize,
            };
            let matched = prefixes
                .iter()
                .filter(|p| value.starts_with(&to_string_value(p)))
                .count();
            matched >= needed
        }
        other => value.starts_with(&to_string_value(other)),
    }))
}

/// `LEVENSHTEIN_DISTANCE`: the Damerau-Levenshtein distance (optimal string alignment:
/// insertions, deletions, substitutions and transpositions of adjacent characters). Keeps
/// three rows of the table, so memory grows with the shorter string, not with the product
/// of the lengths (two strings of 100,000 characters would otherwise ask for 80 GB); the time
/// still grows with the product, so each row checks whether the query was killed or ran
/// past `maxRuntime`.
pub fn levenshtein_distance(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (a, b) = (chars(&text(args, 0)), chars(&text(args, 1)));
    let (a, b) = if a.len() < b.len() { (b, a) } else { (a, b) };
    // Rows i-2, i-1 and i of the table over `b` (the shorter string).
    let mut before: Vec<usize> = Vec::new();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current = vec![0usize; b.len() + 1];
    for i in 1..=a.len() {
        ctx.check_alive()?;
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
        if current.len() != b.len() + 1 {
            current = vec![0usize; b.len() + 1];
        }
    }
    Ok(Value::from(previous[b.len()]))
}

/// `SOUNDEX`: American Soundex of the letters (others ignored); `""` without letters.
pub fn soundex(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let code = |c: char| match c {
        'B' | 'F' | 'P' | 'V' => Some('1'),
        'C' | 'G' | 'J' | 'K' | 'Q' | 'S' | 'X' | 'Z' => Some('2'),
        'D' | 'T' => Some('3'),
        'L' => Some('4'),
        'M' | 'N' => Some('5'),
        'R' => Some('6'),
        _ => None,
    };
    let letters: Vec<char> = text(args, 0)
        .chars()
        .filter(char::is_ascii_alphabetic)
        .map(|c| c.to_ascii_uppercase())
        .collect();
    let Some(&first) = letters.first() else {
        return Ok(Value::String(String::new()));
    };
    let mut out = String::from(first);
    let mut last = code(first);
    for &c in &letters[1..] {
        let digit = code(c);
        if let Some(d) = digit {
            if digit != last {
                out.push(d);
                if out.len() == 4 {
                    break;
                }
            }
        }
        // H and W do not separate equal codes; vowels do.
        if !matches!(c, 'H' | 'W') {
            last = digit;
        }
    }
    while out.len() < 4 {
        out.push('0');
    }
    Ok(Value::String(out))
}

pub fn json_parse(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Value::String(source) = arg(args, 0) else {
        return invalid(ctx, "JSON_PARSE");
    };
    match serde_json::from_str::<Value>(source) {
        Ok(value) => Ok(value),
        Err(_) => invalid(ctx, "JSON_PARSE"),
    }
}

pub fn json_stringify(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::String(to_json_text(arg(args, 0))))
}

/// Parses a strict dotted quad: four decimal octets 0..=255 without leading zeros.
fn parse_ipv4(s: &str) -> Option<u32> {
    let mut value = 0u32;
    let mut count = 0;
    for part in s.split('.') {
        count += 1;
        let valid = !part.is_empty()
            && part.len() <= 3
            && part.bytes().all(|b| b.is_ascii_digit())
            && (part == "0" || !part.starts_with('0'));
        let octet: u32 = if valid {
            part.parse().ok()?
        } else {
            return None;
        };
        if octet > 255 || count > 4 {
            return None;
        }
        value = (value << 8) | octet;
    }
    (count == 4).then_some(value)
}

pub fn is_ipv4(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    Ok(Value::Bool(
        arg(args, 0).as_str().and_then(parse_ipv4).is_some(),
    ))
}

pub fn ipv4_to_number(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    match arg(args, 0).as_str().and_then(parse_ipv4) {
        Some(n) => Ok(Value::from(n)),
        None => invalid(ctx, "IPV4_TO_NUMBER"),
    }
}

pub fn ipv4_from_number(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let Some(n) = arg(args, 0).as_f64() else {
        return invalid(ctx, "IPV4_FROM_NUMBER");
    };
    if n < 0.0 || n > f64::from(u32::MAX) || n.fract() != 0.0 {
        return invalid(ctx, "IPV4_FROM_NUMBER");
    }
    let n = n as u32;
    Ok(Value::String(format!(
        "{}.{}.{}.{}",
        n >> 24,
        (n >> 16) & 255,
        (n >> 8) & 255,
        n & 255
    )))
}
