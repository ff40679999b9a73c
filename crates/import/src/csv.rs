//! CSV and TSV input, converted to the server's header-line format.
//!
//! What it is: [`RecordReader`], which reads one record at a time (CSV: RFC 4180 quoting,
//! `""` for a quote inside a quoted field, quoted fields may span lines, CRLF or LF; TSV: fields
//! split at tabs, no quoting), and [`write_header`] / [`write_row`], which write a record as one
//! line of JSON: the header as an array of names, a row as an array of values.
//!
//! Values, as arangoimport converts them: a quoted field is always a string; an unquoted field
//! is `null` when empty or `null` (the server then leaves the attribute out), a boolean when
//! `true` or `false`, a number when it is a JSON number within a double's range (`-12`, `3.5`,
//! `1e3`; not `+1`, `.5`, `007` or `1e999`), and a string otherwise.
//!
//! What it is not: a validator of the row width (the server counts values against the header
//! and reports rows of the wrong width, unless `ignoreMissing`).
//!
//! Invariants: every record knows the 1-based line it starts on; blank lines are skipped and
//! are no records; a record is at most `max_len` bytes (a longer one is an error, so an
//! unclosed quote cannot swallow the rest of a large file into memory).

use std::io::{self, BufRead};

/// One field of a record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The text, quotes removed and `""` undone.
    pub text: String,
    /// True when the field was quoted.
    pub quoted: bool,
}

/// The two dialects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// Comma-separated (or another separator), with quotes.
    Csv(u8),
    /// Tab-separated, no quotes.
    Tsv,
}

/// Reads records from a CSV or TSV input.
pub struct RecordReader<R> {
    input: R,
    dialect: Dialect,
    /// Lines read so far.
    line: u64,
    /// The longest record accepted, in bytes.
    max_len: usize,
    /// The raw bytes of the record being read.
    raw: Vec<u8>,
}

impl<R: BufRead> RecordReader<R> {
    /// A reader of `input` in `dialect`.
    pub fn new(input: R, dialect: Dialect, max_len: usize) -> Self {
        RecordReader {
            input,
            dialect,
            line: 0,
            max_len,
            raw: Vec::new(),
        }
    }

    /// Reads the next record into `fields`; returns the line it starts on, or None at the end.
    pub fn next_record(&mut self, fields: &mut Vec<Field>) -> io::Result<Option<u64>> {
        loop {
            self.raw.clear();
            if self.input.read_until(b'\n', &mut self.raw)? == 0 {
                return Ok(None);
            }
            self.line += 1;
            let start = self.line;
            if self.raw.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            fields.clear();
            match self.dialect {
                Dialect::Tsv => split_tsv(strip_eol(&self.raw), fields),
                Dialect::Csv(separator) => self.read_csv(separator, fields)?,
            }
            return Ok(Some(start));
        }
    }

    /// Parses a CSV record from `raw`, reading more lines while a quoted field is open.
    fn read_csv(&mut self, separator: u8, fields: &mut Vec<Field>) -> io::Result<()> {
        let mut field = Vec::new();
        let mut quoted = false;
        let mut in_quotes = false;
        let mut at = 0usize;
        loop {
            while at < self.raw.len() {
                let b = self.raw[at];
                at += 1;
                if in_quotes {
                    if b == b'"' {
                        if self.raw.get(at) == Some(&b'"') {
                            field.push(b'"');
                            at += 1;
                        } else {
                            in_quotes = false;
                        }
                    } else {
                        field.push(b);
                    }
                    continue;
                }
                match b {
                    b'"' if field.is_empty() && !quoted => {
                        quoted = true;
                        in_quotes = true;
                    }
                    _ if b == separator => {
                        fields.push(make_field(&mut field, quoted));
                        quoted = false;
                    }
                    b'\n' => {}
                    b'\r' if self.raw.get(at) == Some(&b'\n') || at == self.raw.len() => {}
                    _ => field.push(b),
                }
            }
            if !in_quotes {
                fields.push(make_field(&mut field, quoted));
                return Ok(());
            }
            // The quoted field goes on in the next line.
            let before = self.raw.len();
            if self.input.read_until(b'\n', &mut self.raw)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("line {}: a quoted field is not closed", self.line),
                ));
            }
            self.line += 1;
            if self.raw.len() > self.max_len {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "line {}: a record is longer than {} bytes",
                        self.line, self.max_len
                    ),
                ));
            }
            at = before;
        }
    }
}

fn make_field(bytes: &mut Vec<u8>, quoted: bool) -> Field {
    let text = String::from_utf8_lossy(bytes).into_owned();
    bytes.clear();
    Field { text, quoted }
}

/// The line without its `\n` or `\r\n`.
fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn split_tsv(line: &[u8], fields: &mut Vec<Field>) {
    for part in line.split(|b| *b == b'\t') {
        fields.push(Field {
            text: String::from_utf8_lossy(part).into_owned(),
            quoted: false,
        });
    }
}

