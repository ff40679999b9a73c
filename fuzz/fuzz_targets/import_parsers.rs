//! Fuzz target: the import parsers — the JSON Lines and array splitters of
//! `crates/import/src/split.rs`, the server's streaming import (`crates/api/src/import/`:
//! `decode.rs` undoes the Content-Encoding, `records.rs` cuts records, `convert.rs` turns them
//! into documents, `writer.rs` writes them into a real collection), and the loader's side
//! (`quince import`: `crates/import/src/batch.rs` and the CSV/TSV reader of `csv.rs`).
//!
//! What it is: the first byte picks the part (low two bits):
//! - 0 and 1: `[0|1][max_len selector][cut count: u8][cuts: u16 each][bytes]`: the
//!   `LineSplitter` (0) or `ArraySplitter` (1) on the bytes, fed whole and fed in the pieces
//!   the cuts make;
//! - 2: `[2][options][encoding][cut count: u8][cuts: u16 each][body]`: one import of the
//!   body, cut into frames at the cuts, into collection `c` or the edge collection `e` of a
//!   fixture server (see `quince_fuzz::server`). The options byte picks `type` (documents,
//!   array, auto, the header-line format), the collection, `complete`, `details`,
//!   `onDuplicate` and `ignoreMissing`; the encoding byte picks the `Content-Encoding` (the
//!   harness compresses the body, or with bit 2 claims the encoding for the raw bytes),
//!   `overwrite`, the `_from`/`_to` prefixes, `overwriteCollectionPrefix`, a 256-byte size
//!   bound and `waitForSync`;
//! - 3: `[3][mode][batch size selector][bytes]`: the loader cutting the bytes into request
//!   bodies, as JSON Lines, a JSON array, CSV (with one of four separators) or TSV (see
//!   `quince_fuzz::loader`).
//!
//! What it is not: the pipeline in front of the import (`request_pipeline` covers that:
//! credentials, database prefix, declared length), a check of what was written, or the
//! loader's HTTP client.
//!
//! Invariants checked: no panic; the splitters hold at most `max_len` bytes of an unfinished
//! line, emit the same records however the input is cut (unless a record is too long, which
//! the bound decides per chunk by design), match a plain split at `\n`, and cut a valid JSON
//! array into exactly its elements; an import answers 201 with
//! `created + errors + empty + updated + ignored` equal to the number of records in the body,
//! or an error with ArangoDB's shape; the loader puts every record in exactly one batch, in
//! order, and writes CSV/TSV rows the server's JSON parser accepts (the list is in
//! `quince_fuzz::loader`).

#![no_main]

use std::io::Write;
use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use libfuzzer_sys::fuzz_target;
use quince_api::permission::Caller;
use quince_api::reply_budget::ReplyLimits;
use quince_api::ApiRequest;
use quince_fuzz::server::{assert_error_shape, Server};
use quince_fuzz::{ChunkedBody, Input};
use quince_import::split::{ArraySplitter, LineSplitter, SplitError};
use serde_json::Value;

/// The import's record bound (`records::RECORD_LEN_MAX`).
const RECORD_LEN_MAX: usize = 64 << 20;

/// Imports served by one server before it is rebuilt (its collections only grow).
const IMPORTS_PER_SERVER: u64 = 2000;

fuzz_target!(|data: &[u8]| {
    let mut input = Input::new(data);
    let part = input.u8() & 0b11;
    match part {
        0 | 1 => {
            let max_len = [8, 64, 1024, RECORD_LEN_MAX][usize::from(input.u8() & 3)];
            let cuts = cuts(&mut input);
            let bytes = input.rest();
            if part == 0 {
                lines(bytes, &cuts, max_len);
            } else {
                array(bytes, &cuts, max_len);
            }
        }
        2 => import(&mut input),
        _ => {
            let mode = input.u8();
            let batch_size = [16, 64, 256, 1 << 20][usize::from(input.u8() & 3)];
            quince_fuzz::loader::check(input.rest(), mode, batch_size);
        }
    }
});

fn cuts(input: &mut Input<'_>) -> Vec<usize> {
    let n = input.u8() & 0x0f;
    (0..n).map(|_| usize::from(input.u16())).collect()
}

fn pieces<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut offsets: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    offsets.sort_unstable();
    let mut out = Vec::new();
    let mut start = 0;
    for end in offsets.into_iter().chain(std::iter::once(bytes.len())) {
        out.push(&bytes[start..end]);
        start = end;
    }
    out
}

