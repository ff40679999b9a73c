//! Cutting the input into request bodies of about `--batch-size` bytes.
//!
//! What it is: [`Batch`] (one request body, its import `type`, and the input line of each
//! record in it) and one producer per input kind: [`json_lines`] (records are the non-blank
//! lines, sent as they are), [`json_array`] (the elements of one top-level array, sent as a
//! smaller array), and [`delimited`] (CSV/TSV rows, sent in the header-line format with the
//! header repeated in every batch).
//!
//! What it is not: sending (`cli`) or the interpretation of replies (`report`).
//!
//! Invariants: every record goes into exactly one batch, in input order; a batch holds at least
//! one record and exceeds the batch size only when its one record does; `lines[k]` is the
//! 1-based input line of the batch's k-th record.

use std::io::{self, BufRead, Read};

use crate::csv::{self, Dialect, Field, RecordReader};
use crate::split::{ArraySplitter, SplitError};

/// The longest record accepted from the input.
pub const RECORD_LEN_MAX: usize = 64 << 20;

/// The body layout of a batch, as the server's `type` parameter names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `type=documents`.
    Documents,
    /// `type=array`.
    Array,
    /// `type=` (header line, then rows).
    HeaderLine,
}

impl Layout {
    /// The value of the `type` parameter.
    pub fn type_param(self) -> &'static str {
        match self {
            Layout::Documents => "documents",
            Layout::Array => "array",
            Layout::HeaderLine => "",
        }
    }
}

/// One request body.
#[derive(Debug)]
pub struct Batch {
    /// The body.
    pub body: Vec<u8>,
    /// Its layout.
    pub layout: Layout,
    /// The input line of each record.
    pub lines: Vec<u64>,
}

/// Where batches go; returns false to stop reading (the import is being abandoned).
pub type Sink<'a> = dyn FnMut(Batch) -> bool + 'a;

fn record_too_long(line: u64) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("line {line}: a record is longer than {RECORD_LEN_MAX} bytes"),
    )
}

/// JSON Lines: each non-blank line is a record.
pub fn json_lines(
    mut input: impl BufRead,
    batch_size: usize,
    sink: &mut Sink<'_>,
) -> io::Result<()> {
    let mut body = Vec::with_capacity(batch_size + 4096);
    let mut lines = Vec::new();
    let mut line = 0u64;
    loop {
        let start = body.len();
        let n = input.read_until(b'\n', &mut body)?;
        if n == 0 {
            break;
        }
        line += 1;
        if n > RECORD_LEN_MAX {
            return Err(record_too_long(line));
        }
        if body[start..].iter().all(u8::is_ascii_whitespace) {
            body.truncate(start);
            continue;
        }
        if body.last() != Some(&b'\n') {
            body.push(b'\n');
        }
        if body.len() > batch_size && start > 0 {
            // The record does not fit: it starts the next batch.
            if !sink(cut_batch(
                &mut body,
                start,
                &[],
                Layout::Documents,
                &mut lines,
            )) {
                return Ok(());
            }
        }
        lines.push(line);
    }
    if !lines.is_empty() {
        sink(Batch {
            body,
            layout: Layout::Documents,
            lines,
        });
    }
    Ok(())
}

/// Cuts the full batch off `body` at `start`, where the record that did not fit begins: the
/// returned batch holds everything before it with its `lines`, and `body` keeps `prefix` (the
/// header line of the header-line format, or nothing) followed by that record.
fn cut_batch(
    body: &mut Vec<u8>,
    start: usize,
    prefix: &[u8],
    layout: Layout,
    lines: &mut Vec<u64>,
) -> Batch {
    let record = body.split_off(start);
    let mut next = Vec::with_capacity(prefix.len() + record.len());
    next.extend_from_slice(prefix);
    next.extend_from_slice(&record);
    Batch {
        body: std::mem::replace(body, next),
        layout,
        lines: std::mem::take(lines),
    }
}

