//! Fulltext indexes as every engine sees them: the words a value gives ([`words`]), how a word
//! is kept as an index entry ([`word_value`]) and ArangoDB's fulltext query language
//! ([`FulltextQuery`]).
//!
//! What it is: words are the runs of Unicode letters and digits of every string in the indexed
//! attribute (a string, or arrays and objects holding strings, to [`NESTING_MAX`] levels),
//! lower-cased, cut to [`WORD_CHARS_MAX`] characters, and kept when at least `minLength`
//! characters long. A document's entries are its distinct words, one `[word]` entry each.
//! The word is stored as an array of numbers, each packing up to [`CHUNK_BYTES`] bytes of its
//! UTF-8 big-endian, so that AQL's order of entries (numbers compared exactly, arrays element
//! by element, a shorter array first) is the words' byte order, and every word starting with a
//! prefix is one contiguous range ([`Term::lookup`]); AQL's string collation would not give
//! that.
//!
//! A query is a comma-separated list of terms, each `[+|-][prefix:|complete:]word`: `+` (and,
//! the default) keeps the documents that also match, `|` (or) adds those that match, `-` (not)
//! removes those that match, evaluated left to right from the first term's matches (a first
//! term with `-` starts from nothing); `complete:` (the default) matches the word itself,
//! `prefix:` every word that starts with it. A term's word is normalised as indexed words
//! are (its first run of letters and digits, lower-cased and cut); a term without one is
//! ignored.
//!
//! What it is not: stemming, stop words, phrases or ranking.
//!
//! Invariants: every engine derives words with [`words`] and decides a document with
//! [`FulltextQuery::matches`], so the index and a brute-force scan agree; hits come in
//! document key order (bytes).

use std::collections::BTreeSet;
use std::ops::Bound;

use quince_errors::Result;
use serde_json::Value;

use super::definition::bad;
use super::lookup::IndexLookup;

/// The longest word indexed or sought, in characters (longer ones are cut).
pub const WORD_CHARS_MAX: usize = 40;

/// How deep arrays and objects in the indexed attribute are searched for strings.
pub const NESTING_MAX: usize = 8;

/// The most terms one query may have.
pub const QUERY_TERMS_MAX: usize = 32;

/// Bytes of a word packed into one number of its entry (6 bytes: below 2^48, exact).
const CHUNK_BYTES: usize = 6;

/// Adds the words of `value` to `out` (see the module doc).
pub fn words(value: &Value, min_length: usize, out: &mut BTreeSet<String>) {
    collect(value, min_length, out, 0);
}

fn collect(value: &Value, min_length: usize, out: &mut BTreeSet<String>, depth: usize) {
    match value {
        Value::String(text) => {
            for word in text.split(|c: char| !c.is_alphanumeric()) {
                if let Some(word) = normalize(word) {
                    if word.chars().count() >= min_length {
                        out.insert(word);
                    }
                }
            }
        }
        Value::Array(items) if depth < NESTING_MAX => {
            for item in items {
                collect(item, min_length, out, depth + 1);
            }
        }
        Value::Object(map) if depth < NESTING_MAX => {
            for item in map.values() {
                collect(item, min_length, out, depth + 1);
            }
        }
        _ => {}
    }
}

/// A run of letters and digits lower-cased and cut to [`WORD_CHARS_MAX`]; `None` if empty.
fn normalize(run: &str) -> Option<String> {
    let word: String = run
        .chars()
        .flat_map(char::to_lowercase)
        .take(WORD_CHARS_MAX)
        .collect();
    (!word.is_empty()).then_some(word)
}

/// The numbers packing `bytes`, [`CHUNK_BYTES`] at a time, the last one padded with zeros.
fn chunks(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(CHUNK_BYTES)
        .map(|chunk| {
            let mut n = 0u64;
            for i in 0..CHUNK_BYTES {
                n = (n << 8) | u64::from(chunk.get(i).copied().unwrap_or(0));
            }
            n
        })
        .collect()
}

