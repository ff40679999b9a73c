//! Incremental splitters: JSON Lines into lines, and one JSON array into its elements, fed
//! chunk by chunk with bounded buffers.
//!
//! What it is: [`LineSplitter`] (cuts at `\n`; a line that spans chunks is the only thing it
//! copies) and [`ArraySplitter`] (finds where each top-level element of `[ … ]` ends by tracking
//! strings, escapes and nesting depth, and reports the line each element starts on). Both are
//! used by the server's `POST /_api/import` on the request body as it arrives, and by
//! `quince import` on its input file.
//!
//! What it is not: a JSON parser. Elements and lines are handed on as bytes and parsed by the
//! receiver, so a malformed element is that element's error, not the stream's; the array
//! splitter only refuses what cannot be an array at all (no `[`, a missing or trailing comma,
//! text after `]`, an unterminated array).
//!
//! Invariants: records are emitted once each, in input order; neither splitter holds more than
//! `max_len` bytes of an unfinished record beyond the chunk being fed (a longer record is
//! [`SplitError::TooLong`]); feeding the same bytes in any chunking emits the same records.

use std::fmt;

use memchr::memchr;

/// Why a splitter refused its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A record (line or element) longer than the bound.
    TooLong {
        /// The bound, in bytes.
        max_len: usize,
    },
    /// The input of an [`ArraySplitter`] does not start with `[` (or is empty).
    NotAnArray,
    /// Bytes that cannot be part of one JSON array.
    Malformed {
        /// The 1-based line of the offending byte (or of the end of the input).
        line: u64,
        /// What was expected.
        reason: &'static str,
    },
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SplitError::TooLong { max_len } => {
                write!(f, "a record is longer than {max_len} bytes")
            }
            SplitError::NotAnArray => f.write_str("expecting a JSON array"),
            SplitError::Malformed { line, reason } => {
                write!(f, "malformed JSON array at line {line}: {reason}")
            }
        }
    }
}

impl std::error::Error for SplitError {}

/// Splits a byte stream into lines at `\n` (the `\n` is not part of the line; a `\r` before it
/// is, and is whitespace to JSON).
#[derive(Debug)]
pub struct LineSplitter {
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
    /// The longest line accepted.
    max_len: usize,
}

impl LineSplitter {
    /// A splitter that refuses lines longer than `max_len` bytes.
    pub fn new(max_len: usize) -> Self {
        LineSplitter {
            partial: Vec::new(),
            max_len,
        }
    }

    /// Feeds the next chunk; `emit` receives every line completed by it.
    pub fn feed<E, F>(&mut self, chunk: &[u8], emit: &mut F) -> Result<(), E>
    where
        E: From<SplitError>,
        F: FnMut(&[u8]) -> Result<(), E>,
    {
        let mut rest = chunk;
        if !self.partial.is_empty() {
            let Some(end) = memchr(b'\n', rest) else {
                return self.keep(rest).map_err(E::from);
            };
            self.keep(&rest[..end]).map_err(E::from)?;
            emit(&self.partial)?;
            self.partial.clear();
            rest = &rest[end + 1..];
        }
        while let Some(end) = memchr(b'\n', rest) {
            if end > self.max_len {
                return Err(E::from(self.too_long()));
            }
            emit(&rest[..end])?;
            rest = &rest[end + 1..];
        }
        self.keep(rest).map_err(E::from)
    }

    /// Ends the input: `emit` receives the last line when the input did not end with `\n`.
    pub fn finish<E, F>(&mut self, emit: &mut F) -> Result<(), E>
    where
        F: FnMut(&[u8]) -> Result<(), E>,
    {
        if self.partial.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.partial);
        emit(&line)
    }

    /// Bytes of the current line held so far.
    pub fn pending(&self) -> usize {
        self.partial.len()
    }

    fn keep(&mut self, bytes: &[u8]) -> Result<(), SplitError> {
        if self.partial.len() + bytes.len() > self.max_len {
            return Err(self.too_long());
        }
        self.partial.extend_from_slice(bytes);
        Ok(())
    }

    fn too_long(&self) -> SplitError {
        SplitError::TooLong {
            max_len: self.max_len,
        }
    }
}

