//! Reading the server's import replies: counts, and details mapped back to input lines.
//!
//! What it is: [`Totals`] (the sum of every reply's counters), [`FirstFailures`] (the failed
//! records with the lowest input lines, bounded, and a count of the rest) and [`map_details`], which turns
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
//! dropped; the counters are added exactly as the server reported them; [`FirstFailures`] keeps
//! at most its bound, always the lowest lines seen (a failure without a line sorts last),
//! whatever order the replies arrive in, and counts every other failure exactly once.

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

/// The failed records with the lowest input lines, at most `max` of them, and how many more
/// failed.
#[derive(Clone, Debug)]
pub struct FirstFailures {
    max: usize,
    /// Sorted by line (unknown lines last), then by arrival.
    kept: Vec<Failure>,
    more: u64,
}

impl FirstFailures {
    /// Keeps at most `max` failures.
    pub fn new(max: usize) -> FirstFailures {
        FirstFailures {
            max,
            kept: Vec::new(),
            more: 0,
        }
    }

    /// Adds one failure: kept when it is among the lowest lines so far, else counted.
    pub fn add(&mut self, failure: Failure) {
        let key = |f: &Failure| f.line.unwrap_or(u64::MAX);
        let at = self.kept.partition_point(|k| key(k) <= key(&failure));
        if at >= self.max {
            self.more += 1;
            return;
        }
        self.kept.insert(at, failure);
        if self.kept.len() > self.max {
            self.kept.pop();
            self.more += 1;
        }
    }

    /// The kept failures, lowest line first.
    pub fn kept(&self) -> &[Failure] {
        &self.kept
    }

    /// The failures not kept.
    pub fn more(&self) -> u64 {
        self.more
    }

    /// The report's lines: each kept failure (`line N: message`), then how many more failed.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .kept
            .iter()
            .map(|f| match f.line {
                Some(line) => format!("line {line}: {}", f.message),
                None => f.message.clone(),
            })
            .collect();
        if self.more > 0 {
            lines.push(format!("... and {} more failed documents", self.more));
        }
        lines
    }
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

    fn failure(line: Option<u64>) -> Failure {
        Failure {
            line,
            message: format!("bad {line:?}"),
        }
    }

    #[test]
    fn the_lowest_lines_are_kept_whatever_the_arrival_order() {
        let mut first = FirstFailures::new(3);
        for line in [
            Some(40),
            Some(7),
            None,
            Some(12),
            Some(3),
            Some(99),
            Some(8),
        ] {
            first.add(failure(line));
        }
        let lines: Vec<Option<u64>> = first.kept().iter().map(|f| f.line).collect();
        assert_eq!(lines, [Some(3), Some(7), Some(8)]);
        assert_eq!(first.more(), 4);
        assert_eq!(
            first.lines(),
            [
                "line 3: bad Some(3)",
                "line 7: bad Some(7)",
                "line 8: bad Some(8)",
                "... and 4 more failed documents"
            ]
        );
    }

    #[test]
    fn failures_without_a_line_come_last_and_few_failures_add_no_count() {
        let mut first = FirstFailures::new(10);
        first.add(failure(None));
        first.add(failure(Some(5)));
        assert_eq!(first.lines(), ["line 5: bad Some(5)", "bad None"]);
        assert_eq!(first.more(), 0);
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
