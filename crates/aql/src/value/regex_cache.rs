//! [`RegexCache`]: compiled `LIKE` patterns and regular expressions, reused across rows.
//!
//! What it is: a bounded map from (pattern, kind, case-insensitivity) to a compiled
//! [`regex::Regex`] (or the fact that the pattern is invalid), so an operator or function
//! evaluated once per row compiles its pattern once per query. Operators and functions use
//! a per-thread cache ([`with_thread_cache`]); an executor may also keep its own.
//!
//! What it is not: ICU's regular expressions, which ArangoDB uses. The `regex` crate has no
//! look-around and no back-references; such patterns are invalid here (warning 1543).
//!
//! Invariants: at most [`RegexCache::CAPACITY`] entries; when full, the cache is cleared
//! (patterns are usually constant per query, so the working set is tiny); a query's run ends
//! by clearing its thread's cache ([`clear_thread_cache`]), so the patterns it compiled are
//! freed while its memory account is charged, and no pattern outlives the query that made it.

use std::cell::RefCell;
use std::collections::HashMap;

use regex::{Regex, RegexBuilder};

use super::like::like_to_regex;

/// What a cached pattern is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Like,
    Regex,
}

/// Compiled patterns by text (see the module doc).
#[derive(Debug, Default)]
pub struct RegexCache {
    /// `None` records a pattern that does not compile, so it is not compiled again.
    entries: HashMap<(String, Kind, bool), Option<Regex>>,
}

impl RegexCache {
    /// The most patterns kept.
    pub const CAPACITY: usize = 256;

    /// An empty cache.
    pub fn new() -> Self {
        RegexCache::default()
    }

    /// The compiled `LIKE` pattern (never fails: every text is a valid pattern).
    pub fn like(&mut self, pattern: &str, case_insensitive: bool) -> Option<&Regex> {
        self.get(pattern, Kind::Like, case_insensitive)
    }

    /// The compiled regular expression, or `None` when the pattern is invalid.
    pub fn regex(&mut self, pattern: &str, case_insensitive: bool) -> Option<&Regex> {
        self.get(pattern, Kind::Regex, case_insensitive)
    }

    fn get(&mut self, pattern: &str, kind: Kind, case_insensitive: bool) -> Option<&Regex> {
        let key = (pattern.to_string(), kind, case_insensitive);
        if !self.entries.contains_key(&key) {
            if self.entries.len() >= Self::CAPACITY {
                self.entries.clear();
            }
            let source = match kind {
                Kind::Like => like_to_regex(pattern),
                Kind::Regex => pattern.to_string(),
            };
            let compiled = RegexBuilder::new(&source)
                .case_insensitive(case_insensitive)
                .size_limit(1 << 22)
                .build()
                .ok();
            self.entries.insert(key.clone(), compiled);
        }
        self.entries.get(&key).and_then(Option::as_ref)
    }
}

thread_local! {
    static THREAD_CACHE: RefCell<RegexCache> = RefCell::new(RegexCache::new());
}

/// Runs `f` with this thread's cache.
pub fn with_thread_cache<T>(f: impl FnOnce(&mut RegexCache) -> T) -> T {
    THREAD_CACHE.with(|cache| f(&mut cache.borrow_mut()))
}

/// Empties this thread's cache (at the end of a query's run).
pub fn clear_thread_cache() {
    THREAD_CACHE.with(|cache| cache.borrow_mut().entries.clear());
}