/// Where an [`ArraySplitter`] is in the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Before the opening `[`.
    BeforeArray,
    /// After `[`: an element or `]`.
    FirstElementOrEnd,
    /// After `,`: an element.
    NextElement,
    /// Inside an element.
    InElement,
    /// After an element: `,` or `]`.
    CommaOrEnd,
    /// After the closing `]`: only whitespace.
    Done,
}

/// Splits one JSON array, fed in chunks, into the bytes of its top-level elements.
#[derive(Debug)]
pub struct ArraySplitter {
    /// Unconsumed input: the element being scanned starts at `start`.
    buf: Vec<u8>,
    state: State,
    /// Start of the current element in `buf` (meaningful in `InElement`).
    start: usize,
    /// Nesting depth inside the current element.
    depth: u32,
    /// Inside a string of the current element.
    in_string: bool,
    /// The previous byte was a backslash inside a string.
    escaped: bool,
    /// The longest element accepted.
    max_len: usize,
    /// Newlines consumed so far.
    newlines: u64,
    /// The 1-based line the current element starts on.
    start_line: u64,
}

/// JSON's whitespace.
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl ArraySplitter {
    /// A splitter that refuses elements longer than `max_len` bytes.
    pub fn new(max_len: usize) -> Self {
        ArraySplitter {
            buf: Vec::new(),
            state: State::BeforeArray,
            start: 0,
            depth: 0,
            in_string: false,
            escaped: false,
            max_len,
            newlines: 0,
            start_line: 1,
        }
    }

    /// Feeds the next chunk; `emit` receives each element completed by it with the 1-based
    /// line its first byte is on.
    pub fn feed<E, F>(&mut self, chunk: &[u8], emit: &mut F) -> Result<(), E>
    where
        E: From<SplitError>,
        F: FnMut(&[u8], u64) -> Result<(), E>,
    {
        let scan_from = self.buf.len();
        self.buf.extend_from_slice(chunk);
        let mut i = scan_from;
        while i < self.buf.len() {
            let b = self.buf[i];
            let consumed = match self.state {
                State::BeforeArray => {
                    if b == b'[' {
                        self.state = State::FirstElementOrEnd;
                    } else if !is_ws(b) {
                        return Err(E::from(SplitError::NotAnArray));
                    }
                    true
                }
                State::FirstElementOrEnd | State::NextElement => {
                    if is_ws(b) {
                        true
                    } else if b == b']' && self.state == State::FirstElementOrEnd {
                        self.state = State::Done;
                        true
                    } else if b == b',' || b == b']' {
                        return Err(E::from(self.malformed("expected a value")));
                    } else {
                        self.state = State::InElement;
                        self.start = i;
                        self.start_line = self.newlines + 1;
                        self.depth = 0;
                        self.in_string = false;
                        self.escaped = false;
                        false
                    }
                }
                State::InElement => match self.element_byte(b, i) {
                    Step::Continue => true,
                    Step::EndsAfter => {
                        emit(&self.buf[self.start..=i], self.start_line)?;
                        self.state = State::CommaOrEnd;
                        true
                    }
                    Step::EndsBefore => {
                        emit(&self.buf[self.start..i], self.start_line)?;
                        self.state = State::CommaOrEnd;
                        false
                    }
                },
                State::CommaOrEnd => {
                    match b {
                        b',' => self.state = State::NextElement,
                        b']' => self.state = State::Done,
                        _ if is_ws(b) => {}
                        _ => return Err(E::from(self.malformed("expected ',' or ']'"))),
                    }
                    true
                }
                State::Done => {
                    if !is_ws(b) {
                        return Err(E::from(self.malformed("text after the end of the array")));
                    }
                    true
                }
            };
            if consumed {
                if b == b'\n' {
                    self.newlines += 1;
                }
                i += 1;
            }
        }
        let keep_from = if self.state == State::InElement {
            self.start
        } else {
            self.buf.len()
        };
        self.buf.drain(..keep_from);
        self.start = 0;
        if self.buf.len() > self.max_len {
            return Err(E::from(SplitError::TooLong {
                max_len: self.max_len,
            }));
        }
        Ok(())
    }

    /// Ends the input: emits a last scalar element cut off by the end, and checks that the
    /// array was closed.
    pub fn finish(&mut self) -> Result<(), SplitError> {
        match self.state {
            State::Done => Ok(()),
            State::BeforeArray => Err(SplitError::NotAnArray),
            _ => Err(self.malformed("the array is not closed")),
        }
    }

    /// True once the closing `]` was seen.
    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    fn malformed(&self, reason: &'static str) -> SplitError {
        SplitError::Malformed {
            line: self.newlines + 1,
            reason,
        }
    }

    /// Advances the element scanner over byte `b` (at `i`).
    fn element_byte(&mut self, b: u8, i: usize) -> Step {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                if self.depth == 0 && i > self.start {
                    return Step::EndsAfter;
                }
            }
            return Step::Continue;
        }
        match b {
            b'"' => {
                self.in_string = true;
                Step::Continue
            }
            b'{' | b'[' => {
                self.depth += 1;
                Step::Continue
            }
            b'}' | b']' if self.depth > 0 => {
                self.depth -= 1;
                if self.depth == 0 {
                    Step::EndsAfter
                } else {
                    Step::Continue
                }
            }
            // A scalar ends at the first byte that cannot continue it at the top level.
            _ if self.depth > 0 => Step::Continue,
            b'}' | b']' | b',' => Step::EndsBefore,
            _ if is_ws(b) => Step::EndsBefore,
            _ => Step::Continue,
        }
    }
}

