//! The test cases: which request the `g`-th operation of a thread sends.
//!
//! What it is: arangob/arangobench's workloads that use only the version, document,
//! collection, import, batch and transaction APIs, each a pure function of the thread's
//! operation counter, with arangob's URLs, keys (`testkey<g/period>`) and bodies
//! (`bench-tools.md` §3); plus `docs1m`, the 1mDocsPerSec client's read/write interleave, and
//! `stream-trx`, a stream transaction over three collections. `g` is the thread's offset
//! ([`thread_offset`]) plus its own counter, so each thread works on its own key range.
//!
//! The transaction cases are *chained*: one operation is several requests, each sent after the
//! reply to the one before, because the writes and the commit name the transaction id that the
//! begin's reply hands out. [`Workload::op`] builds the first request (the begin),
//! [`Workload::follow`] each next one from the reply before it, and [`Workload::abandon`] the
//! abort that ends a transaction whose step failed. arangob's `multi-collection` sends one
//! JavaScript transaction instead; Quince has no JavaScript, so it runs as a stream
//! transaction, with the same documents in the same two collections.
//!
//! What it is not: the setup requests (dropping and creating collections, indexes, preloading)
//! which live in [`crate::setup`], and the cases that need AQL (`aqlinsert`, `aqltrx`,
//! `custom-query`, `stream-cursor`, ...): they are refused by name until the server has
//! `/_api/cursor`.
//!
//! Invariants: the same `(thread, counter)` always gives the same request (and the same
//! replies the same chain); bodies are compact JSON as arangob writes them; a chained
//! operation is one transaction, counted once however many requests it took.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use quince_client::{encode_segment, Method};

/// The fixed string the shapes cases store (about 50 characters, as arangob).
pub const SHAPES_VALUE: &str = "some bogus string value to fill up the datafile...";
/// The value of every docs1m attribute: the 26-letter alphabet.
pub const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyz";

/// What a case does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `GET /_api/version`.
    Version,
    /// 1.0's `smalldoc`: `{"test":1}` inserts.
    SmallDoc,
    /// 1.0's `bigdoc`: 100 attributes per insert.
    BigDoc,
    /// Inserts of `complexity` string attributes, server-generated keys.
    Document,
    /// Creates one collection per operation.
    Collection,
    /// JSON-lines imports of `complexity` documents.
    ImportDocument,
    /// Insert, read, patch, read, remove.
    Crud,
    /// Insert, read, patch, read.
    CrudAppend,
    /// Insert, read.
    CrudWriteRead,
    /// Edge insert, read, patch, read.
    Edge,
    /// Insert, read, patch, read with an index of this type on `value`.
    Indexed(&'static str),
    /// Insert, read, remove with ever-changing attribute names.
    Shapes,
    /// Insert, read with ever-changing attribute names.
    ShapesAppend,
    /// Insert, read, remove with random attribute values.
    RandomShapes,
    /// A stream transaction writing one document to each of two collections.
    MultiCollection,
    /// A stream transaction writing `complexity` documents over three collections, one array
    /// insert per collection.
    StreamTrx,
    /// The 1mDocsPerSec client.
    Docs1m,
    /// One step of the journal-sizes experiment over keys `seq<ticket>`: each of the
    /// `--requests` keys is touched exactly once, however the threads share the work.
    Sequential(SeqStep),
}

/// The steps of the journal-sizes experiment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SeqStep {
    /// `POST` a document with key `seq<n>` (the only step that creates the collection).
    Insert,
    /// `GET` it.
    Get,
    /// `PATCH` it.
    Update,
    /// `DELETE` it.
    Remove,
}

/// Where an operation stands: its thread, the thread's own counter, the global counter `g`
/// (thread offset plus own counter) and the run-wide ticket number.
#[derive(Debug, Clone, Copy, Default)]
pub struct Position {
    /// The thread.
    pub thread: u64,
    /// Operations this thread did before.
    pub thread_counter: u64,
    /// arangob's global counter.
    pub global: u64,
    /// Unique across the run: 0, 1, 2, ... in the order operations were handed out.
    pub ticket: u64,
}

/// A named test case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestCase {
    /// What it does.
    pub kind: Kind,
    name: &'static str,
}