/// Writes the header line: a JSON array of the names, then `\n`.
pub fn write_header(fields: &[Field], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(&f.text, out);
    }
    out.extend_from_slice(b"]\n");
}

/// Writes a row: a JSON array of the converted values, then `\n`.
pub fn write_row(fields: &[Field], out: &mut Vec<u8>) {
    out.push(b'[');
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_value(f, out);
    }
    out.extend_from_slice(b"]\n");
}

fn write_value(field: &Field, out: &mut Vec<u8>) {
    let text = field.text.as_str();
    if field.quoted {
        return write_string(text, out);
    }
    match text {
        "" | "null" => out.extend_from_slice(b"null"),
        "true" | "false" => out.extend_from_slice(text.as_bytes()),
        _ if is_number_value(text) => out.extend_from_slice(text.as_bytes()),
        _ => write_string(text, out),
    }
}

fn write_string(text: &str, out: &mut Vec<u8>) {
    serde_json::to_writer(&mut *out, text).expect("writing to a Vec cannot fail");
}

/// True when `text` becomes a number: JSON's grammar, and within the range of a double
/// (`1e999` stays a string, as the server could not read it as a number).
pub fn is_number_value(text: &str) -> bool {
    is_json_number(text) && text.parse::<f64>().is_ok_and(f64::is_finite)
}

/// True when `text` is a number in JSON's grammar.
pub fn is_json_number(text: &str) -> bool {
    let b = text.as_bytes();
    let mut i = 0;
    if b.get(i) == Some(&b'-') {
        i += 1;
    }
    match b.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        _ => return false,
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let digits = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == digits {
            return false;
        }
    }
    i == b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::{json, Value};

    fn records(text: &str, dialect: Dialect) -> io::Result<Vec<(u64, Vec<Field>)>> {
        let mut r = RecordReader::new(text.as_bytes(), dialect, 1 << 20);
        let mut out = Vec::new();
        let mut fields = Vec::new();
        while let Some(line) = r.next_record(&mut fields)? {
            out.push((line, fields.clone()));
        }
        Ok(out)
    }

    fn row_json(fields: &[Field]) -> Value {
        let mut out = Vec::new();
        write_row(fields, &mut out);
        assert_eq!(out.pop(), Some(b'\n'));
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn csv_quotes_span_lines_and_escape_quotes() {
        let text = "name,note\r\n\"a, b\",\"say \"\"hi\"\"\"\n\nx,\"two\nlines\"\nlast,\n";
        let got = records(text, Dialect::Csv(b',')).unwrap();
        let lines: Vec<u64> = got.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, [1, 2, 4, 6]);
        let texts: Vec<Vec<&str>> = got
            .iter()
            .map(|(_, f)| f.iter().map(|f| f.text.as_str()).collect())
            .collect();
        assert_eq!(
            texts,
            [
                vec!["name", "note"],
                vec!["a, b", "say \"hi\""],
                vec!["x", "two\nlines"],
                vec!["last", ""]
            ]
        );
        assert!(records("a,\"open\n", Dialect::Csv(b',')).is_err());
    }

    #[test]
    fn values_convert_as_arangoimport_does() {
        let got = records(
            "1,-2.5e3,true,null,,abc,\"12\",007,+1,.5\n",
            Dialect::Csv(b','),
        )
        .unwrap();
        assert_eq!(
            row_json(&got[0].1),
            json!([1, -2500.0, true, null, null, "abc", "12", "007", "+1", ".5"])
        );
    }

    #[test]
    fn tsv_splits_at_tabs_without_quoting() {
        let got = records("a\tb\r\n\"q\"\t\n", Dialect::Tsv).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(row_json(&got[1].1), json!(["\"q\"", null]));
    }

    #[test]
    fn headers_are_arrays_of_names() {
        let got = records("_key,\"a b\"\n", Dialect::Csv(b',')).unwrap();
        let mut out = Vec::new();
        write_header(&got[0].1, &mut out);
        assert_eq!(out, b"[\"_key\",\"a b\"]\n");
    }

    proptest! {
        #[test]
        fn quoted_fields_round_trip(cells in prop::collection::vec("[a-z,\"\n é]{0,6}", 1..5)) {
            let line: Vec<String> = cells
                .iter()
                .map(|c| format!("\"{}\"", c.replace('"', "\"\"")))
                .collect();
            let text = format!("{}\n", line.join(","));
            let got = records(&text, Dialect::Csv(b',')).unwrap();
            prop_assert_eq!(got.len(), 1);
            let texts: Vec<String> = got[0].1.iter().map(|f| f.text.clone()).collect();
            prop_assert_eq!(texts, cells);
        }

        #[test]
        fn numbers_are_detected_exactly_when_serde_parses_them(text in "[-+0-9.eE]{1,6}") {
            let serde_says = serde_json::from_str::<serde_json::Number>(&text).is_ok();
            prop_assert_eq!(is_number_value(&text), serde_says);
        }
    }
}