/// Records (and the error) of a `LineSplitter` fed `chunks`.
fn split_lines(chunks: &[&[u8]], max_len: usize) -> (Vec<Vec<u8>>, Result<(), SplitError>) {
    let mut splitter = LineSplitter::new(max_len);
    let mut out = Vec::new();
    for chunk in chunks {
        let fed = splitter.feed(chunk, &mut |line: &[u8]| {
            out.push(line.to_vec());
            Ok::<_, SplitError>(())
        });
        assert!(
            splitter.pending() <= max_len,
            "a line splitter holds past its bound"
        );
        if let Err(e) = fed {
            return (out, Err(e));
        }
    }
    let finished = splitter.finish(&mut |line: &[u8]| {
        out.push(line.to_vec());
        Ok::<_, SplitError>(())
    });
    (out, finished)
}

fn lines(bytes: &[u8], cuts: &[usize], max_len: usize) {
    let whole = split_lines(&[bytes], max_len);
    let cut = split_lines(&pieces(bytes, cuts), max_len);
    let too_long = |r: &Result<(), SplitError>| matches!(r, Err(SplitError::TooLong { .. }));
    if too_long(&whole.1) || too_long(&cut.1) {
        return;
    }
    assert_eq!(
        whole, cut,
        "the line splitter depends on how its input is cut"
    );
    assert!(whole.1.is_ok());
    let mut expected: Vec<Vec<u8>> = bytes.split(|b| *b == b'\n').map(<[u8]>::to_vec).collect();
    if expected.last().is_some_and(Vec::is_empty) {
        expected.pop();
    }
    assert_eq!(
        whole.0, expected,
        "the line splitter differs from a split at \\n"
    );
}

/// Elements with their lines (and the error) of an `ArraySplitter` fed `chunks`.
type Elements = (Vec<(Vec<u8>, u64)>, Result<(), SplitError>);

fn split_array(chunks: &[&[u8]], max_len: usize) -> Elements {
    let mut splitter = ArraySplitter::new(max_len);
    let mut out = Vec::new();
    for chunk in chunks {
        let fed = splitter.feed(chunk, &mut |element: &[u8], line| {
            out.push((element.to_vec(), line));
            Ok::<_, SplitError>(())
        });
        if let Err(e) = fed {
            return (out, Err(e));
        }
    }
    let finished = splitter.finish();
    (out, finished)
}

fn array(bytes: &[u8], cuts: &[usize], max_len: usize) {
    let whole = split_array(&[bytes], max_len);
    let cut = split_array(&pieces(bytes, cuts), max_len);
    let too_long = |r: &Result<(), SplitError>| matches!(r, Err(SplitError::TooLong { .. }));
    if too_long(&whole.1) || too_long(&cut.1) {
        return;
    }
    assert_eq!(
        whole, cut,
        "the array splitter depends on how its input is cut"
    );
    // A valid array (within the server's depth bound, no duplicate names) splits into exactly
    // its elements.
    let Ok(Value::Array(items)) = quince_model::json::parse(bytes, 64) else {
        return;
    };
    assert!(whole.1.is_ok(), "a valid array refused: {:?}", whole.1);
    assert_eq!(whole.0.len(), items.len(), "element count of a valid array");
    for ((element, _), item) in whole.0.iter().zip(&items) {
        let parsed = quince_model::json::parse(element, 64);
        assert!(
            matches!(&parsed, Ok(v) if v == item),
            "element {:?} is not {item}",
            String::from_utf8_lossy(element)
        );
    }
}

/// The body layouts of `type`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Documents,
    Array,
    Auto,
    HeaderLine,
}