/// One JSON array: its elements are the records.
pub fn json_array(mut input: impl Read, batch_size: usize, sink: &mut Sink<'_>) -> io::Result<()> {
    let mut splitter = ArraySplitter::new(RECORD_LEN_MAX);
    let mut body = Vec::with_capacity(batch_size + 4096);
    let mut lines = Vec::new();
    let mut stopped = false;
    let mut chunk = vec![0u8; 256 << 10];
    let mut emit = |element: &[u8], line: u64| -> Result<(), SplitError> {
        if stopped {
            return Ok(());
        }
        if !lines.is_empty() && body.len() + element.len() + 2 > batch_size {
            body.push(b']');
            let full = Batch {
                body: std::mem::take(&mut body),
                layout: Layout::Array,
                lines: std::mem::take(&mut lines),
            };
            stopped = !sink(full);
        }
        body.push(if lines.is_empty() { b'[' } else { b',' });
        body.extend_from_slice(element);
        lines.push(line);
        Ok(())
    };
    loop {
        let n = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        splitter.feed(&chunk[..n], &mut emit).map_err(split_error)?;
    }
    splitter.finish().map_err(split_error)?;
    if !lines.is_empty() && !stopped {
        body.push(b']');
        sink(Batch {
            body,
            layout: Layout::Array,
            lines,
        });
    }
    Ok(())
}

fn split_error(e: SplitError) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

/// CSV or TSV: the first record is the header; every batch starts with it.
pub fn delimited(
    input: impl BufRead,
    dialect: Dialect,
    batch_size: usize,
    sink: &mut Sink<'_>,
) -> io::Result<()> {
    let mut reader = RecordReader::new(input, dialect, RECORD_LEN_MAX);
    let mut fields: Vec<Field> = Vec::new();
    if reader.next_record(&mut fields)?.is_none() {
        return Ok(());
    }
    let mut header = Vec::new();
    csv::write_header(&fields, &mut header);
    let mut body = header.clone();
    let mut lines = Vec::new();
    while let Some(line) = reader.next_record(&mut fields)? {
        let start = body.len();
        csv::write_row(&fields, &mut body);
        if body.len() - start > RECORD_LEN_MAX {
            return Err(record_too_long(line));
        }
        if body.len() > batch_size
            && !lines.is_empty()
            && !sink(cut_batch(
                &mut body,
                start,
                &header,
                Layout::HeaderLine,
                &mut lines,
            ))
        {
            return Ok(());
        }
        lines.push(line);
    }
    if !lines.is_empty() {
        sink(Batch {
            body,
            layout: Layout::HeaderLine,
            lines,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(run: impl FnOnce(&mut Sink<'_>) -> io::Result<()>) -> Vec<Batch> {
        let mut out = Vec::new();
        run(&mut |b| {
            out.push(b);
            true
        })
        .unwrap();
        out
    }

    #[test]
    fn json_lines_batches_keep_records_whole_and_know_their_lines() {
        let text = "{\"a\":1}\n\n{\"a\":2}\r\n   \n{\"a\":3}";
        let batches = collect(|s| json_lines(text.as_bytes(), 16, s));
        let bodies: Vec<&str> = batches
            .iter()
            .map(|b| std::str::from_utf8(&b.body).unwrap())
            .collect();
        assert_eq!(bodies, ["{\"a\":1}\n", "{\"a\":2}\r\n", "{\"a\":3}\n"]);
        let lines: Vec<&[u64]> = batches.iter().map(|b| b.lines.as_slice()).collect();
        assert_eq!(lines, [&[1][..], &[3], &[5]]);
        let one = collect(|s| json_lines(text.as_bytes(), 1 << 20, s));
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].lines, [1, 3, 5]);
    }

    #[test]
    fn arrays_become_smaller_arrays() {
        let text = "[\n {\"a\": 1},\n {\"a\": 2},\n {\"a\": 3}\n]\n";
        let batches = collect(|s| json_array(text.as_bytes(), 20, s));
        let bodies: Vec<&str> = batches
            .iter()
            .map(|b| std::str::from_utf8(&b.body).unwrap())
            .collect();
        assert_eq!(bodies, ["[{\"a\": 1},{\"a\": 2}]", "[{\"a\": 3}]"]);
        assert_eq!(batches[0].lines, [2, 3]);
        assert_eq!(batches[1].lines, [4]);
        assert!(collect(|s| json_array(&b"[]"[..], 20, s)).is_empty());
        let mut sink = |_: Batch| true;
        assert!(json_array(&b"[1,"[..], 20, &mut sink).is_err());
    }

    #[test]
    fn delimited_batches_repeat_the_header() {
        let text = "_key,n\na,1\nb,2\n";
        let batches = collect(|s| delimited(text.as_bytes(), Dialect::Csv(b','), 20, s));
        let bodies: Vec<&str> = batches
            .iter()
            .map(|b| std::str::from_utf8(&b.body).unwrap())
            .collect();
        assert_eq!(
            bodies,
            [
                "[\"_key\",\"n\"]\n[\"a\",1]\n",
                "[\"_key\",\"n\"]\n[\"b\",2]\n"
            ]
        );
        assert_eq!(batches[1].lines, [3]);
    }
}
