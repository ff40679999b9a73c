//! From the decoded body, in chunks, to records: lines of JSON Lines, elements of one JSON
//! array, or rows of the header-line format, each handed to the [`Writer`] in order.
//!
//! What it is: [`Parser`], a small state machine over the body's layout. `type=auto` waits for
//! the first byte that is not whitespace (`[` means an array, anything else JSON Lines); the
//! header-line format reads its first non-empty line as the attribute names. Positions follow
//! ArangoDB: the 1-based line number for JSON Lines (empty lines included), the 1-based element
//! number for arrays, and for rows the number after the header plus the `line` parameter.
//!
//! What it is not: JSON parsing of records (`convert`) or writing (`writer`).
//!
//! Invariants: bytes are handed on as they arrive; no record longer than [`RECORD_LEN_MAX`] is
//! buffered (413 instead); a body that cannot be the declared layout at all (not an array,
//! no header line) is a request error, while a record that is not a document is that
//! record's error.

use quince_errors::{ArangoError, Result};
use quince_errors::{HTTP_BAD_PARAMETER, HTTP_CORRUPTED_JSON, HTTP_REQUEST_ENTITY_TOO_LARGE};
use quince_import::split::{ArraySplitter, LineSplitter, SplitError};
use serde_json::Value;

use super::convert::{Conversion, RecordKind};
use super::options::Format;
use super::writer::Writer;

/// The longest record (line or array element) of an import, in bytes.
pub(crate) const RECORD_LEN_MAX: usize = 64 << 20;

/// An error while splitting: the splitters speak [`SplitError`], everything else
/// [`ArangoError`].
struct Failure(ArangoError);

impl From<SplitError> for Failure {
    fn from(e: SplitError) -> Failure {
        Failure(match e {
            SplitError::TooLong { max_len } => ArangoError::with_message(
                HTTP_REQUEST_ENTITY_TOO_LARGE,
                format!("a record of the import is longer than {max_len} bytes"),
            ),
            SplitError::NotAnArray => ArangoError::with_message(
                HTTP_BAD_PARAMETER,
                "expecting a JSON array in the request",
            ),
            malformed @ SplitError::Malformed { .. } => {
                ArangoError::with_message(HTTP_CORRUPTED_JSON, malformed.to_string())
            }
        })
    }
}

impl From<ArangoError> for Failure {
    fn from(e: ArangoError) -> Failure {
        Failure(e)
    }
}

/// Where the parser is.
enum Stage {
    /// `type=auto`, nothing but whitespace seen yet (held here).
    Detect(Vec<u8>),
    /// JSON Lines.
    Lines(LineSplitter),
    /// One JSON array.
    Array(ArraySplitter),
    /// The header-line format (the names are in the conversion once read).
    Rows(LineSplitter),
}

/// Splits a body into records and hands them to a writer.
pub(crate) struct Parser {
    stage: Stage,
    /// Records seen so far: lines (JSON Lines, rows after the header) or elements.
    records: u64,
    /// The `line` parameter: added to row numbers.
    line_offset: u64,
}

impl Parser {
    /// A parser for a body of this layout.
    pub fn new(format: Format, line_offset: u64) -> Parser {
        let stage = match format {
            Format::Documents => Stage::Lines(LineSplitter::new(RECORD_LEN_MAX)),
            Format::Array => Stage::Array(ArraySplitter::new(RECORD_LEN_MAX)),
            Format::Auto => Stage::Detect(Vec::new()),
            Format::HeaderLine => Stage::Rows(LineSplitter::new(RECORD_LEN_MAX)),
        };
        Parser {
            stage,
            records: 0,
            line_offset,
        }
    }

    /// Feeds the next decoded bytes.
    pub fn feed(
        &mut self,
        bytes: &[u8],
        conversion: &mut Conversion,
        writer: &mut Writer,
    ) -> Result<()> {
        if let Stage::Detect(held) = &mut self.stage {
            let Some(first) = bytes.iter().find(|b| !b.is_ascii_whitespace()) else {
                if held.len() + bytes.len() > RECORD_LEN_MAX {
                    return Err(Failure::from(SplitError::TooLong {
                        max_len: RECORD_LEN_MAX,
                    })
                    .0);
                }
                held.extend_from_slice(bytes);
                return Ok(());
            };
            let held = std::mem::take(held);
            self.stage = if *first == b'[' {
                Stage::Array(ArraySplitter::new(RECORD_LEN_MAX))
            } else {
                Stage::Lines(LineSplitter::new(RECORD_LEN_MAX))
            };
            self.feed(&held, conversion, writer)?;
        }
        let records = &mut self.records;
        let result = match &mut self.stage {
            Stage::Detect(_) => unreachable!("decided above"),
            Stage::Lines(splitter) => splitter.feed(bytes, &mut |line: &[u8]| {
                json_line(line, records, conversion, writer)
            }),
            Stage::Array(splitter) => splitter.feed(bytes, &mut |element: &[u8], _line| {
                *records += 1;
                record(element, RecordKind::Object, *records, conversion, writer)
            }),
            Stage::Rows(splitter) => {
                let offset = self.line_offset;
                splitter.feed(bytes, &mut |line: &[u8]| {
                    row_line(line, records, offset, conversion, writer)
                })
            }
        };
        result.map_err(|f| f.0)
    }

