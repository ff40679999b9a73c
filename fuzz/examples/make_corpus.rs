//! Writes the seed corpus of every fuzz target into `fuzz/corpus/<target>/` (the files are
//! committed; run this again after changing a target's input layout or the storage format):
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example make_corpus
//! ```
//!
//! What it is: valid inputs in each target's layout (see the `//!` header of each target).
//! Journals, datafiles and hints are real: written by `Store` on `SimFileIo` and read back with
//! `SimFileIo::read_file`, starting from the same fixtures the target opens, so their file ids
//! match. Requests are valid requests against the fixture server's collections.
//!
//! What it is not: a regression corpus. Inputs that once crashed a target go in
//! `fuzz/regressions/<target>/`, by hand (see `fuzz/README.md`); this program never removes
//! files, so a seed dropped from it stays until it is deleted by hand.
//!
//! Invariants: deterministic (the same files every run); each target's seeds stay within tens
//! of kilobytes.

use std::io::Write;
use std::path::{Path, PathBuf};

use quince_fuzz::stores::{self, fixtures, put, remove};
use quince_storage::io::SimFileIo;

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    journal_recovery(&root.join("journal_recovery"));
    batch_multipart(&root.join("batch_multipart"));
    import_parsers(&root.join("import_parsers"));
    request_pipeline(&root.join("request_pipeline"));
    for target in [
        "journal_recovery",
        "batch_multipart",
        "import_parsers",
        "request_pipeline",
    ] {
        let dir = root.join(target);
        let (mut files, mut bytes) = (0, 0);
        for entry in std::fs::read_dir(&dir).expect("corpus directory") {
            files += 1;
            bytes += entry.expect("entry").metadata().expect("metadata").len();
        }
        println!("{target}: {files} files, {bytes} bytes");
    }
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("corpus directory");
    let path: PathBuf = dir.join(name);
    std::fs::write(&path, bytes).expect("write a seed");
}

fn with_prefix(prefix: &[u8], rest: &[&[u8]]) -> Vec<u8> {
    let mut out = prefix.to_vec();
    for part in rest {
        out.extend_from_slice(part);
    }
    out
}

fn u16le(len: usize) -> [u8; 2] {
    u16::try_from(len)
        .expect("seed files are small")
        .to_le_bytes()
}

fn file(io: &SimFileIo, name: &str) -> Vec<u8> {
    io.read_file(&stores::path(name))
        .unwrap_or_else(|| panic!("{name} exists: {:?}", io.paths()))
}