/// Every case by name (aliases included), with a one-line description for `--help`.
pub const CASES: &[(&str, Kind, &str)] = &[
    ("version", Kind::Version, "GET /_api/version"),
    (
        "smalldoc",
        Kind::SmallDoc,
        "inserts {\"test\":1} (arangob 1.0)",
    ),
    (
        "bigdoc",
        Kind::BigDoc,
        "inserts 100 string attributes (arangob 1.0)",
    ),
    (
        "document",
        Kind::Document,
        "inserts <complexity> string attributes",
    ),
    (
        "collection",
        Kind::Collection,
        "creates one collection per operation",
    ),
    (
        "import-document",
        Kind::ImportDocument,
        "imports <complexity> documents per request",
    ),
    ("crud", Kind::Crud, "insert, get, patch, get, delete"),
    ("crud-append", Kind::CrudAppend, "insert, get, patch, get"),
    ("crud-write-read", Kind::CrudWriteRead, "insert, get"),
    ("edge", Kind::Edge, "edge insert, get, patch, get"),
    ("edge-crud", Kind::Edge, "alias of edge (3.12 name)"),
    (
        "hash",
        Kind::Indexed("hash"),
        "insert, get, patch, get with a hash index",
    ),
    (
        "skiplist",
        Kind::Indexed("skiplist"),
        "same with a skiplist index",
    ),
    (
        "persistent-index",
        Kind::Indexed("persistent"),
        "same with a persistent index (3.12)",
    ),
    (
        "shapes",
        Kind::Shapes,
        "insert, get, delete; changing attribute names",
    ),
    (
        "shapes-append",
        Kind::ShapesAppend,
        "insert, get; changing attribute names",
    ),
    (
        "random-shapes",
        Kind::RandomShapes,
        "insert, get, delete; random values",
    ),
    (
        "multi-collection",
        Kind::MultiCollection,
        "stream transaction: begin, insert into <collection>1 and 2, commit \
         (4 requests, one operation)",
    ),
    (
        "stream-trx",
        Kind::StreamTrx,
        "stream transaction: begin, one array insert into each of <collection>1..3 \
         (<complexity> documents in all), commit (5 requests, one operation)",
    ),
    (
        "docs1m",
        Kind::Docs1m,
        "1mDocsPerSec read/write interleave over preloaded documents",
    ),
    (
        "seq-insert",
        Kind::Sequential(SeqStep::Insert),
        "inserts keys seq0 ... (journal-sizes)",
    ),
    (
        "seq-get",
        Kind::Sequential(SeqStep::Get),
        "gets keys seq0 ... once each",
    ),
    (
        "seq-update",
        Kind::Sequential(SeqStep::Update),
        "patches keys seq0 ... once each",
    ),
    (
        "seq-remove",
        Kind::Sequential(SeqStep::Remove),
        "removes keys seq0 ... once each",
    ),
];

/// Cases arangobench has that need AQL or a cursor, not available yet.
const NEEDS_AQL: &[&str] = &[
    "aqltrx",
    "counttrx",
    "multitrx",
    "deadlocktrx",
    "aqlinsert",
    "aqlv8",
    "stream-cursor",
    "custom-query",
];

impl TestCase {
    /// The case of that name.
    pub fn from_name(name: &str) -> Result<TestCase, String> {
        if let Some((name, kind, _)) = CASES.iter().find(|(n, _, _)| *n == name) {
            return Ok(TestCase { kind: *kind, name });
        }
        let known: Vec<&str> = CASES.iter().map(|(n, _, _)| *n).collect();
        if NEEDS_AQL.contains(&name) {
            return Err(format!(
                "test case '{name}' needs AQL (/_api/cursor), which this client does not run yet; \
                 available: {}",
                known.join(", ")
            ));
        }
        Err(format!(
            "unknown test case '{name}'; available: {}",
            known.join(", ")
        ))
    }

    /// The name as given.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The complexity when none is given: 1 as arangob, 20 attributes for docs1m, 10
    /// documents per stream-trx transaction.
    pub fn default_complexity(&self) -> u64 {
        match self.kind {
            Kind::Docs1m => 20,
            Kind::StreamTrx => 10,
            _ => 1,
        }
    }

    /// Whether an operation is a chain of requests, each sent after the reply to the one
    /// before (a stream transaction). Such a case cannot be batched or run asynchronously.
    pub fn chained(&self) -> bool {
        matches!(self.kind, Kind::MultiCollection | Kind::StreamTrx)
    }

    /// Whether every operation is an insert into the collection (array batches possible).
    pub fn inserts_only(&self, read_percent: u64) -> bool {
        match self.kind {
            Kind::Document | Kind::SmallDoc | Kind::BigDoc => true,
            Kind::Sequential(step) => step == SeqStep::Insert,
            Kind::Docs1m => read_percent == 0,
            _ => false,
        }
    }