    /// Ends the body: the last line without a newline, and the checks of a complete layout.
    pub fn finish(&mut self, conversion: &mut Conversion, writer: &mut Writer) -> Result<()> {
        let records = &mut self.records;
        let offset = self.line_offset;
        let result = match &mut self.stage {
            // Nothing but whitespace: no documents.
            Stage::Detect(_) => Ok(()),
            Stage::Lines(splitter) => splitter.finish(&mut |line: &[u8]| {
                // A last line of whitespace is the end of the body, not an empty line.
                if is_blank(line) {
                    return Ok(());
                }
                json_line(line, records, conversion, writer)
            }),
            Stage::Array(splitter) => splitter.finish().map_err(Failure::from),
            Stage::Rows(splitter) => {
                let header_seen = conversion.header.is_some();
                let last = splitter.finish(&mut |line: &[u8]| {
                    if is_blank(line) {
                        return Ok(());
                    }
                    if conversion.header.is_none() {
                        return Err(Failure(no_values_line()));
                    }
                    row_line(line, records, offset, conversion, writer)
                });
                match last {
                    Ok(()) if !header_seen => Err(Failure(no_values_line())),
                    other => other,
                }
            }
        };
        result.map_err(|f| f.0)
    }
}

/// ArangoDB's error for a header-line body without a line after the header.
fn no_values_line() -> ArangoError {
    ArangoError::with_message(HTTP_BAD_PARAMETER, "no JSON array found in second line")
}

/// True for a line of nothing but whitespace (ArangoDB also skips backspace and form feed).
fn is_blank(line: &[u8]) -> bool {
    line.iter()
        .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x08 | 0x0c))
}

/// One line of JSON Lines.
fn json_line(
    line: &[u8],
    records: &mut u64,
    conversion: &Conversion,
    writer: &mut Writer,
) -> Result<(), Failure> {
    *records += 1;
    if is_blank(line) {
        writer.empty();
        return Ok(());
    }
    record(line, RecordKind::Object, *records, conversion, writer)
}

/// One line of the header-line format: the header first, then rows.
fn row_line(
    line: &[u8],
    records: &mut u64,
    offset: u64,
    conversion: &mut Conversion,
    writer: &mut Writer,
) -> Result<(), Failure> {
    if conversion.header.is_none() {
        if is_blank(line) {
            return Ok(());
        }
        conversion.header = Some(header_names(line, conversion.depth_max)?);
        return Ok(());
    }
    *records += 1;
    if is_blank(line) {
        writer.empty();
        return Ok(());
    }
    record(
        line,
        RecordKind::Values,
        offset + *records,
        conversion,
        writer,
    )
}

/// The attribute names of a header line: a JSON array of strings.
fn header_names(line: &[u8], depth_max: usize) -> Result<Vec<String>, Failure> {
    let refused = || {
        Failure(ArangoError::with_message(
            HTTP_BAD_PARAMETER,
            "no JSON string array found in first line",
        ))
    };
    let Ok(Value::Array(items)) = quince_model::json::parse(line, depth_max) else {
        return Err(refused());
    };
    items
        .into_iter()
        .map(|item| match item {
            Value::String(name) => Ok(name),
            _ => Err(refused()),
        })
        .collect()
}

/// Converts one record and hands the result to the writer.
fn record(
    raw: &[u8],
    kind: RecordKind,
    position: u64,
    conversion: &Conversion,
    writer: &mut Writer,
) -> Result<(), Failure> {
    match conversion.document(kind, raw, position) {
        Ok(doc) => writer.document(doc, kind, raw, conversion)?,
        Err(invalid) => writer.invalid(invalid)?,
    }
    Ok(())
}
