//! The client side of imports, for `import_parsers`: the producers of `quince import`
//! (`quince_import::batch`: [`json_lines`], [`json_array`], and [`delimited`] over the CSV/TSV
//! reader of `quince_import::csv`), which cut an input file into request bodies.
//!
//! What it is: [`check`], which runs one producer over fuzz bytes and checks its batches
//! against what the input holds, read independently: the non-blank lines, the elements an
//! [`ArraySplitter`] finds, the records a [`RecordReader`] reads.
//!
//! What it is not: the sending of batches or the reading of replies (`cli`, `report`), nor the
//! server's side of an import (the other parts of `import_parsers`).
//!
//! Invariants checked: every record lands in exactly one batch, in input order, with its
//! 1-based input line (lines only grow, and strictly but for array elements); a batch holds at least one record and exceeds the batch size only when
//! it holds one; a producer told to stop delivers nothing more; a CSV or TSV record written
//! back (every field quoted, `""` for a quote) reads back to the same texts; every header and
//! row the CSV/TSV conversion writes is a JSON array the server's parser accepts, with one
//! value per field, and a quoted field stays the string it was.

use std::io;

use quince_import::batch::{delimited, json_array, json_lines, Batch, Layout, RECORD_LEN_MAX};
use quince_import::csv::{write_header, write_row, Dialect, Field, RecordReader};
use quince_import::split::ArraySplitter;
use serde_json::Value;

/// The CSV separators the input can pick (two bits).
const SEPARATORS: [u8; 4] = [b',', b';', b'\t', b'|'];

/// The input kinds of `quince import`.
#[derive(Clone, Copy, Debug)]
enum Kind {
    JsonLines,
    JsonArray,
    Csv(u8),
    Tsv,
}

/// Runs the producer `mode` picks (low two bits: JSON Lines, JSON array, CSV, TSV; bits 2-3:
/// the CSV separator; bit 4: stop after the first batch) over `bytes` with `batch_size`, and
/// checks what it produced.
pub fn check(bytes: &[u8], mode: u8, batch_size: usize) {
    let kind = match mode & 3 {
        0 => Kind::JsonLines,
        1 => Kind::JsonArray,
        2 => Kind::Csv(SEPARATORS[usize::from((mode >> 2) & 3)]),
        _ => Kind::Tsv,
    };
    let stop_early = mode & 16 != 0;
    let mut batches: Vec<Batch> = Vec::new();
    let mut sink = |batch: Batch| {
        batches.push(batch);
        !stop_early
    };
    let result = match kind {
        Kind::JsonLines => json_lines(bytes, batch_size, &mut sink),
        Kind::JsonArray => json_array(bytes, batch_size, &mut sink),
        Kind::Csv(separator) => delimited(bytes, Dialect::Csv(separator), batch_size, &mut sink),
        Kind::Tsv => delimited(bytes, Dialect::Tsv, batch_size, &mut sink),
    };
    check_shape(&batches, kind, batch_size);
    if stop_early {
        assert!(batches.len() <= 1, "a producer told to stop went on");
        return;
    }
    match kind {
        Kind::JsonLines => check_lines(bytes, &batches, &result),
        Kind::JsonArray => check_array(bytes, &batches, &result),
        Kind::Csv(_) | Kind::Tsv => check_delimited(bytes, kind, &batches, &result),
    }
}

/// What holds for the batches of every producer.
fn check_shape(batches: &[Batch], kind: Kind, batch_size: usize) {
    let layout = match kind {
        Kind::JsonLines => Layout::Documents,
        Kind::JsonArray => Layout::Array,
        Kind::Csv(_) | Kind::Tsv => Layout::HeaderLine,
    };
    // Elements of an array can share a line; records of the other kinds cannot.
    let strictly = !matches!(kind, Kind::JsonArray);
    let mut previous = 0u64;
    for batch in batches {
        assert_eq!(batch.layout, layout);
        assert!(!batch.lines.is_empty(), "an empty batch");
        assert!(
            batch.body.len() <= batch_size || batch.lines.len() == 1,
            "a batch of {} records and {} bytes, over the batch size {batch_size}",
            batch.lines.len(),
            batch.body.len()
        );
        for &line in &batch.lines {
            assert!(
                line > previous || (!strictly && line == previous && line > 0),
                "line {line} after line {previous}"
            );
            previous = line;
        }
    }
}

/// JSON Lines: the batches are the non-blank lines, in order, each ending with `\n`.
fn check_lines(bytes: &[u8], batches: &[Batch], result: &io::Result<()>) {
    assert!(result.is_ok(), "JSON Lines refused: {result:?}");
    let mut body = Vec::new();
    let mut lines = Vec::new();
    for (at, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        body.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            body.push(b'\n');
        }
        lines.push(at as u64 + 1);
    }
    let sent: Vec<u8> = batches.iter().flat_map(|b| b.body.clone()).collect();
    let sent_lines: Vec<u64> = batches.iter().flat_map(|b| b.lines.clone()).collect();
    assert_eq!(
        sent, body,
        "the batches are not the input's non-blank lines"
    );
    assert_eq!(sent_lines, lines);
}