/// The fresh fixture's journal after a few writes of each kind.
fn written_journal() -> Vec<u8> {
    let io = fixtures().fresh.crash(0, false);
    let store = stores::open(&io, false).expect("the fresh fixture opens");
    put(&store, b"k1", 1, br#"{"_key":"k1","a":1}"#).unwrap();
    put(&store, b"k2", 2, br#"{"_key":"k2","s":"text"}"#).unwrap();
    put(&store, b"k1", 3, br#"{"_key":"k1","a":2}"#).unwrap();
    remove(&store, b"k2", 4).unwrap();
    store.write_meta(br#"{"count":1}"#).unwrap().wait().unwrap();
    put(&store, &[0xff; 40], 5, &[7; 300]).unwrap();
    store.close().unwrap();
    drop(store);
    file(&io, &fixtures().fresh_journal)
}

/// The fresh fixture's journal holding a truncate marker between writes.
fn truncated_journal() -> Vec<u8> {
    let io = fixtures().fresh.crash(0, false);
    let store = stores::open(&io, false).expect("the fresh fixture opens");
    put(&store, b"a", 1, b"1").unwrap();
    store.truncate(2, true).unwrap();
    put(&store, b"b", 3, b"2").unwrap();
    store.close().unwrap();
    drop(store);
    file(&io, &fixtures().fresh_journal)
}

/// The fresh fixture's journal holding transaction groups: a one-store transaction, then a
/// store's part of a transaction with another store (which holds the commit point), left at
/// the end of the log as a pending group.
fn grouped_journal() -> Vec<u8> {
    let io = fixtures().fresh.crash(0, false);
    let store = stores::open(&io, false).expect("the fresh fixture opens");
    let other = quince_storage::Store::create(
        std::sync::Arc::new(io.clone()),
        Path::new("/data/other"),
        stores::options(false),
    )
    .expect("a second store");
    let stage = |part: &mut quince_storage::Part<'_>, key: &[u8], rev: u64, value: &[u8]| {
        part.mutate(key, |_| {
            Ok::<_, quince_storage::StorageError>((
                quince_storage::Mutation::Put {
                    rev,
                    value: value.to_vec(),
                },
                (),
            ))
        })
        .unwrap()
    };
    let mut part = store.part(1);
    stage(&mut part, b"g1", 1, br#"{"_key":"g1"}"#);
    stage(&mut part, b"g2", 2, br#"{"_key":"g2"}"#);
    quince_storage::commit(10, vec![part]).unwrap();
    let (mut mine, mut theirs) = (store.part(1), other.part(2));
    stage(&mut mine, b"g1", 3, br#"{"_key":"g1","v":2}"#);
    stage(&mut theirs, b"o", 3, br#"{"_key":"o"}"#);
    quince_storage::commit(11, vec![mine, theirs]).unwrap();
    store.close().unwrap();
    drop(store);
    file(&io, &fixtures().fresh_journal)
}

/// A store whose first journal was sealed with many records: `datafile-1.db` and its hint.
fn big_datafile() -> (Vec<u8>, Vec<u8>) {
    let io = fixtures().fresh.crash(0, false);
    let store = stores::open(&io, false).expect("the fresh fixture opens");
    for i in 0..24u64 {
        let key = format!("key{i}");
        put(
            &store,
            key.as_bytes(),
            i + 1,
            format!("{{\"i\":{i}}}").as_bytes(),
        )
        .unwrap();
    }
    for i in (0..24u64).step_by(5) {
        remove(&store, format!("key{i}").as_bytes(), 100 + i).unwrap();
    }
    store.rotate().unwrap();
    store.close().unwrap();
    drop(store);
    // The fresh store's first journal became the datafile, as in the sealed fixture, so the
    // file ids match and the target can put these files in the sealed fixture's place.
    let datafile = fixtures().fresh_journal.replace("journal-", "datafile-");
    assert_eq!(
        datafile,
        fixtures().sealed_datafile,
        "the fixtures' file ids changed"
    );
    let hint = datafile.replace(".db", ".hint");
    (file(&io, &datafile), file(&io, &hint))
}

fn journal_recovery(dir: &Path) {
    let journal = written_journal();
    write(dir, "journal", &with_prefix(&[0], &[&journal]));
    write(dir, "journal-resealed", &with_prefix(&[4], &[&journal]));
    write(dir, "journal-salvage", &with_prefix(&[8], &[&journal]));
    let torn = &journal[..journal.len() - 13];
    write(dir, "journal-torn-tail", &with_prefix(&[0], &[torn]));
    let grouped = grouped_journal();
    write(dir, "journal-groups", &with_prefix(&[0], &[&grouped]));
    // Cut inside the last group: recovery cuts the group at its marker.
    let cut = &grouped[..grouped.len() - 50];
    write(dir, "journal-group-cut", &with_prefix(&[0], &[cut]));
    write(
        dir,
        "journal-zero-tail",
        &with_prefix(&[0], &[&journal, &[0; 64]]),
    );
    let mut flipped = journal.clone();
    let at = flipped.len() / 2;
    flipped[at] ^= 0x20;
    write(
        dir,
        "journal-flipped-salvage",
        &with_prefix(&[8], &[&flipped]),
    );
    write(
        dir,
        "journal-truncate",
        &with_prefix(&[0], &[&truncated_journal()]),
    );
    write(
        dir,
        "journal-fresh",
        &with_prefix(&[0], &[&file(&fixtures().fresh, &fixtures().fresh_journal)]),
    );

    let sealed = &fixtures().sealed;
    let (datafile, hint, sealed_journal) = (
        file(sealed, &fixtures().sealed_datafile),
        file(sealed, &fixtures().sealed_hint),
        file(sealed, &fixtures().sealed_journal),
    );
    let sealed_seed = |flags: u8| with_prefix(&[flags], &[&u16le(hint.len()), &hint, &datafile]);
    write(dir, "sealed", &sealed_seed(1));
    write(dir, "sealed-resealed", &sealed_seed(5));
    write(
        dir,
        "sealed-no-hint",
        &with_prefix(&[1], &[&u16le(0), &datafile]),
    );
    let all = |flags: u8| {
        with_prefix(
            &[flags],
            &[
                &u16le(hint.len()),
                &u16le(sealed_journal.len()),
                &hint,
                &sealed_journal,
                &datafile,
            ],
        )
    };
    write(dir, "all-files", &all(3));
    write(dir, "all-files-resealed", &all(7));
    let (big, big_hint) = big_datafile();
    write(
        dir,
        "sealed-big",
        &with_prefix(&[1], &[&u16le(big_hint.len()), &big_hint, &big]),
    );
    write(
        dir,
        "sealed-big-resealed",
        &with_prefix(&[5], &[&u16le(big_hint.len()), &big_hint, &big]),
    );

    write(dir, "decode-journal", &with_prefix(&[2], &[&journal]));
    write(dir, "decode-datafile", &with_prefix(&[6], &[&datafile]));
    write(dir, "decode-hint", &with_prefix(&[2], &[&hint]));
}

const ARANGOB: &[u8] = b"--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\n\r\nPOST /_api/document?collection=c HTTP/1.1\r\n\r\n{\"a\":1}\r\n--XXXarangob-benchmarkXXX\r\nContent-Type: application/x-arango-batchpart\r\nContent-Id: two\r\n\r\nGET /_api/version HTTP/1.1\r\nx-test: yes\r\nContent-Length: 0\r\n\r\n\r\n--XXXarangob-benchmarkXXX--\r\n";

const BATCH_LF: &[u8] = b"--b\nContent-Type: application/x-arango-batchpart; charset=utf-8\nContent-Id: 1\n\nPUT /_api/document/c/k1?returnOld=true HTTP/1.1\nContent-Type: application/json\nContent-Length: 9\n\n{\"a\":42}\n\n--b\nContent-Type: application/x-arango-batchpart\n\nDELETE /_api/document/c/k2\n\n--b--\n";

fn batch_multipart(dir: &Path) {
    let seed = |flags: u8, ct: &[u8], body: &[u8]| {
        let mut out = vec![flags, u8::try_from(ct.len()).expect("short content type")];
        out.extend_from_slice(ct);
        out.extend_from_slice(body);
        out
    };
    let ct = b"multipart/form-data; boundary=XXXarangob-benchmarkXXX";
    write(dir, "arangob-header", &seed(1, ct, ARANGOB));
    write(dir, "arangob-first-line", &seed(0, b"", ARANGOB));
    write(
        dir,
        "arangob-boundary-param",
        &seed(2, b"XXXarangob-benchmarkXXX", ARANGOB),
    );
    write(dir, "lf-only", &seed(2, b"b", BATCH_LF));
    write(
        dir,
        "quoted-boundary",
        &seed(
            1,
            b"multipart/form-data; charset=x; boundary=\"b\"",
            BATCH_LF,
        ),
    );
    write(dir, "empty-batch", &seed(2, b"b", b"--b--\r\n"));
}

fn import_parsers(dir: &Path) {
    let jsonl: &[u8] = b"{\"_key\":\"i1\",\"a\":1}\n{\"a\":[1,2,{\"b\":null}]}\n\n  \n{\"_key\":\"k1\"}\r\n[1]\nnot json\n{\"last\":true}";
    let array: &[u8] =
        b"[\n {\"_key\":\"j1\"},\n {\"s\":\"a,]\\\"}\"},\n 3, \"x\", null,\n [ {\"n\":[]} ]\n]\n";
    let rows: &[u8] =
        b"\n[\"_key\",\"a\",\"b\"]\n[\"r1\",1,null]\n\n[\"r2\",[2],{\"c\":3}]\n[\"r3\",1]\n";
    let edges: &[u8] =
        b"{\"_from\":\"k1\",\"_to\":\"c/k2\"}\n{\"_from\":1,\"_to\":\"x/2\"}\n{\"_to\":\"c/k1\"}\n";
    // Splitters: [part][max_len selector][cut count][cuts][bytes].
    let splitter = |part: u8, max_len: u8, cuts: &[u16], bytes: &[u8]| {
        let mut out = vec![part, max_len, u8::try_from(cuts.len()).unwrap()];
        for c in cuts {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out.extend_from_slice(bytes);
        out
    };
    write(dir, "lines-whole", &splitter(0, 3, &[], jsonl));
    write(dir, "lines-cut", &splitter(0, 2, &[3, 20, 21, 40], jsonl));
    write(dir, "lines-short-bound", &splitter(0, 1, &[10], jsonl));
    write(dir, "array-whole", &splitter(1, 3, &[], array));
    write(dir, "array-cut", &splitter(1, 2, &[1, 9, 17, 30], array));
    write(dir, "array-short-bound", &splitter(1, 0, &[5], array));
    // Imports: [part][options][encoding][cut count][cuts][body].
    let import = |options: u8, encoding: u8, cuts: &[u16], body: &[u8]| {
        let mut out = vec![2, options, encoding, u8::try_from(cuts.len()).unwrap()];
        for c in cuts {
            out.extend_from_slice(&c.to_le_bytes());
        }
        out.extend_from_slice(body);
        out
    };
    write(dir, "import-documents", &import(0, 0, &[], jsonl));
    write(
        dir,
        "import-documents-details-cut",
        &import(16, 0, &[7, 33], jsonl),
    );
    write(dir, "import-array-update", &import(1 | 32, 0, &[], array));
    write(dir, "import-auto-complete", &import(2 | 8, 0, &[], array));
    write(
        dir,
        "import-auto-lines-ignore",
        &import(2 | 96, 0, &[], jsonl),
    );
    write(dir, "import-header-line", &import(3 | 16, 0, &[], rows));
    write(
        dir,
        "import-header-line-missing",
        &import(3 | 128, 0, &[4], rows),
    );
    write(
        dir,
        "import-edges-prefix",
        &import(4 | 16, 16 | 32, &[], edges),
    );
    write(dir, "import-gzip", &import(0, 1, &[5], jsonl));
    write(dir, "import-zlib", &import(1, 2, &[], array));
    write(dir, "import-raw-deflate", &import(2, 3, &[], jsonl));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(jsonl).unwrap();
    write(
        dir,
        "import-claimed-gzip",
        &import(0, 1 | 4, &[9], &gz.finish().unwrap()),
    );
    write(
        dir,
        "import-overwrite-sync",
        &import(0, 8 | 128, &[], jsonl),
    );
    write(dir, "import-small-bound", &import(0, 64, &[], jsonl));
    // The loader: [3][mode][batch size selector][bytes]; mode 0 JSON Lines, 1 array, 2 CSV
    // (separator in bits 2-3), 3 TSV; bit 4 stops after the first batch.
    let csv: &[u8] = b"_key,a,\"b c\",d\r\nr1,1,\"x, \"\"y\"\"\",true\n\n\"r2\",,\"two\nlines\",1e999\nr3,-0.5,null,007\n";
    let semicolons: &[u8] = b"name;n\n\"a;b\";2\nc;\"\"\n";
    let tsv: &[u8] = b"_key\tv\tw\nt1\t1\t\"q\"\n\n  \nt2\t\tfalse\r\n";
    let loader = |mode: u8, size: u8, bytes: &[u8]| with_prefix(&[3, mode, size], &[bytes]);
    write(dir, "loader-lines", &loader(0, 0, jsonl));
    write(dir, "loader-array", &loader(1, 1, array));
    write(dir, "loader-csv", &loader(2, 1, csv));
    write(dir, "loader-csv-one-batch", &loader(2, 3, csv));
    write(dir, "loader-csv-semicolon", &loader(2 | 4, 0, semicolons));
    write(dir, "loader-tsv", &loader(3, 0, tsv));
    write(dir, "loader-stop-early", &loader(2 | 16, 0, csv));
}

fn request_pipeline(dir: &Path) {
    let requests: &[(&str, &str)] = &[
        ("version", "GET /_api/version?details=true\nauthorization: root\n\n"),
        ("version-db1", "GET /_db/db1/_api/version\nauthorization: super\n\n"),
        ("no-credentials", "GET /_api/version\n\n"),
        ("bad-basic", "GET /_api/collection\nauthorization: Basic cm9vdDp3cm9uZw==\n\n"),
        ("bad-bearer", "GET /_api/collection\nauthorization: bearer abc.def.ghi\n\n"),
        ("availability", "GET /_admin/server/availability\n\n"),
        ("insert", "POST /_api/document/c?returnNew=true\nauthorization: root\ncontent-type: application/json\n\n{\"a\":1,\"b\":{\"c\":[1,2,3]}}"),
        ("insert-many", "POST /_api/document/c?overwriteMode=update&silent=false\nauthorization: root\n\n[{\"_key\":\"n1\"},{\"_key\":\"k1\",\"x\":1},{\"_key\":\"bad key\"},3]"),
        ("insert-query-collection", "POST /_api/document?collection=c&waitForSync=true\nauthorization: super\n\n{\"_key\":\"q1\"}"),
        ("insert-edge", "POST /_api/document/e\nauthorization: root\n\n{\"_from\":\"c/k1\",\"_to\":\"c/k2\",\"w\":1}"),
        ("read", "GET /_api/document/c/k1\nauthorization: root\n\n"),
        ("read-if-none-match", "GET /_api/document/c/k1\nauthorization: root\nif-none-match: \"_abc\"\n\n"),
        ("head", "HEAD /_api/document/c/k1\nauthorization: root\n\n"),
        ("replace", "PUT /_api/document/c/k1?returnOld=true\nauthorization: root\n\n{\"a\":2}"),
        ("update-merge", "PATCH /_api/document/c/k2?keepNull=false&mergeObjects=true\nauthorization: root\nif-match: \"x\"\n\n{\"a\":[{\"b\":null}],\"n\":null}"),
        ("update-many", "PATCH /_api/document/c\nauthorization: root\n\n[{\"_key\":\"k1\",\"z\":1},{\"_key\":\"missing\"}]"),
        ("onlyget", "PUT /_api/document/c?onlyget=true\nauthorization: root\n\n[\"k1\",{\"_key\":\"k2\"},\"none\"]"),
        ("remove", "DELETE /_api/document/c/k2?returnOld=true\nauthorization: root\n\n"),
        ("remove-many", "DELETE /_api/document/c\nauthorization: root\n\n[\"k1\",{\"_key\":\"nope\"}]"),
        ("collection-create", "POST /_api/collection\nauthorization: root\n\n{\"name\":\"d2\",\"type\":2,\"waitForSync\":false,\"keyOptions\":{\"type\":\"autoincrement\",\"increment\":5}}"),
        ("collection-list", "GET /_api/collection?excludeSystem=true\nauthorization: root\n\n"),
        ("collection-properties", "GET /_api/collection/c/properties\nauthorization: root\n\n"),
        ("collection-figures", "GET /_api/collection/c/figures\nauthorization: root\n\n"),
        ("collection-count", "GET /_api/collection/e/count\nauthorization: root\n\n"),
        ("collection-set-properties", "PUT /_api/collection/c/properties\nauthorization: root\n\n{\"waitForSync\":true}"),
        ("collection-truncate", "PUT /_api/collection/e/truncate\nauthorization: root\n\n"),
        ("collection-checksum", "GET /_api/collection/c/checksum?withRevisions=true\nauthorization: root\n\n"),
        ("key-generators", "GET /_api/key-generators\nauthorization: root\n\n"),
        ("database-create", "POST /_api/database\nauthorization: root\n\n{\"name\":\"db2\",\"users\":[{\"username\":\"root\"}]}"),
        ("database-current", "GET /_db/db1/_api/database/current\nauthorization: root\n\n"),
        ("database-list", "GET /_api/database/user\nauthorization: root\n\n"),
        ("login", "POST /_open/auth\n\n{\"username\":\"root\",\"password\":\"pw\"}"),
        ("user-read", "GET /_api/user/root\nauthorization: root\n\n"),
        ("user-grants", "GET /_api/user/root/database?full=true\nauthorization: root\n\n"),
        ("echo", "POST /_admin/echo?x=1&y=%20z\nauthorization: root\nx-custom: v\n\n{\"echo\":true}"),
        ("status", "GET /_admin/status\nauthorization: root\n\n"),
        ("metrics", "GET /_admin/metrics/v2\nauthorization: super\n\n"),
        ("server-mode", "GET /_admin/server/mode\nauthorization: root\n\n"),
        ("time", "GET /_admin/time\nauthorization: root\n\n"),
        ("sleep", "GET /_admin/sleep?duration=2\nauthorization: root\n\n"),
        ("async-store", "GET /_api/version\nauthorization: root\nx-arango-async: store\n\n"),
        ("async-insert", "POST /_api/document/c\nauthorization: root\nx-arango-async: true\n\n{\"async\":1}"),
        ("jobs-pending", "GET /_api/job/pending?count=10\nauthorization: root\n\n"),
        ("jobs-done", "GET /_api/job/done\nauthorization: root\n\n"),
        ("job-fetch", "PUT /_api/job/12345\nauthorization: root\n\n"),
        ("jobs-delete", "DELETE /_api/job/expired?stamp=0\nauthorization: root\n\n"),
        ("import-documents", "POST /_api/import?collection=c&type=documents&details=true\nauthorization: root\n\n{\"_key\":\"i1\"}\n{\"a\":1}\n\nbad\n"),
        ("import-array-chunked", "POST /_api/import?collection=c&type=array&onDuplicate=replace\nauthorization: root\nx-fuzz-chunks: 2,9,15\n\n[{\"_key\":\"i2\"},{\"b\":[1,2]}]"),
        ("import-header-line", "POST /_api/import?collection=c&complete=true\nauthorization: root\n\n[\"_key\",\"v\"]\n[\"h1\",1]\n[\"h2\",{\"x\":1}]\n"),
        ("import-edges", "POST /_api/import?collection=e&type=auto&fromPrefix=c&toPrefix=c\nauthorization: root\n\n{\"_from\":\"k1\",\"_to\":\"k2\"}\n"),
        ("import-gzip", "POST /_api/import?collection=c&type=documents\nauthorization: root\nx-fuzz-encode: gzip\n\n{\"z\":1}\n{\"z\":2}\n"),
        ("insert-deflate", "POST /_api/document/c\nauthorization: root\nx-fuzz-encode: deflate\n\n{\"deflated\":true}"),
        ("insert-raw-deflate-chunked", "POST /_api/document/c\nauthorization: root\nx-fuzz-encode: raw\nx-fuzz-chunks: 4\n\n{\"raw\":true}"),
        ("insert-deep", "POST /_api/document/c\nauthorization: root\nx-fuzz-deep: 64\n\n{\"a\":1}"),
        ("collection-create-deep", "POST /_api/collection\nauthorization: super\nx-fuzz-deep: 70\n\n{\"name\":\"deep\"}"),
        ("smuggling", "POST /_api/document/c\nauthorization: root\ntransfer-encoding: chunked\ncontent-length: 7\n\n{\"a\":1}"),
        ("duplicate-attribute", "POST /_api/document/c\nauthorization: root\n\n{\"a\":1,\"a\":2}"),
        ("unknown-path", "GET /_api/nothing/here\nauthorization: root\n\n"),
        ("percent-path", "GET /_api/document/c/k%31\nauthorization: root\n\n"),
        ("bad-database", "GET /_db/nope/_api/version\nauthorization: root\n\n"),
        ("method-not-allowed", "PATCH /_api/version\nauthorization: root\n\n"),
    ];
    for (name, text) in requests {
        write(dir, name, text.as_bytes());
    }
    // Objects nested exactly as deep as the server's bound (64) allows, written out rather than
    // wrapped by the harness (`x-fuzz-deep` wraps in arrays).
    let deep = format!("{}1{}", "{\"a\":".repeat(64), "}".repeat(64));
    let deep = format!("POST /_api/document/c\nauthorization: root\n\n{deep}");
    write(dir, "insert-deep-object", deep.as_bytes());
    let mut batch = b"POST /_api/batch\nauthorization: root\ncontent-type: multipart/form-data; boundary=XXXarangob-benchmarkXXX\n\n".to_vec();
    batch.extend_from_slice(ARANGOB);
    write(dir, "batch", &batch);
    let mut batch_lf = b"POST /_db/_system/_api/batch\nauthorization: super\n\n".to_vec();
    batch_lf.extend_from_slice(BATCH_LF);
    write(dir, "batch-boundary-from-body", &batch_lf);
}
