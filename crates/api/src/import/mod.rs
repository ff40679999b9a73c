//! `POST /_api/import`: bulk import of JSON Lines, one JSON array, or the header-line format
//! (<https://docs.arangodb.com/3.12/develop/http-api/import/>), streaming the body.
//!
//! What it is: the handler. The pipeline hands it the request before reading the body (an
//! import may be far larger than `--http.max-body-size`; its own bound is
//! `--http.max-import-size`). The connection's task reads the body frame by frame and passes
//! the chunks through a bounded channel to one worker on the blocking pool, which decodes them
//! (`decode`), cuts them into records (`records`), converts each record (`convert`) and writes
//! it (`writer`). The reply is
//! `201 {"error":false,"created":n,"errors":n,"empty":n,"updated":n,"ignored":n[,"details":[…]]}`.
//!
//! What it is not: the whole-body path of other endpoints. A request whose body was read
//! already (a batch part, a stored async job) enters through [`handle_whole`] and is streamed
//! from memory the same way.
//!
//! Invariants: memory is bounded by the channel ([`CHANNEL_CHUNKS`] chunks as hyper delivers
//! them), one record ([`records::RECORD_LEN_MAX`]) and the details; an all-or-nothing import
//! (`complete=true`) also holds its documents until they commit, which the import's body bound
//! limits. Writes run on the blocking pool, never on an async worker. A body that ends early
//! (the client went away, a read error, a bound) ends the import with an error. An
//! all-or-nothing import runs inside a stream transaction (its own, or the one the request's
//! `x-arango-trx-id` names) and commits only at the end: on any failure the transaction is
//! aborted and nothing of the import (nor of its `overwrite=true` truncation) is ever seen,
//! and after a crash it is whole or absent. An import that is not all-or-nothing keeps the
//! documents written before the error.

mod convert;
mod decode;
mod options;
mod records;
mod writer;

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http::header::HeaderValue;
use http::Method;
use http_body_util::{BodyExt, Full};
use quince_errors::{ArangoError, Result};
use quince_ops::{Beginner, CollectionOps, CollectionType, TransactionOps, TransactionOptions};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::body::BodyStream;
use crate::error::error_response;
use crate::request::ApiRequest;
use crate::response::{ApiResponse, ApiResult};

use convert::Conversion;
use decode::StreamDecoder;
use options::ImportOptions;
use records::Parser;
use writer::{Report, Writer};

/// Body chunks in flight between the connection and the worker.
const CHANNEL_CHUNKS: usize = 16;

/// The most bytes of an unused body read (and dropped) after the reply is decided, to keep
/// the connection usable.
const DRAIN_MAX: usize = 64 << 20;

/// What the connection passes to the worker.
enum Input {
    /// The next raw chunk of the body.
    Data(Bytes),
    /// The body ended normally.
    End,
    /// Reading the body failed.
    Failed(ArangoError),
}