    /// How many operations make one cycle (the key is `testkey<g / period>`).
    pub fn period(&self) -> u64 {
        match self.kind {
            Kind::Crud => 5,
            Kind::CrudAppend | Kind::Edge | Kind::Indexed(_) => 4,
            Kind::Shapes | Kind::RandomShapes => 3,
            Kind::CrudWriteRead | Kind::ShapesAppend => 2,
            _ => 1,
        }
    }
}

/// The first global counter value of a thread: arangobench's step is
/// `requests / threads + 1`, rounded up to a multiple of 1000, plus 10000.
pub fn thread_offset(thread: u64, requests: u64, threads: u64) -> u64 {
    assert!(threads > 0, "at least one thread");
    let mut step = requests / threads + 1;
    if !step.is_multiple_of(1000) {
        step += 1000 - step % 1000;
    }
    (step + 10_000) * thread
}

/// The key of operation `global` for a case with this period.
pub fn key(global: u64, period: u64) -> String {
    format!("testkey{}", global / period)
}

/// One operation to send.
#[derive(Debug, Default, Clone)]
pub struct Op {
    /// Method.
    pub method: Option<Method>,
    /// Path relative to the database.
    pub path: String,
    /// Body, when `has_body`.
    pub body: Vec<u8>,
    /// Whether the request has a body.
    pub has_body: bool,
    /// Content type of the body.
    pub content_type: &'static str,
    /// Header lines of this request alone, each ending in CRLF (`x-arango-trx-id`).
    pub headers: String,
}

impl Op {
    fn start(&mut self, method: Method, content_type: &'static str) {
        self.method = Some(method);
        self.path.clear();
        self.body.clear();
        self.has_body = false;
        self.content_type = content_type;
        self.headers.clear();
    }

    /// Whether this is an insert into `collection` (the shape array batches combine).
    pub fn is_insert(&self) -> bool {
        self.method == Some(Method::Post) && self.path.starts_with("/_api/document?collection=")
    }
}

/// The state one thread keeps between operations (docs1m's interleave) and between the
/// requests of a chained one (the transaction id).
#[derive(Debug, Default, Clone)]
pub struct ThreadState {
    action: u64,
    read_index: u64,
    writes: u64,
    /// The running transaction's id (empty when none was begun).
    transaction: String,
}

/// What the reply to a step of a chained operation leads to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The op holds the next request.
    Send,
    /// The operation is complete.
    Done,
}

/// A successful reply the chain cannot go on from (a begin without a transaction id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unusable(pub String);

/// A case with its parameters, shared by all threads.
pub struct Workload {
    /// The case.
    pub case: TestCase,
    /// Base collection name.
    pub collection: String,
    /// Case-specific size.
    pub complexity: u64,
    /// `--requests` (the shapes cases derive their attribute-name modulus from it).
    pub requests: u64,
    /// docs1m: share of reads.
    pub read_percent: u64,
    /// docs1m: preloaded documents.
    pub preload: u64,
    random: u32,
    collection_segment: String,
    collections_created: AtomicU64,
}

impl Workload {
    /// A workload; `random` is random-shapes' per-process random number.
    pub fn new(
        case: TestCase,
        collection: &str,
        complexity: u64,
        requests: u64,
        read_percent: u64,
        preload: u64,
        random: u32,
    ) -> Workload {
        Workload {
            case,
            collection: collection.to_string(),
            complexity,
            requests,
            read_percent,
            preload,
            random,
            collection_segment: encode_segment(collection),
            collections_created: AtomicU64::new(0),
        }
    }

    /// The collections setup creates, with their type (2 document, 3 edge).
    pub fn collections(&self) -> Vec<(String, u8)> {
        match self.case.kind {
            Kind::Version | Kind::Collection => vec![],
            // Only the insert step starts from an empty collection; the others work on it.
            Kind::Sequential(step) if step != SeqStep::Insert => vec![],
            Kind::Edge => vec![(self.collection.clone(), 3)],
            Kind::MultiCollection | Kind::StreamTrx => (1..=self.trx_collections())
                .map(|i| (format!("{}{i}", self.collection), 2))
                .collect(),
            _ => vec![(self.collection.clone(), 2)],
        }
    }