/// What one byte did to the element being scanned.
enum Step {
    Continue,
    /// The element ends with this byte.
    EndsAfter,
    /// The element ended just before this byte, which belongs to what follows.
    EndsBefore,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::Value;

    fn lines_of(chunks: &[&[u8]], max_len: usize) -> Result<Vec<Vec<u8>>, SplitError> {
        let mut s = LineSplitter::new(max_len);
        let mut out = Vec::new();
        let mut emit = |l: &[u8]| -> Result<(), SplitError> {
            out.push(l.to_vec());
            Ok(())
        };
        for c in chunks {
            s.feed(c, &mut emit)?;
        }
        s.finish(&mut emit)?;
        Ok(out)
    }

    fn elements_of(chunks: &[&[u8]], max_len: usize) -> Result<Vec<(String, u64)>, SplitError> {
        let mut s = ArraySplitter::new(max_len);
        let mut out = Vec::new();
        let mut emit = |e: &[u8], line: u64| -> Result<(), SplitError> {
            out.push((String::from_utf8(e.to_vec()).unwrap(), line));
            Ok(())
        };
        for c in chunks {
            s.feed(c, &mut emit)?;
        }
        s.finish()?;
        Ok(out)
    }

    #[test]
    fn lines_are_cut_at_newlines_across_chunks() {
        let got = lines_of(&[b"ab", b"c\nde", b"\n\nf"], 100).unwrap();
        assert_eq!(
            got,
            vec![b"abc".to_vec(), b"de".to_vec(), vec![], b"f".to_vec()]
        );
        let ends_with_newline = lines_of(&[b"x\r\n"], 100).unwrap();
        assert_eq!(ends_with_newline, vec![b"x\r".to_vec()]);
        assert!(lines_of(&[b""], 100).unwrap().is_empty());
    }

    #[test]
    fn overlong_lines_are_refused_even_when_split() {
        assert_eq!(
            lines_of(&[b"abcd", b"ef\n"], 5).unwrap_err(),
            SplitError::TooLong { max_len: 5 }
        );
        assert!(lines_of(&[b"abcdef\n"], 5).is_err());
        assert!(lines_of(&[b"abcde\nfghij"], 5).is_ok());
    }

