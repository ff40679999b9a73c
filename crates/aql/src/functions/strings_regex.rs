//! Pattern functions: `LIKE()`, `REGEX_TEST()`, `REGEX_REPLACE()`, `REGEX_MATCHES()`,
//! `REGEX_SPLIT()`.
//!
//! What it is: the functions behind `LIKE` and `=~`, over the cached compiled patterns of
//! [`crate::value::with_thread_cache`].
//!
//! What it is not: ICU regular expressions (see [`crate::value::RegexCache`] for the
//! difference).
//!
//! Invariants: an invalid regular expression answers `null` with warning 1543; text and
//! pattern are cast with `TO_STRING`; a function that reads capturing groups admits the table
//! a match with groups needs ([`capture_cost`]) against the query's memory limits first, and
//! the loops over matches check the query every `STEPS_PER_CHECK` matches.

use quince_errors::Result;
use regex::Regex;
use serde_json::Value;

use super::args::{arg, flag, int, Steps};
use super::FunctionContext;
use crate::value::{to_string_value, with_thread_cache, Warning};

type Out = Result<Value>;

/// Runs `f` with the compiled regex of argument `pattern_at`, or warns 1543 and answers
/// `null`.
fn with_regex(
    ctx: &mut dyn FunctionContext,
    args: &[Value],
    pattern_at: usize,
    case_insensitive: bool,
    f: impl FnOnce(&Regex, &dyn FunctionContext) -> Out,
) -> Out {
    let pattern = to_string_value(arg(args, pattern_at));
    let context: &dyn FunctionContext = ctx;
    let result = with_thread_cache(|cache| {
        cache
            .regex(&pattern, case_insensitive)
            .map(|regex| f(regex, context))
    });
    match result {
        Some(value) => value,
        None => {
            ctx.warn(Warning::invalid_regex());
            Ok(Value::Null)
        }
    }
}

/// What a match that reports capturing groups may take (bytes): the regex engine keeps a
/// table of every group's bounds for every state of the pattern, about twice
/// `states x groups x 16` bytes, and a pattern has at most a few states per byte of its text.
/// A few hundred bytes for everyday patterns; gigabytes for thousands of groups.
fn capture_cost(regex: &Regex) -> u64 {
    let states = regex.as_str().len() as u64 * 2 + 16;
    states.saturating_mul(regex.captures_len() as u64) * 32
}

pub fn like(_: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let (text, pattern) = (to_string_value(arg(args, 0)), to_string_value(arg(args, 1)));
    let case_insensitive = flag(args, 2, false);
    Ok(Value::Bool(with_thread_cache(|cache| {
        cache
            .like(&pattern, case_insensitive)
            .is_some_and(|regex| regex.is_match(&text))
    })))
}

pub fn regex_test(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let text = to_string_value(arg(args, 0));
    with_regex(ctx, args, 1, flag(args, 2, false), |regex, _| {
        Ok(Value::Bool(regex.is_match(&text)))
    })
}

pub fn regex_replace(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let text = to_string_value(arg(args, 0));
    let replacement = to_string_value(arg(args, 2));
    with_regex(ctx, args, 1, flag(args, 3, false), |regex, ctx| {
        ctx.admit(capture_cost(regex))?;
        // The replacement may be far longer than what it replaces: the result's largest
        // possible size is admitted first.
        let matches = regex.find_iter(&text).count() as u64;
        ctx.admit(
            (text.len() as u64)
                .saturating_add(matches.saturating_mul(replacement.len() as u64 * 2)),
        )?;
        // `$1` refers to a group, as in ICU; `regex::NoExpand` is not wanted here.
        Ok(Value::String(
            regex.replace_all(&text, replacement.as_str()).into_owned(),
        ))
    })
}

/// `REGEX_MATCHES`: the whole match and every group of the first match (`""` for a group
/// that did not participate), or `null` when nothing matches.
pub fn regex_matches(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let text = to_string_value(arg(args, 0));
    with_regex(ctx, args, 1, flag(args, 2, false), |regex, ctx| {
        ctx.admit(capture_cost(regex))?;
        Ok(match regex.captures(&text) {
            Some(captures) => Value::Array(
                captures
                    .iter()
                    .map(|group| Value::String(group.map_or("", |m| m.as_str()).to_string()))
                    .collect(),
            ),
            None => Value::Null,
        })
    })
}

/// `REGEX_SPLIT`: the parts between matches; the text of capturing groups is kept between
/// the parts; at most `limit` parts.
pub fn regex_split(ctx: &mut dyn FunctionContext, args: &[Value]) -> Out {
    let text = to_string_value(arg(args, 0));
    let limit = match arg(args, 3) {
        Value::Null => usize::MAX,
        other => match int(other) {
            n if n > 0 => n as usize,
            _ => usize::MAX,
        },
    };
    with_regex(ctx, args, 1, flag(args, 2, false), |regex, ctx| {
        ctx.admit(capture_cost(regex))?;
        let mut parts = Vec::new();
        let mut start = 0;
        let mut steps = Steps::default();
        for captures in regex.captures_iter(&text) {
            steps.step(ctx)?;
            let Some(whole) = captures.get(0) else {
                continue;
            };
            if whole.end() == 0 && whole.start() == 0 {
                continue;
            }
            parts.push(Value::String(text[start..whole.start()].to_string()));
            for group in captures.iter().skip(1).flatten() {
                parts.push(Value::String(group.as_str().to_string()));
            }
            start = whole.end();
        }
        parts.push(Value::String(text[start..].to_string()));
        parts.truncate(limit);
        Ok(Value::Array(parts))
    })
}