    /// Fills `op` with the operation at `at`.
    pub fn op(&self, at: Position, state: &mut ThreadState, op: &mut Op) {
        let Position {
            thread,
            thread_counter,
            global,
            ticket,
        } = at;
        let c = self.collection_segment.as_str();
        let n = self.complexity;
        let period = self.case.period();
        let step = global % period;
        let key = || key(global, period);
        let json = "application/json";
        match self.case.kind {
            Kind::Version => {
                op.start(Method::Get, json);
                op.path.push_str("/_api/version");
            }
            Kind::SmallDoc | Kind::BigDoc | Kind::Document => {
                op.start(Method::Post, json);
                let _ = write!(op.path_writer(), "/_api/document?collection={c}");
                op.has_body = true;
                let (count, prefix, value) = match self.case.kind {
                    Kind::SmallDoc => (0, "", ""),
                    Kind::BigDoc => (100, "test", "some test value"),
                    _ => (n, "test", "some test value"),
                };
                if count == 0 {
                    op.body.extend_from_slice(b"{\"test\":1}");
                } else {
                    op.body.push(b'{');
                    for i in 1..=count {
                        if i > 1 {
                            op.body.push(b',');
                        }
                        let _ = write!(op.body, "\"{prefix}{i}\":\"{value}\"");
                    }
                    op.body.push(b'}');
                }
            }
            Kind::Collection => {
                op.start(Method::Post, json);
                op.path.push_str("/_api/collection");
                op.has_body = true;
                let number = self.collections_created.fetch_add(1, Ordering::Relaxed) + 1;
                let _ = write!(op.body, "{{\"name\":\"{}{number}\"}}", self.collection);
            }
            Kind::ImportDocument => {
                op.start(Method::Post, json);
                let _ = write!(
                    op.path_writer(),
                    "/_api/import?collection={c}&type=documents"
                );
                op.has_body = true;
                for i in 0..n {
                    let _ = writeln!(op.body, "{{\"key1\":{i},\"key2\":{i}}}");
                }
            }
            Kind::Crud | Kind::CrudAppend | Kind::CrudWriteRead | Kind::Edge => {
                let method = match step {
                    0 => Method::Post,
                    1 | 3 => Method::Get,
                    2 => Method::Patch,
                    _ => Method::Delete,
                };
                op.start(method, json);
                self.document_path(op, c, step, &key());
                if step == 0 || step == 2 {
                    op.has_body = true;
                    let _ = write!(op.body, "{{\"_key\":\"{}\"", key());
                    if step == 0 && self.case.kind == Kind::Edge {
                        let _ = write!(
                            op.body,
                            ",\"_from\":\"{0}/testfrom{global}\",\"_to\":\"{0}/testto{global}\"",
                            self.collection
                        );
                    }
                    let value = if step == 0 { "true" } else { "false" };
                    for i in 1..=n {
                        let _ = write!(op.body, ",\"value{i}\":{value}");
                    }
                    op.body.push(b'}');
                }
            }
            Kind::Indexed(_) => {
                let method = [Method::Post, Method::Get, Method::Patch, Method::Get][step as usize];
                op.start(method, json);
                self.document_path(op, c, step, &key());
                if step == 0 || step == 2 {
                    op.has_body = true;
                    let _ = write!(
                        op.body,
                        "{{\"_key\":\"{}\",\"value\":{thread_counter}}}",
                        key()
                    );
                }
            }
            Kind::Shapes | Kind::ShapesAppend | Kind::RandomShapes => {
                let method = [Method::Post, Method::Get, Method::Delete][step as usize];
                op.start(method, json);
                self.document_path(op, c, step, &key());
                if step == 0 {
                    op.has_body = true;
                    self.shapes_body(op, thread, global, &key());
                }
            }
            Kind::MultiCollection | Kind::StreamTrx => self.begin(op, state),
            Kind::Docs1m => self.docs1m(op, c, state),
            Kind::Sequential(step) => {
                let method = match step {
                    SeqStep::Insert => Method::Post,
                    SeqStep::Get => Method::Get,
                    SeqStep::Update => Method::Patch,
                    SeqStep::Remove => Method::Delete,
                };
                op.start(method, json);
                if step == SeqStep::Insert {
                    let _ = write!(op.path_writer(), "/_api/document?collection={c}");
                    op.has_body = true;
                    let _ = write!(op.body, "{{\"_key\":\"seq{ticket}\"");
                    for i in 1..=n {
                        let _ = write!(op.body, ",\"test{i}\":\"some test value\"");
                    }
                    op.body.push(b'}');
                } else {
                    let _ = write!(op.path_writer(), "/_api/document/{c}/seq{ticket}");
                    if step == SeqStep::Update {
                        op.has_body = true;
                        let _ = write!(op.body, "{{\"updated\":{thread_counter}}}");
                    }
                }
            }
        }
    }