    #[test]
    fn elements_of_every_kind_are_found_with_their_lines() {
        let text = b"  [ {\"a\": [1, {\"b\": \"]}\\\"\"}]},\n \"s,]\" , 12.5e3,true,null,\n[[]] , -1 ]  \n";
        let got = elements_of(&[text], 1000).unwrap();
        let values: Vec<&str> = got.iter().map(|(e, _)| e.as_str()).collect();
        assert_eq!(
            values,
            [
                "{\"a\": [1, {\"b\": \"]}\\\"\"}]}",
                "\"s,]\"",
                "12.5e3",
                "true",
                "null",
                "[[]]",
                "-1"
            ]
        );
        let lines: Vec<u64> = got.iter().map(|(_, l)| *l).collect();
        assert_eq!(lines, [1, 2, 2, 2, 2, 3, 3]);
        assert!(elements_of(&[b"[]"], 10).unwrap().is_empty());
        assert!(elements_of(&[b" [ \n ] "], 10).unwrap().is_empty());
    }

    #[test]
    fn things_that_are_not_one_array_are_refused() {
        assert_eq!(elements_of(&[b""], 10).unwrap_err(), SplitError::NotAnArray);
        assert_eq!(
            elements_of(&[b"{}"], 10).unwrap_err(),
            SplitError::NotAnArray
        );
        for bad in [
            &b"[1,]"[..],
            b"[,1]",
            b"[1 2]",
            b"[1] x",
            b"[1",
            b"[{\"a\":1}",
            b"[1,",
        ] {
            assert!(
                matches!(elements_of(&[bad], 10), Err(SplitError::Malformed { .. })),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
        assert_eq!(
            elements_of(&[b"[\"abcdefgh", b"ijkl\"]"], 8).unwrap_err(),
            SplitError::TooLong { max_len: 8 }
        );
    }

    fn arb_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            "[a-z\\\\\"\\],{}\\[ \u{e9}\u{1F600}]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                prop::collection::btree_map("[a-z\"\\]]{1,4}", inner, 0..5)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    /// Cuts `bytes` at the given (sorted, deduplicated) positions.
    fn cut<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
        let mut out = Vec::new();
        let mut at = 0;
        for &c in cuts {
            let c = c.min(bytes.len());
            if c > at {
                out.push(&bytes[at..c]);
                at = c;
            }
        }
        out.push(&bytes[at..]);
        out
    }

    proptest! {
        #[test]
        fn any_chunking_of_an_array_yields_its_elements(
            items in prop::collection::vec(arb_value(), 0..8),
            pretty in any::<bool>(),
            mut cuts in prop::collection::vec(0usize..400, 0..6),
        ) {
            let whole = Value::Array(items.clone());
            let text = if pretty {
                serde_json::to_vec_pretty(&whole).unwrap()
            } else {
                serde_json::to_vec(&whole).unwrap()
            };
            cuts.sort_unstable();
            let got = elements_of(&cut(&text, &cuts), 1 << 20).unwrap();
            let parsed: Vec<Value> =
                got.iter().map(|(e, _)| serde_json::from_str(e).unwrap()).collect();
            prop_assert_eq!(parsed, items);
        }

        #[test]
        fn any_chunking_of_lines_yields_the_lines(
            lines in prop::collection::vec("[a-z{}\" \r]{0,12}", 0..10),
            mut cuts in prop::collection::vec(0usize..200, 0..6),
        ) {
            let text = lines.join("\n");
            cuts.sort_unstable();
            let got = lines_of(&cut(text.as_bytes(), &cuts), 1 << 20).unwrap();
            let mut expected: Vec<Vec<u8>> = lines.iter().map(|l| l.as_bytes().to_vec()).collect();
            // A last empty line is no line: the input simply ends with a newline.
            if expected.last().is_some_and(|l| l.is_empty()) {
                expected.pop();
            }
            prop_assert_eq!(got, expected);
        }
    }
}