/// A JSON array: each batch is `[` + consecutive elements joined by `,` + `]`.
fn check_array(bytes: &[u8], batches: &[Batch], result: &io::Result<()>) {
    let mut splitter = ArraySplitter::new(RECORD_LEN_MAX);
    let mut elements: Vec<(Vec<u8>, u64)> = Vec::new();
    let split = splitter
        .feed(bytes, &mut |element: &[u8], line| {
            elements.push((element.to_vec(), line));
            Ok(())
        })
        .and_then(|()| splitter.finish());
    assert_eq!(split.is_ok(), result.is_ok(), "{split:?} vs {result:?}");
    if result.is_err() {
        return;
    }
    let mut rest = elements.as_slice();
    for batch in batches {
        let (these, after) = rest.split_at(batch.lines.len().min(rest.len()));
        rest = after;
        let mut expected = vec![b'['];
        for (i, (element, _)) in these.iter().enumerate() {
            if i > 0 {
                expected.push(b',');
            }
            expected.extend_from_slice(element);
        }
        expected.push(b']');
        assert_eq!(
            String::from_utf8_lossy(&batch.body),
            String::from_utf8_lossy(&expected)
        );
        let lines: Vec<u64> = these.iter().map(|(_, line)| *line).collect();
        assert_eq!(batch.lines, lines);
    }
    assert!(rest.is_empty(), "{} elements in no batch", rest.len());
}

/// The records of a CSV or TSV input, with the line each starts on.
fn read_records(bytes: &[u8], dialect: Dialect) -> io::Result<Vec<(u64, Vec<Field>)>> {
    let mut reader = RecordReader::new(bytes, dialect, RECORD_LEN_MAX);
    let mut records = Vec::new();
    let mut fields = Vec::new();
    while let Some(line) = reader.next_record(&mut fields)? {
        records.push((line, fields.clone()));
    }
    Ok(records)
}

/// CSV and TSV: the records, their conversion to JSON, and the header-line batches.
fn check_delimited(bytes: &[u8], kind: Kind, batches: &[Batch], result: &io::Result<()>) {
    let dialect = match kind {
        Kind::Csv(separator) => Dialect::Csv(separator),
        _ => Dialect::Tsv,
    };
    let records = read_records(bytes, dialect);
    assert_eq!(records.is_ok(), result.is_ok(), "{result:?}");
    let Ok(records) = records else {
        return;
    };
    check_round_trip(&records, dialect);
    let Some(((_, header_fields), rows)) = records.split_first() else {
        assert!(batches.is_empty());
        return;
    };
    let mut header = Vec::new();
    write_header(header_fields, &mut header);
    check_json_row(&header, header_fields, true);
    let mut expected_rows = Vec::new();
    for (_, fields) in rows {
        let start = expected_rows.len();
        write_row(fields, &mut expected_rows);
        check_json_row(&expected_rows[start..], fields, false);
    }
    let mut sent_rows = Vec::new();
    for batch in batches {
        let rows = batch.body.strip_prefix(header.as_slice());
        let rows = rows.expect("every header-line batch starts with the header");
        sent_rows.extend_from_slice(rows);
    }
    assert_eq!(
        String::from_utf8_lossy(&sent_rows),
        String::from_utf8_lossy(&expected_rows)
    );
    let sent_lines: Vec<u64> = batches.iter().flat_map(|b| b.lines.clone()).collect();
    let lines: Vec<u64> = rows.iter().map(|(line, _)| *line).collect();
    assert_eq!(sent_lines, lines);
}

/// Writes the records back (CSV: every field quoted; TSV: fields joined by tabs, when no field
/// holds a `\r`, which a TSV line cannot end its last field with) and reads them again.
fn check_round_trip(records: &[(u64, Vec<Field>)], dialect: Dialect) {
    let mut text = Vec::new();
    for (_, fields) in records {
        for (i, field) in fields.iter().enumerate() {
            match dialect {
                Dialect::Csv(separator) => {
                    if i > 0 {
                        text.push(separator);
                    }
                    text.push(b'"');
                    text.extend_from_slice(field.text.replace('"', "\"\"").as_bytes());
                    text.push(b'"');
                }
                Dialect::Tsv => {
                    if field.text.contains('\r') {
                        return;
                    }
                    if i > 0 {
                        text.push(b'\t');
                    }
                    text.extend_from_slice(field.text.as_bytes());
                }
            }
        }
        text.push(b'\n');
    }
    let again = match read_records(&text, dialect) {
        Ok(again) => again,
        Err(e) => panic!("records written back are refused: {e}"),
    };
    let texts = |r: &[(u64, Vec<Field>)]| -> Vec<Vec<String>> {
        r.iter()
            .map(|(_, f)| f.iter().map(|f| f.text.clone()).collect())
            .collect()
    };
    assert_eq!(
        texts(&again),
        texts(records),
        "records written back read otherwise"
    );
}

/// A header or row line: a JSON array the server accepts, one value per field; a quoted field
/// (and every header name) is the string it was.
fn check_json_row(line: &[u8], fields: &[Field], header: bool) {
    let json = line.strip_suffix(b"\n").expect("a line ends with \\n");
    let value = quince_model::json::parse(json, 2);
    let Ok(Value::Array(values)) = &value else {
        panic!(
            "{:?} is not a JSON array: {value:?}",
            String::from_utf8_lossy(json)
        );
    };
    assert_eq!(values.len(), fields.len());
    for (value, field) in values.iter().zip(fields) {
        if header || field.quoted {
            assert_eq!(value.as_str(), Some(field.text.as_str()));
        }
    }
}