    /// The collections a transaction case writes: `<collection>1 ...`.
    fn trx_collections(&self) -> u64 {
        if self.case.kind == Kind::StreamTrx {
            3
        } else {
            2
        }
    }

    /// Step 0 of a transaction case: `POST /_api/transaction/begin` writing its collections.
    fn begin(&self, op: &mut Op, state: &mut ThreadState) {
        state.transaction.clear();
        op.start(Method::Post, "application/json");
        op.path.push_str("/_api/transaction/begin");
        op.has_body = true;
        let names: Vec<String> = (1..=self.trx_collections())
            .map(|i| format!("{}{i}", self.collection))
            .collect();
        let body = serde_json::json!({"collections": {"write": names}});
        let _ = serde_json::to_writer(&mut op.body, &body);
    }

    /// Chained cases: after the successful reply `body` to step `step` (0 is the request
    /// [`Workload::op`] built), fills `op` with step `step + 1`, or says the operation is
    /// complete. Steps: the begin, one insert per collection (with `x-arango-trx-id`), the
    /// commit (`PUT /_api/transaction/<id>`).
    pub fn follow(
        &self,
        step: u64,
        body: &[u8],
        state: &mut ThreadState,
        op: &mut Op,
    ) -> Result<Next, Unusable> {
        assert!(self.case.chained(), "only chained cases have further steps");
        let collections = self.trx_collections();
        if step == 0 {
            state.transaction = transaction_id(body)?;
        }
        let id = state.transaction.as_str();
        if step < collections {
            let suffix = step + 1;
            op.start(Method::Post, "application/json");
            let _ = write!(
                op.path_writer(),
                "/_api/document?collection={}{suffix}",
                self.collection_segment
            );
            op.headers.push_str("x-arango-trx-id: ");
            op.headers.push_str(id);
            op.headers.push_str("\r\n");
            op.has_body = true;
            if self.case.kind == Kind::MultiCollection {
                self.multi_collection_document(op);
            } else {
                self.stream_trx_documents(op, step);
            }
            return Ok(Next::Send);
        }
        if step == collections {
            op.start(Method::Put, "application/json");
            let _ = write!(op.path_writer(), "/_api/transaction/{id}");
            return Ok(Next::Send);
        }
        state.transaction.clear();
        Ok(Next::Done)
    }

    /// Chained cases: fills `op` with the request that ends an operation whose step `step`
    /// failed (`DELETE /_api/transaction/<id>`, so the server does not keep the transaction
    /// until its idle timeout); false when nothing needs ending (the begin failed, or the
    /// commit, which ends the transaction either way).
    pub fn abandon(&self, step: u64, state: &mut ThreadState, op: &mut Op) -> bool {
        let id = std::mem::take(&mut state.transaction);
        if !self.case.chained() || id.is_empty() || step == 0 || step > self.trx_collections() {
            return false;
        }
        op.start(Method::Delete, "application/json");
        let _ = write!(op.path_writer(), "/_api/transaction/{id}");
        true
    }

    /// multi-collection's document: arangob's `{value0: 0, ..., value<n-1>: n-1}`.
    fn multi_collection_document(&self, op: &mut Op) {
        op.body.push(b'{');
        for i in 0..self.complexity {
            if i > 0 {
                op.body.push(b',');
            }
            let _ = write!(op.body, "\"value{i}\":{i}");
        }
        op.body.push(b'}');
    }

    /// stream-trx's insert into the `index`-th collection (0-based): an array of its share of
    /// the `complexity` documents (10 split 4, 3, 3), each `{"value":i,"name":"some test value"}`.
    fn stream_trx_documents(&self, op: &mut Op, index: u64) {
        let collections = self.trx_collections();
        let share =
            self.complexity / collections + u64::from(index < self.complexity % collections);
        op.body.push(b'[');
        for i in 0..share {
            if i > 0 {
                op.body.push(b',');
            }
            let _ = write!(op.body, "{{\"value\":{i},\"name\":\"some test value\"}}");
        }
        op.body.push(b']');
    }

    fn document_path(&self, op: &mut Op, collection: &str, step: u64, key: &str) {
        if step == 0 {
            let _ = write!(op.path_writer(), "/_api/document?collection={collection}");
        } else {
            let _ = write!(op.path_writer(), "/_api/document/{collection}/{key}");
        }
    }

