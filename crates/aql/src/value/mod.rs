//! AQL's values: casts, the canonical number, operators and the regex cache.
//!
//! What it is: the semantics of AQL's operators over `serde_json::Value`s, as the executor
//! calls them for every operator it evaluates: the casts to boolean, number and string
//! ([`truthy`], [`to_number`], [`to_string_value`]), the canonical number ([`number`]),
//! equality and hashing consistent with [`quince_model::order::compare_values`] ([`equal`],
//! [`hash_key`]), the binary and unary operators ([`binary`], [`unary`]), the quantified
//! array comparisons ([`quantified`]), and a cache of compiled `LIKE` patterns and regular
//! expressions ([`RegexCache`]). Warnings ([`Warning`]) are handed to a callback; the
//! executor collects them into `extra.warnings`.
//!
//! What it is not: the logical operators `&&` and `||` (the executor short-circuits them and
//! returns an operand, not a boolean), nor attribute access, ranges or expansions.
//!
//! Invariants: no operator fails a query: invalid input gives `null` (and a warning where
//! ArangoDB gives one); every number produced is finite, and integral values within ±2^53
//! are JSON integers.

mod cast;
mod compare;
mod format;
mod like;
mod operators;
mod regex_cache;
mod warning;

pub use cast::{arithmetic_operand, number, to_number, to_string_value, truthy, type_name};
pub use compare::{equal, hash_key, in_array};
pub use format::{format_number, to_json_text};
pub use like::like_to_regex;
pub use operators::{binary, quantified, unary, Quantifier};
pub use regex_cache::{clear_thread_cache, with_thread_cache, RegexCache};
pub use warning::Warning;