fn array(numbers: Vec<u64>) -> Value {
    Value::Array(numbers.into_iter().map(Value::from).collect())
}

/// How a word is kept in an entry (see the module doc).
pub fn word_value(word: &str) -> Value {
    array(chunks(word.as_bytes()))
}

/// The word of a value made by [`word_value`].
pub fn decode_word(value: &Value) -> Option<String> {
    let mut bytes = Vec::new();
    for n in value.as_array()? {
        let n = n.as_u64()?;
        for i in (0..CHUNK_BYTES).rev() {
            let byte = (n >> (8 * i)) as u8;
            if byte != 0 {
                bytes.push(byte);
            }
        }
    }
    String::from_utf8(bytes).ok()
}

/// How a term combines with the terms before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Combine {
    /// `+`: both.
    And,
    /// `|`: either.
    Or,
    /// `-`: the earlier ones but not this one.
    Not,
}

/// One term of a fulltext query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Term {
    /// How it combines with the earlier terms.
    pub combine: Combine,
    /// The word (normalised) or prefix.
    pub word: String,
    /// True for `prefix:`.
    pub prefix: bool,
}

impl Term {
    /// True when `word` (an indexed word) matches the term.
    pub fn matches(&self, word: &str) -> bool {
        if self.prefix {
            word.starts_with(&self.word)
        } else {
            word == self.word
        }
    }

    /// The sorted lookup of the entries that match the term.
    pub fn lookup(&self) -> IndexLookup {
        if !self.prefix {
            return IndexLookup::equal(vec![word_value(&self.word)]);
        }
        let mut numbers = chunks(self.word.as_bytes());
        let rest = self.word.len() % CHUNK_BYTES;
        let step = if rest == 0 {
            1
        } else {
            1u64 << (8 * (CHUNK_BYTES - rest))
        };
        let low = array(numbers.clone());
        if let Some(last) = numbers.last_mut() {
            *last += step;
        }
        IndexLookup::Sorted {
            prefix: Vec::new(),
            low: Bound::Included(low),
            high: Bound::Excluded(array(numbers)),
            reverse: false,
        }
    }
}

/// A parsed fulltext query (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FulltextQuery {
    /// The terms with a word, in order.
    pub terms: Vec<Term>,
}

impl FulltextQuery {
    /// Parses a query; 400/10 for one with more than [`QUERY_TERMS_MAX`] terms.
    pub fn parse(query: &str) -> Result<FulltextQuery> {
        let mut terms = Vec::new();
        for raw in query.split(',') {
            let mut text = raw.trim();
            let combine = match text.chars().next() {
                Some('+') => Combine::And,
                Some('|') => Combine::Or,
                Some('-') => Combine::Not,
                _ => Combine::And,
            };
            if matches!(text.chars().next(), Some('+' | '|' | '-')) {
                text = text[1..].trim_start();
            }
            let (prefix, text) = if let Some(rest) = text.strip_prefix("prefix:") {
                (true, rest)
            } else if let Some(rest) = text.strip_prefix("complete:") {
                (false, rest)
            } else {
                (false, text)
            };
            let word = text
                .split(|c: char| !c.is_alphanumeric())
                .find_map(normalize);
            if let Some(word) = word {
                terms.push(Term {
                    combine,
                    word,
                    prefix,
                });
            }
        }
        if terms.len() > QUERY_TERMS_MAX {
            return Err(bad(format!(
                "a fulltext query may have at most {QUERY_TERMS_MAX} search words"
            )));
        }
        Ok(FulltextQuery { terms })
    }

    /// True when a document with these words matches.
    pub fn matches(&self, words: &BTreeSet<String>) -> bool {
        let mut matched = false;
        for (i, term) in self.terms.iter().enumerate() {
            let hit = words.iter().any(|w| term.matches(w));
            matched = match (i, term.combine) {
                (0, Combine::Not) => false,
                (0, _) => hit,
                (_, Combine::And) => matched && hit,
                (_, Combine::Or) => matched || hit,
                (_, Combine::Not) => matched && !hit,
            };
        }
        matched
    }