fn import(input: &mut Input<'_>) {
    // A static, not a thread-local: statics are never dropped, so the runtime is not torn
    // down while the process exits.
    static SERVER: Mutex<Option<Server>> = Mutex::new(None);
    let options = input.u8();
    let encoding = input.u8();
    let cuts = cuts(input);
    let plain = input.rest();

    let layout = [
        Layout::Documents,
        Layout::Array,
        Layout::Auto,
        Layout::HeaderLine,
    ][usize::from(options & 3)];
    let mut query = vec![(
        "collection".to_string(),
        if options & 4 != 0 { "e" } else { "c" }.to_string(),
    )];
    match layout {
        Layout::Documents => query.push(("type".into(), "documents".into())),
        Layout::Array => query.push(("type".into(), "array".into())),
        Layout::Auto => query.push(("type".into(), "auto".into())),
        Layout::HeaderLine => {}
    }
    let complete = options & 8 != 0;
    let flag = |q: &mut Vec<(String, String)>, on: bool, name: &str| {
        if on {
            q.push((name.to_string(), "true".to_string()));
        }
    };
    flag(&mut query, complete, "complete");
    flag(&mut query, options & 16 != 0, "details");
    let on_duplicate = ["error", "update", "replace", "ignore"][usize::from((options >> 5) & 3)];
    query.push(("onDuplicate".into(), on_duplicate.into()));
    flag(&mut query, options & 128 != 0, "ignoreMissing");
    flag(&mut query, encoding & 8 != 0, "overwrite");
    if encoding & 16 != 0 {
        query.push(("fromPrefix".into(), "c".into()));
        query.push(("toPrefix".into(), "c/".into()));
    }
    flag(&mut query, encoding & 32 != 0, "overwriteCollectionPrefix");
    flag(&mut query, encoding & 128 != 0, "waitForSync");
    let limit = if encoding & 64 != 0 { 256 } else { 16 << 20 };

    let claimed_only = encoding & 4 != 0;
    let (name, body) = match (encoding & 3, claimed_only) {
        (0, _) => (None, plain.to_vec()),
        (1, true) => (Some("gzip"), plain.to_vec()),
        (_, true) => (Some("deflate"), plain.to_vec()),
        (1, false) => (Some("gzip"), compress_gzip(plain)),
        (2, false) => (Some("deflate"), compress_zlib(plain)),
        (_, false) => (Some("deflate"), compress_raw(plain)),
    };
    let mut headers = HeaderMap::new();
    if let Some(name) = name {
        headers.insert(
            http::header::CONTENT_ENCODING,
            HeaderValue::from_static(name),
        );
    }
    // The records the body holds, when the harness knows the decoded body.
    let records = (!claimed_only).then(|| count_records(plain, layout));

    {
        let mut slot = SERVER.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_none_or(|s| s.served >= IMPORTS_PER_SERVER) {
            *slot = None;
            *slot = Some(Server::new());
        }
        let server = slot.as_mut().expect("built above");
        server.served += 1;
        let req = ApiRequest {
            method: Method::POST,
            database: server.catalog.database("_system").expect("_system exists"),
            path: "/_api/import".to_string(),
            suffix: Vec::new(),
            query,
            headers,
            body: Bytes::new(),
            user: Caller::superuser(),
            json_depth_max: quince_api::limits::JSON_DEPTH_MAX_DEFAULT,
            replies: ReplyLimits::new(quince_api::limits::REPLY_SIZE_MAX_DEFAULT),
        };
        let body = ChunkedBody::new(&body, &cuts);
        let reply = server
            .runtime
            .block_on(quince_api::fuzzing::import_stream(req, body, limit));
        let reply = match reply {
            Ok(reply) => reply,
            Err(e) => panic!("the import handler renders its errors itself: {e}"),
        };
        let status = reply.status.as_u16();
        if status >= 400 {
            assert_error_shape(status, &reply.body);
        } else {
            check_counts(status, &reply.body, records);
        }
    }
}

/// A successful import answers 201 and counts every record of the body once.
fn check_counts(status: u16, body: &[u8], records: Option<Option<u64>>) {
    assert_eq!(status, 201, "{:?}", String::from_utf8_lossy(body));
    let counts: Value = serde_json::from_slice(body).expect("a JSON import reply");
    let sum: u64 = ["created", "errors", "empty", "updated", "ignored"]
        .iter()
        .map(|k| counts[k].as_u64().expect("a count"))
        .sum();
    if let Some(Some(records)) = records {
        assert_eq!(sum, records, "counts {counts} for {records} records");
    }
}

/// The records of a decoded body as the server counts them (`None` when the layout cannot be
/// split, in which case the import must fail).
fn count_records(body: &[u8], layout: Layout) -> Option<u64> {
    let is_blank = |line: &[u8]| {
        line.iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | 0x08 | 0x0c))
    };
    let lines = |body: &[u8]| -> Vec<Vec<u8>> {
        let (mut lines, _) = split_lines(&[body], RECORD_LEN_MAX);
        // A last line of whitespace is the end of the body, not an empty line (records.rs);
        // a body ending with `\n` has no such line.
        if !body.ends_with(b"\n") && lines.last().is_some_and(|l| is_blank(l)) {
            lines.pop();
        }
        lines
    };
    match layout {
        Layout::Documents => Some(lines(body).len() as u64),
        Layout::Array => {
            let (elements, result) = split_array(&[body], RECORD_LEN_MAX);
            result.ok().map(|()| elements.len() as u64)
        }
        Layout::Auto => match body.iter().find(|b| !b.is_ascii_whitespace()) {
            None => Some(0),
            Some(b'[') => count_records(body, Layout::Array),
            Some(_) => count_records(body, Layout::Documents),
        },
        Layout::HeaderLine => {
            let all = lines(body);
            let header = all.iter().position(|l| !is_blank(l))?;
            Some((all.len() - header - 1) as u64)
        }
    }
}

fn compress_gzip(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(plain).expect("in memory");
    e.finish().expect("in memory")
}

fn compress_zlib(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(plain).expect("in memory");
    e.finish().expect("in memory")
}

fn compress_raw(plain: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(plain).expect("in memory");
    e.finish().expect("in memory")
}