    fn shapes_body(&self, op: &mut Op, thread: u64, global: u64, key: &str) {
        let _ = write!(op.body, "{{\"_key\":\"{key}\"");
        if self.case.kind == Kind::RandomShapes {
            let t = u64::from(self.random) % (global + thread + 1);
            let value = match t % 3 {
                0 => "true".to_string(),
                1 => "null".to_string(),
                _ => format!("\"{SHAPES_VALUE}\""),
            };
            for i in 1..=self.complexity {
                let _ = write!(op.body, ",\"value{}\":{value}", global + i);
            }
        } else {
            let modulus = (self.requests / 10).max(100);
            for i in 1..=self.complexity {
                let _ = write!(
                    op.body,
                    ",\"value{}\":\"{SHAPES_VALUE}\"",
                    (global + i) % modulus
                );
            }
        }
        op.body.push(b'}');
    }

    /// 1mDocsPerSec: `action` starts at 0 and advances by 47 modulo 100; below the read
    /// share it reads key `K<n>` (n advances by 1447 modulo the preload), else it writes a new
    /// document with a server-generated key.
    fn docs1m(&self, op: &mut Op, collection: &str, state: &mut ThreadState) {
        let read = state.action < self.read_percent && self.preload > 0;
        state.action = (state.action + 47) % 100;
        if read {
            op.start(Method::Get, "application/json");
            let _ = write!(
                op.path_writer(),
                "/_api/document/{collection}/K{}",
                state.read_index
            );
            state.read_index = (state.read_index + 1447) % self.preload;
            return;
        }
        op.start(Method::Post, "application/json");
        let _ = write!(op.path_writer(), "/_api/document?collection={collection}");
        op.has_body = true;
        op.body.push(b'{');
        for i in 1..=self.complexity {
            let _ = write!(op.body, "\"value{i}\":\"{ALPHABET}\",");
        }
        let _ = write!(op.body, "\"count\":{}.0}}", state.writes);
        state.writes += 1;
    }
}

impl Op {
    fn path_writer(&mut self) -> PathWriter<'_> {
        PathWriter(&mut self.path)
    }
}

/// `write!` into the path string.
struct PathWriter<'a>(&'a mut String);

impl Write for PathWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .push_str(std::str::from_utf8(buf).map_err(std::io::Error::other)?);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The `result.id` of a begin's reply (a string, or a number from some servers).
fn transaction_id(body: &[u8]) -> Result<String, Unusable> {
    let reply: serde_json::Value = serde_json::from_slice(body)
        .map_err(|_| Unusable("transaction begin: the reply is not JSON".into()))?;
    match &reply["result"]["id"] {
        serde_json::Value::String(id) if !id.is_empty() && id.len() <= 64 => Ok(id.clone()),
        serde_json::Value::Number(id) => Ok(id.to_string()),
        _ => Err(Unusable(
            "transaction begin: the reply has no result.id".into(),
        )),
    }
}