    /// Combines each term's matching keys (`keys_of`) left to right, as [`Self::matches`]
    /// decides one document.
    pub fn evaluate(
        &self,
        mut keys_of: impl FnMut(&Term) -> Result<BTreeSet<String>>,
    ) -> Result<BTreeSet<String>> {
        let mut result = BTreeSet::new();
        for (i, term) in self.terms.iter().enumerate() {
            if i == 0 && term.combine == Combine::Not {
                continue;
            }
            if i > 0 && result.is_empty() && term.combine != Combine::Or {
                continue;
            }
            let keys = keys_of(term)?;
            result = match (i, term.combine) {
                (0, _) => keys,
                (_, Combine::And) => result.intersection(&keys).cloned().collect(),
                (_, Combine::Or) => result.union(&keys).cloned().collect(),
                (_, Combine::Not) => result.difference(&keys).cloned().collect(),
            };
        }
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn words_are_lower_case_runs_of_letters_and_digits() {
        let mut out = BTreeSet::new();
        words(
            &json!(["Hello, Wörld! x", {"a": "ÄRGER 42"}, 7]),
            2,
            &mut out,
        );
        assert_eq!(out, set(&["42", "hello", "wörld", "ärger"]));
        let long = "a".repeat(50);
        let mut out = BTreeSet::new();
        words(&json!(long), 1, &mut out);
        assert_eq!(out, set(&[&"a".repeat(WORD_CHARS_MAX)]));
    }

    #[test]
    fn word_values_round_trip_and_sort_by_bytes() {
        for word in ["a", "abcdef", "abcdefg", "wörld", "日本語のテキスト"] {
            assert_eq!(decode_word(&word_value(word)).as_deref(), Some(word));
        }
        let order =
            |a: &str, b: &str| quince_model::order::compare_values(&word_value(a), &word_value(b));
        assert_eq!(order("ab", "abc"), std::cmp::Ordering::Less);
        assert_eq!(order("abcdefg", "abcdeg"), std::cmp::Ordering::Less);
        assert_eq!(order("z", "ä"), std::cmp::Ordering::Less);
    }

    #[test]
    fn prefix_lookups_select_exactly_the_prefixed_words() {
        let words = [
            "a", "ab", "abc", "abcdef", "abcdefg", "abcdf", "abd", "b", "wö", "wörld", "wp",
        ];
        for prefix in ["a", "ab", "abcdef", "abcde", "wö", "w"] {
            let term = Term {
                combine: Combine::And,
                word: prefix.into(),
                prefix: true,
            };
            let lookup = term.lookup();
            for word in words {
                let entry = [word_value(word)];
                assert_eq!(
                    lookup.matches(&entry),
                    word.starts_with(prefix),
                    "{prefix} {word}"
                );
            }
        }
    }

    #[test]
    fn queries_combine_left_to_right() {
        let q = FulltextQuery::parse("+Banana, -prefix:app, |complete:kiwi").unwrap();
        assert_eq!(q.terms.len(), 3);
        assert!(q.terms[1].prefix && q.terms[1].combine == Combine::Not);
        assert!(q.matches(&set(&["banana"])));
        assert!(!q.matches(&set(&["banana", "apple"])));
        assert!(q.matches(&set(&["kiwi", "apple"])));
        let docs = [
            ("1", set(&["banana"])),
            ("2", set(&["banana", "apple"])),
            ("3", set(&["kiwi"])),
        ];
        let result = q
            .evaluate(|term| {
                Ok(docs
                    .iter()
                    .filter(|(_, w)| w.iter().any(|w| term.matches(w)))
                    .map(|(k, _)| k.to_string())
                    .collect())
            })
            .unwrap();
        assert_eq!(result, set(&["1", "3"]));
        assert!(FulltextQuery::parse(&"a,".repeat(40)).is_err());
        assert!(!FulltextQuery::parse("-x").unwrap().matches(&set(&["y"])));
    }
}