/// Handles an import whose body has not been read: `body` is read here, within `limit` bytes
/// (raw and decoded). Whatever the outcome, the rest of the body is read and dropped (up to
/// [`DRAIN_MAX`] bytes) so that the connection can serve the next request; beyond that, or
/// after a read error, the reply says `Connection: close`.
pub(crate) async fn handle_stream(
    req: ApiRequest,
    mut body: BodyStream<'_>,
    limit: usize,
) -> ApiResult {
    let outcome = import(req, body.as_mut(), limit).await;
    let drained = drain(body.as_mut()).await;
    let mut reply = match outcome {
        Ok(reply) => reply,
        Err(err) => error_response(&err),
    };
    if !drained {
        reply
            .headers
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(reply)
}

/// Reads what is left of a body, up to [`DRAIN_MAX`] bytes; true when it ended within that.
async fn drain(mut body: BodyStream<'_>) -> bool {
    let mut left = DRAIN_MAX;
    while let Some(frame) = body.as_mut().frame().await {
        let Ok(frame) = frame else {
            return false;
        };
        if let Ok(chunk) = frame.into_data() {
            match left.checked_sub(chunk.len()) {
                Some(rest) => left = rest,
                None => return false,
            }
        }
    }
    true
}

/// The import proper: options, collection, then the body through the worker.
async fn import(req: ApiRequest, body: BodyStream<'_>, limit: usize) -> ApiResult {
    if req.method != Method::POST {
        return Err(ArangoError::new(quince_errors::HTTP_METHOD_NOT_ALLOWED));
    }
    let options = ImportOptions::parse(&req)?;
    let collection = req
        .database
        .collection(&options.collection)
        .map_err(|err| {
            if err.is(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND) {
                ArangoError::new(quince_errors::ARANGO_DATA_SOURCE_NOT_FOUND)
            } else {
                err
            }
        })?;
    let decoder = StreamDecoder::new(&req.headers, limit)?;
    let (collection, transaction) = match options.complete {
        true => all_or_nothing(&req, collection, &options).await?,
        false => (collection, None),
    };
    let mut importer = Importer::new(collection, &options, req.json_depth_max, decoder);
    importer.transaction = transaction;
    let (sender, receiver) = mpsc::channel(CHANNEL_CHUNKS);
    let worker = tokio::task::spawn_blocking(move || importer.run(receiver));
    let last = match pump(body, &sender, limit).await {
        Ok(()) => Input::End,
        Err(err) => Input::Failed(err),
    };
    // A worker that stopped early has its own error to report; the send then fails.
    let _ = sender.send(last).await;
    drop(sender);
    let report = match worker.await {
        Ok(report) => report?,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(_) => return Err(ArangoError::new(quince_errors::SHUTTING_DOWN)),
    };
    Ok(render(report))
}

/// The collection and transaction of an all-or-nothing import: the request's stream
/// transaction when it names one (a failure aborts it), else a transaction of its own that
/// writes the collection (committed at the end).
async fn all_or_nothing(
    req: &ApiRequest,
    collection: Arc<dyn CollectionOps>,
    options: &ImportOptions,
) -> Result<(Arc<dyn CollectionOps>, Option<Owned>)> {
    if let Some(id) = req.header(crate::transaction::TRX_HEADER) {
        let transaction = crate::transaction::find(&req.database, &req.user, id)?;
        return Ok((
            collection,
            Some(Owned {
                transaction,
                own: false,
            }),
        ));
    }
    let begin = TransactionOptions {
        write: vec![collection.name()],
        wait_for_sync: options.wait_for_sync,
        // The import's body bound is the bound on what it can buffer.
        max_transaction_size: u64::MAX,
        // Opened and closed by this request: it takes none of the clients' slots.
        begun_by: Beginner::request(),
        ..TransactionOptions::default()
    };
    let database = Arc::clone(&req.database);
    let transaction = crate::blocking::blocking(move || database.begin_transaction(begin)).await?;
    let collection = transaction.database().collection(&collection.name())?;
    Ok((
        collection,
        Some(Owned {
            transaction,
            own: true,
        }),
    ))
}

/// The stream transaction an all-or-nothing import runs in.
struct Owned {
    transaction: Arc<dyn TransactionOps>,
    /// The import began it (and commits it); else it is the request's.
    own: bool,
}

/// Handles an import whose body was read already (and decoded: its `Content-Encoding` no
/// longer applies).
pub(crate) async fn handle_whole(mut req: ApiRequest) -> ApiResult {
    let body = std::mem::take(&mut req.body);
    req.headers.remove(http::header::CONTENT_ENCODING);
    let limit = body.len();
    let body = Full::new(body).map_err(|never: Infallible| match never {});
    let mut body = std::pin::pin!(body);
    handle_stream(req, body.as_mut(), limit).await
}

/// Passes the body's chunks to the worker, within `limit` raw bytes; stops early when the
/// worker is gone.
async fn pump(mut body: BodyStream<'_>, sender: &mpsc::Sender<Input>, limit: usize) -> Result<()> {
    let mut total = 0usize;
    while let Some(frame) = body.as_mut().frame().await {
        let frame = frame.map_err(|e| {
            ArangoError::with_message(
                quince_errors::HTTP_BAD_PARAMETER,
                format!("could not read the request body: {e}"),
            )
        })?;
        let Ok(chunk) = frame.into_data() else {
            // Trailers carry no body bytes.
            continue;
        };
        total = total.saturating_add(chunk.len());
        if total > limit {
            return Err(crate::body::too_large(limit));
        }
        if sender.send(Input::Data(chunk)).await.is_err() {
            return Ok(());
        }
    }
    Ok(())
}

/// The reply of a finished import.
fn render(report: Report) -> ApiResponse {
    let counts = report.counts;
    let mut body = Map::new();
    body.insert("error".into(), Value::Bool(false));
    body.insert("created".into(), counts.created.into());
    body.insert("errors".into(), counts.errors.into());
    body.insert("empty".into(), counts.empty.into());
    body.insert("updated".into(), counts.updated.into());
    body.insert("ignored".into(), counts.ignored.into());
    if let Some(details) = report.details {
        body.insert(
            "details".into(),
            Value::Array(details.into_iter().map(Value::String).collect()),
        );
    }
    ApiResponse::json(201, &Value::Object(body))
}

/// One import on the blocking pool.
struct Importer {
    collection: Arc<dyn CollectionOps>,
    overwrite: bool,
    decoder: StreamDecoder,
    parser: Parser,
    conversion: Conversion,
    writer: Writer,
    /// The stream transaction of an all-or-nothing import.
    transaction: Option<Owned>,
}

impl Importer {
    fn new(
        collection: Arc<dyn CollectionOps>,
        options: &ImportOptions,
        depth_max: usize,
        decoder: StreamDecoder,
    ) -> Importer {
        let conversion = Conversion {
            edge: collection.kind() == CollectionType::Edge,
            from_prefix: options.from_prefix.clone(),
            to_prefix: options.to_prefix.clone(),
            overwrite_collection_prefix: options.overwrite_collection_prefix,
            ignore_missing: options.ignore_missing,
            depth_max,
            header: None,
        };
        Importer {
            writer: Writer::new(Arc::clone(&collection), options),
            collection,
            overwrite: options.overwrite,
            decoder,
            parser: Parser::new(options.format, options.line_offset),
            conversion,
            transaction: None,
        }
    }

    /// Imports the body arriving on `input`.
    fn run(mut self, mut input: mpsc::Receiver<Input>) -> Result<Report> {
        let mut report = match self.overwrite {
            true => self.collection.truncate(false),
            false => Ok(()),
        };
        if report.is_ok() {
            report = self.consume(&mut input);
        }
        let mut report = report.and_then(|()| self.writer.finish(&self.conversion));
        if let Some(owned) = &self.transaction {
            report = match report {
                Ok(report) if owned.own => owned.transaction.commit().and_then(|durability| {
                    match durability {
                        Some(durability) => durability.wait(),
                        None => Ok(()),
                    }
                    .map(|()| report)
                }),
                Ok(report) => Ok(report),
                Err(error) => {
                    if let Err(abort) = owned.transaction.abort() {
                        tracing::debug!(event = "import.abort_failed", error = %abort);
                    }
                    Err(error)
                }
            };
        }
        report
    }

    /// Feeds the body through decoder, parser and writer until it ends.
    fn consume(&mut self, input: &mut mpsc::Receiver<Input>) -> Result<()> {
        let Importer {
            decoder,
            parser,
            conversion,
            writer,
            ..
        } = self;
        let mut sink = |decoded: &[u8]| parser.feed(decoded, conversion, writer);
        loop {
            match input.blocking_recv() {
                Some(Input::Data(chunk)) => decoder.feed(&chunk, &mut sink)?,
                Some(Input::End) => {
                    decoder.finish(&mut sink)?;
                    return parser.finish(conversion, writer);
                }
                Some(Input::Failed(err)) => return Err(err),
                None => {
                    return Err(ArangoError::with_message(
                        quince_errors::HTTP_BAD_PARAMETER,
                        "the request body ended early",
                    ))
                }
            }
        }
    }
}