/// The body of a docs1m preloaded document `K<i>`.
pub fn docs1m_preload_document(i: u64, complexity: u64) -> serde_json::Value {
    let mut doc = serde_json::Map::new();
    doc.insert("_key".into(), format!("K{i}").into());
    for a in 1..=complexity {
        doc.insert(format!("value{a}"), ALPHABET.into());
    }
    doc.insert("value".into(), i.into());
    doc.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(name: &str, complexity: u64) -> Workload {
        Workload::new(
            TestCase::from_name(name).unwrap(),
            "C",
            complexity,
            1000,
            50,
            100_000,
            7,
        )
    }

    /// Thread 0's operation `g` (its counter, global counter and ticket are all `g`).
    fn at(g: u64) -> Position {
        Position {
            thread: 0,
            thread_counter: g,
            global: g,
            ticket: g,
        }
    }

    fn op(w: &Workload, global: u64) -> (Method, String, String) {
        let mut o = Op::default();
        w.op(at(global), &mut ThreadState::default(), &mut o);
        (
            o.method.unwrap(),
            o.path,
            String::from_utf8(o.body).unwrap(),
        )
    }

    #[test]
    fn thread_offsets_follow_arangobench() {
        // 1000 requests over 4 threads: 251 rounds up to 1000, plus 10000.
        assert_eq!(thread_offset(0, 1000, 4), 0);
        assert_eq!(thread_offset(1, 1000, 4), 11_000);
        assert_eq!(thread_offset(3, 1000, 4), 33_000);
        // 500000 over 8: 62501 rounds up to 63000.
        assert_eq!(thread_offset(2, 500_000, 8), 146_000);
        // An exact multiple of 1000 stays: 1999/1 + 1 = 2000.
        assert_eq!(thread_offset(1, 1999, 1), 12_000);
        assert_eq!(key(14, 5), "testkey2");
    }

    #[test]
    fn crud_cycle_and_bodies() {
        let w = workload("crud", 2);
        let ops: Vec<_> = (5..10).map(|g| op(&w, g)).collect();
        assert_eq!(ops[0].0, Method::Post);
        assert_eq!(ops[0].1, "/_api/document?collection=C");
        assert_eq!(
            ops[0].2,
            r#"{"_key":"testkey1","value1":true,"value2":true}"#
        );
        assert_eq!(
            (ops[1].0, ops[1].1.as_str()),
            (Method::Get, "/_api/document/C/testkey1")
        );
        assert_eq!(ops[2].0, Method::Patch);
        assert_eq!(
            ops[2].2,
            r#"{"_key":"testkey1","value1":false,"value2":false}"#
        );
        assert_eq!(ops[3].0, Method::Get);
        assert_eq!((ops[4].0, ops[4].2.as_str()), (Method::Delete, ""));
    }

    #[test]
    fn document_edge_index_shapes_import_bodies() {
        assert_eq!(
            op(&workload("document", 2), 3).2,
            r#"{"test1":"some test value","test2":"some test value"}"#
        );
        let edge = op(&workload("edge", 1), 4).2;
        assert_eq!(
            edge,
            r#"{"_key":"testkey1","_from":"C/testfrom4","_to":"C/testto4","value1":true}"#
        );
        assert_eq!(
            op(&workload("hash", 1), 6).2,
            r#"{"_key":"testkey1","value":6}"#
        );
        let shapes = op(&workload("shapes", 2), 99).2;
        assert_eq!(
            shapes,
            format!(
                r#"{{"_key":"testkey33","value0":"{SHAPES_VALUE}","value1":"{SHAPES_VALUE}"}}"#
            )
        );
        assert_eq!(op(&workload("shapes", 1), 100).0, Method::Get);
        assert_eq!(
            op(&workload("import-document", 2), 0).2,
            "{\"key1\":0,\"key2\":0}\n{\"key1\":1,\"key2\":1}\n"
        );
        let random = op(&workload("random-shapes", 1), 3).2;
        // 7 % (3 + 0 + 1) = 3, and 3 % 3 = 0: true.
        assert_eq!(random, r#"{"_key":"testkey1","value4":true}"#);
        let w = workload("collection", 1);
        assert_eq!(op(&w, 0).2, r#"{"name":"C1"}"#);
        assert_eq!(op(&w, 0).2, r#"{"name":"C2"}"#);
    }

    #[test]
    fn docs1m_interleave_and_read_keys() {
        let w = workload("docs1m", 20);
        let mut state = ThreadState::default();
        let mut reads = Vec::new();
        let mut kinds = String::new();
        for g in 0..100 {
            let mut o = Op::default();
            w.op(at(g), &mut state, &mut o);
            if o.method == Some(Method::Get) {
                kinds.push('r');
                reads.push(o.path);
            } else {
                kinds.push('w');
                let doc: serde_json::Value = serde_json::from_slice(&o.body).unwrap();
                assert_eq!(doc.as_object().unwrap().len(), 21);
                assert_eq!(doc["value20"], ALPHABET);
            }
        }
        // action 0 reads, 47 reads, 94 writes, 41 reads, 88 writes, ...: half of each 100.
        assert!(kinds.starts_with("rrwrw"), "{kinds}");
        assert_eq!(kinds.matches('r').count(), 50);
        assert_eq!(reads[0], "/_api/document/C/K0");
        assert_eq!(reads[1], "/_api/document/C/K1447");
    }

    #[test]
    fn sequential_steps_use_the_ticket_as_key() {
        let insert = op(&workload("seq-insert", 1), 7);
        assert_eq!(insert.0, Method::Post);
        assert_eq!(insert.2, r#"{"_key":"seq7","test1":"some test value"}"#);
        assert_eq!(op(&workload("seq-get", 1), 7).1, "/_api/document/C/seq7");
        assert_eq!(op(&workload("seq-update", 1), 7).0, Method::Patch);
        assert_eq!(op(&workload("seq-remove", 1), 7).0, Method::Delete);
        assert!(workload("seq-get", 1).collections().is_empty());
        assert_eq!(workload("seq-insert", 1).collections().len(), 1);
    }

    fn body_of(o: &Op) -> &str {
        std::str::from_utf8(&o.body).unwrap()
    }

    #[test]
    fn multi_collection_is_a_chained_stream_transaction() {
        let w = workload("multi-collection", 2);
        assert!(w.case.chained());
        assert_eq!(
            w.collections(),
            [("C1".to_string(), 2), ("C2".to_string(), 2)]
        );
        let (mut state, mut o) = (ThreadState::default(), Op::default());
        w.op(at(0), &mut state, &mut o);
        assert_eq!(o.method, Some(Method::Post));
        assert_eq!(o.path, "/_api/transaction/begin");
        assert_eq!(body_of(&o), r#"{"collections":{"write":["C1","C2"]}}"#);
        assert!(o.headers.is_empty());
        let begun = br#"{"code":201,"error":false,"result":{"id":"77","status":"running"}}"#;
        assert_eq!(w.follow(0, begun, &mut state, &mut o), Ok(Next::Send));
        assert_eq!(o.path, "/_api/document?collection=C1");
        assert_eq!(o.headers, "x-arango-trx-id: 77\r\n");
        assert_eq!(body_of(&o), r#"{"value0":0,"value1":1}"#);
        assert_eq!(w.follow(1, b"{}", &mut state, &mut o), Ok(Next::Send));
        assert_eq!(o.path, "/_api/document?collection=C2");
        assert_eq!(body_of(&o), r#"{"value0":0,"value1":1}"#);
        assert_eq!(w.follow(2, b"{}", &mut state, &mut o), Ok(Next::Send));
        assert_eq!(
            (o.method, o.path.as_str()),
            (Some(Method::Put), "/_api/transaction/77")
        );
        assert!(!o.has_body && o.headers.is_empty());
        assert_eq!(w.follow(3, b"{}", &mut state, &mut o), Ok(Next::Done));
        // Nothing to abort once committed (the commit ends it either way).
        assert!(!w.abandon(3, &mut state, &mut o));
    }

    #[test]
    fn a_failed_step_aborts_and_a_begin_without_id_is_unusable() {
        let w = workload("multi-collection", 1);
        let (mut state, mut o) = (ThreadState::default(), Op::default());
        w.op(at(0), &mut state, &mut o);
        assert!(w.follow(0, b"{}", &mut state, &mut o).is_err());
        assert!(!w.abandon(0, &mut state, &mut o), "no id, nothing to abort");
        w.op(at(1), &mut state, &mut o);
        // Some servers hand out numbers.
        let begun = br#"{"result":{"id":12}}"#;
        assert_eq!(w.follow(0, begun, &mut state, &mut o), Ok(Next::Send));
        assert!(w.abandon(1, &mut state, &mut o));
        assert_eq!(
            (o.method, o.path.as_str()),
            (Some(Method::Delete), "/_api/transaction/12")
        );
        assert!(!w.abandon(1, &mut state, &mut o), "aborted once");
    }

    #[test]
    fn stream_trx_splits_its_documents_over_three_collections() {
        let w = workload("stream-trx", 10);
        assert_eq!(w.collections().len(), 3);
        let (mut state, mut o) = (ThreadState::default(), Op::default());
        w.op(at(0), &mut state, &mut o);
        assert_eq!(body_of(&o), r#"{"collections":{"write":["C1","C2","C3"]}}"#);
        let mut reply: &[u8] = br#"{"result":{"id":"5"}}"#;
        let mut shares = Vec::new();
        for step in 0..3 {
            assert_eq!(w.follow(step, reply, &mut state, &mut o), Ok(Next::Send));
            assert_eq!(o.path, format!("/_api/document?collection=C{}", step + 1));
            let docs: Vec<serde_json::Value> = serde_json::from_slice(&o.body).unwrap();
            assert_eq!(
                docs[0],
                serde_json::json!({"value": 0, "name": "some test value"})
            );
            shares.push(docs.len());
            reply = b"[]";
        }
        assert_eq!(shares, [4, 3, 3]);
        assert_eq!(w.follow(3, reply, &mut state, &mut o), Ok(Next::Send));
        assert_eq!(o.path, "/_api/transaction/5");
        assert_eq!(w.follow(4, b"{}", &mut state, &mut o), Ok(Next::Done));
        assert_eq!(
            TestCase::from_name("stream-trx")
                .unwrap()
                .default_complexity(),
            10
        );
    }

    #[test]
    fn unknown_and_aql_cases_are_refused_by_name() {
        assert!(TestCase::from_name("aqlinsert")
            .unwrap_err()
            .contains("AQL"));
        assert!(TestCase::from_name("bogus")
            .unwrap_err()
            .contains("available: version"));
        assert_eq!(TestCase::from_name("edge-crud").unwrap().kind, Kind::Edge);
    }
}
