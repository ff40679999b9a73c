//! Reading the server's import replies: counts, and details mapped back to input lines.
//!
//! What it is: [`Totals`] (the sum of every reply's counters) and [`map_details`], which turns
//! each `at position <i>: <message>` detail of one batch into the input line of the record it
//! is about. The server numbers positions two ways, as ArangoDB does: a record it could not
//! convert (not JSON, not an object, no edge ends, wrong row width) by its 1-based number in
//! the request, and a failed write (`creating document failed …`) by its 0-based index among
//! the records that were converted. The second is mapped by skipping the records the first
//! kind names.
//!
//! What it is not: sending or printing.
//!
//! Invariants: a detail whose position is outside the batch is kept with no line rather than
//! dropped; the counters are added exactly as the server reported them.

use serde_json::Value;

/// The counters of an import.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub created: u64,
    pub errors: u64,
    pub empty: u64,
    pub updated: u64,
    pub ignored: u64,
}

impl Totals {
    /// Adds the counters of one `201` reply body.
    pub fn add_reply(&mut self, body: &Value) {
        let get = |name: &str| body.get(name).and_then(Value::as_u64).unwrap_or(0);
        self.created += get("created");
        self.errors += get("errors");
        self.empty += get("empty");
        self.updated += get("updated");
        self.ignored += get("ignored");
    }

    /// The summary line.
    pub fn summary(&self) -> String {
        format!(
            "created: {}, errors: {}, updated: {}, ignored: {}",
            self.created, self.errors, self.updated, self.ignored
        )
    }
}

/// One failed record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Its input line, when known.
    pub line: Option<u64>,
    /// What the server said about it (without the position prefix).
    pub message: String,
}

/// Splits `at position <i>: <message>`.
pub fn parse_detail(detail: &str) -> Option<(u64, &str)> {
    let rest = detail.strip_prefix("at position ")?;
    let (number, message) = rest.split_once(": ")?;
    Some((number.parse().ok()?, message))
}

/// True for the detail of a failed write (positioned among converted records).
fn is_write_failure(message: &str) -> bool {
    message.starts_with("creating document failed")
}

/// Maps the details of one batch to input lines; `lines[k]` is the line of record k.
pub fn map_details(details: &[String], lines: &[u64]) -> Vec<Failure> {
    let mut parsed: Vec<(Option<(u64, &str)>, &String)> =
        details.iter().map(|d| (parse_detail(d), d)).collect();
    // Records that failed conversion, by index, to skip when counting converted records.
    let mut unconverted: Vec<usize> = parsed
        .iter()
        .filter_map(|(p, _)| match p {
            Some((position, message)) if !is_write_failure(message) && *position >= 1 => {
                Some(*position as usize - 1)
            }
            _ => None,
        })
        .collect();
    unconverted.sort_unstable();
    unconverted.dedup();
    parsed
        .drain(..)
        .map(|(p, raw)| match p {
            Some((position, message)) => {
                let record = if is_write_failure(message) {
                    nth_converted(position as usize, &unconverted)
                } else {
                    (position as usize).checked_sub(1)
                };
                Failure {
                    line: record.and_then(|k| lines.get(k).copied()),
                    message: message.to_string(),
                }
            }
            None => Failure {
                line: None,
                message: raw.clone(),
            },
        })
        .collect()
}

/// The record index of the `n`-th (0-based) converted record, given the sorted indexes of the
/// records that were not converted.
fn nth_converted(n: usize, unconverted: &[usize]) -> Option<usize> {
    let mut index = n;
    for &skip in unconverted {
        if skip <= index {
            index += 1;
        } else {
            break;
        }
    }
    Some(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_of_both_kinds_map_to_lines() {
        let lines = [10, 11, 13, 14, 20];
        let details = vec![
            "at position 2: invalid JSON type (expecting object, probably parse error), offending context: x".to_string(),
            "at position 2: creating document failed with error 'unique constraint violated', offending document: {}".to_string(),
            "at position 0: creating document failed with error 'illegal document key', offending document: {}".to_string(),
            "something else".to_string(),
        ];
        let got = map_details(&details, &lines);
        let found: Vec<Option<u64>> = got.iter().map(|f| f.line).collect();
        // Record 1 (line 11) failed conversion; converted records are 0, 2, 3, 4.
        assert_eq!(found, [Some(11), Some(14), Some(10), None]);
        assert!(got[1].message.starts_with("creating document failed"));
        assert_eq!(got[3].message, "something else");
    }

    #[test]
    fn totals_add_up_and_summarise() {
        let mut t = Totals::default();
        t.add_reply(
            &serde_json::json!({"created": 2, "errors": 1, "updated": 0, "ignored": 3, "empty": 1}),
        );
        t.add_reply(&serde_json::json!({"created": 1}));
        assert_eq!(t.summary(), "created: 3, errors: 1, updated: 0, ignored: 3");
        assert_eq!(t.empty, 1);
    }
}
