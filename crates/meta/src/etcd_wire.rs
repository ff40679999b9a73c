//! The part of etcd's v3 gRPC API that [`crate::EtcdStore`] speaks: its messages as prost
//! structs, and one call function per method, over a tonic channel.
//!
//! What it is: the wire format, declared in Rust. Each struct carries the field numbers and
//! types of etcd's published `rpc.proto` / `kv.proto` (package `etcdserverpb`, `mvccpb`) for
//! the fields Quince reads or writes; prost skips the fields a struct leaves out, so a newer
//! etcd's additions are ignored, as protobuf intends. Declaring them with prost's derive is
//! what lets the workspace build with nothing but the Rust toolchain: no `protoc`, no build
//! script, no generated code to keep current (`docs/architecture.md`, "Building").
//!
//! What it is not: a general etcd client. It has no auth, TLS, retry or failover; those that
//! Quince needs live in `etcd.rs`, above it.
//!
//! Invariants: a field's number and type are etcd's; a message that Quince only sends lists
//! every field it sets, and one it only reads every field it reads. The tests at the end
//! check the encoding of a request against bytes written out by hand from etcd's definitions.

use std::time::Duration;

use http::uri::PathAndQuery;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::client::Grpc;
use tonic::metadata::AsciiMetadataValue;
use tonic::transport::{Channel, Endpoint};
use tonic::{Request, Status, Streaming};
use tonic_prost::ProstCodec;

/// `etcdserverpb.ResponseHeader`.
#[derive(Clone, PartialEq, Message)]
pub struct ResponseHeader {
    #[prost(uint64, tag = "2")]
    pub member_id: u64,
    #[prost(int64, tag = "3")]
    pub revision: i64,
}

/// `mvccpb.KeyValue`.
#[derive(Clone, PartialEq, Message)]
pub struct KeyValue {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(int64, tag = "2")]
    pub create_revision: i64,
    #[prost(int64, tag = "3")]
    pub mod_revision: i64,
    #[prost(int64, tag = "4")]
    pub version: i64,
    #[prost(bytes = "vec", tag = "5")]
    pub value: Vec<u8>,
    #[prost(int64, tag = "6")]
    pub lease: i64,
}

/// `mvccpb.Event`; `kind` is `Event.EventType` (0 put, 1 delete).
#[derive(Clone, PartialEq, Message)]
pub struct Event {
    #[prost(int32, tag = "1")]
    pub kind: i32,
    #[prost(message, optional, tag = "2")]
    pub kv: Option<KeyValue>,
}

/// `Event.EventType.DELETE`.
pub const EVENT_DELETE: i32 = 1;

/// `etcdserverpb.RangeRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct RangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub range_end: Vec<u8>,
    #[prost(int64, tag = "4")]
    pub revision: i64,
    #[prost(bool, tag = "9")]
    pub count_only: bool,
}

/// `etcdserverpb.RangeResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct RangeResponse {
    #[prost(message, optional, tag = "1")]
    pub header: Option<ResponseHeader>,
    #[prost(message, repeated, tag = "2")]
    pub kvs: Vec<KeyValue>,
}

/// `etcdserverpb.PutRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct PutRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub value: Vec<u8>,
    #[prost(int64, tag = "3")]
    pub lease: i64,
}

/// `etcdserverpb.DeleteRangeRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct DeleteRangeRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub range_end: Vec<u8>,
}

/// `etcdserverpb.RequestOp` (its `request` oneof).
#[derive(Clone, PartialEq, Message)]
pub struct RequestOp {
    #[prost(oneof = "Operation", tags = "2, 3")]
    pub request: Option<Operation>,
}

/// The operations of a transaction Quince sends.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum Operation {
    #[prost(message, tag = "2")]
    Put(PutRequest),
    #[prost(message, tag = "3")]
    DeleteRange(DeleteRangeRequest),
}

/// `etcdserverpb.Compare`. `result` is `CompareResult` (0 equal, 1 greater), `target` is
/// `CompareTarget` (0 version, 1 create, 2 mod, 3 value).
#[derive(Clone, PartialEq, Message)]
pub struct Compare {
    #[prost(int32, tag = "1")]
    pub result: i32,
    #[prost(int32, tag = "2")]
    pub target: i32,
    #[prost(bytes = "vec", tag = "3")]
    pub key: Vec<u8>,
    #[prost(oneof = "CompareWith", tags = "4, 5, 6, 7")]
    pub with: Option<CompareWith>,
}

/// `Compare.CompareResult` values Quince uses.
pub const COMPARE_EQUAL: i32 = 0;
pub const COMPARE_GREATER: i32 = 1;
/// `Compare.CompareTarget` values.
pub const TARGET_VERSION: i32 = 0;
pub const TARGET_CREATE: i32 = 1;
pub const TARGET_MOD: i32 = 2;
pub const TARGET_VALUE: i32 = 3;

/// `Compare.target_union`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum CompareWith {
    #[prost(int64, tag = "4")]
    Version(i64),
    #[prost(int64, tag = "5")]
    CreateRevision(i64),
    #[prost(int64, tag = "6")]
    ModRevision(i64),
    #[prost(bytes = "vec", tag = "7")]
    Value(Vec<u8>),
}

/// `etcdserverpb.TxnRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct TxnRequest {
    #[prost(message, repeated, tag = "1")]
    pub compare: Vec<Compare>,
    #[prost(message, repeated, tag = "2")]
    pub success: Vec<RequestOp>,
    #[prost(message, repeated, tag = "3")]
    pub failure: Vec<RequestOp>,
}

/// `etcdserverpb.TxnResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct TxnResponse {
    #[prost(message, optional, tag = "1")]
    pub header: Option<ResponseHeader>,
    #[prost(bool, tag = "2")]
    pub succeeded: bool,
}

/// `etcdserverpb.CompactionRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct CompactionRequest {
    #[prost(int64, tag = "1")]
    pub revision: i64,
    #[prost(bool, tag = "2")]
    pub physical: bool,
}

/// `etcdserverpb.WatchRequest` with its `create_request` (the only one Quince sends: a
/// watch ends by closing its stream).
#[derive(Clone, PartialEq, Message)]
pub struct WatchRequest {
    #[prost(message, optional, tag = "1")]
    pub create_request: Option<WatchCreateRequest>,
}

/// `etcdserverpb.WatchCreateRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct WatchCreateRequest {
    #[prost(bytes = "vec", tag = "1")]
    pub key: Vec<u8>,
    #[prost(bytes = "vec", tag = "2")]
    pub range_end: Vec<u8>,
    #[prost(int64, tag = "3")]
    pub start_revision: i64,
}

/// `etcdserverpb.WatchResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct WatchResponse {
    #[prost(bool, tag = "3")]
    pub created: bool,
    #[prost(bool, tag = "4")]
    pub canceled: bool,
    #[prost(int64, tag = "5")]
    pub compact_revision: i64,
    #[prost(string, tag = "6")]
    pub cancel_reason: String,
    #[prost(message, repeated, tag = "11")]
    pub events: Vec<Event>,
}

/// `etcdserverpb.LeaseGrantRequest`.
#[derive(Clone, PartialEq, Message)]
pub struct LeaseGrantRequest {
    #[prost(int64, tag = "1")]
    pub ttl: i64,
}

/// `etcdserverpb.LeaseGrantResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct LeaseGrantResponse {
    #[prost(int64, tag = "2")]
    pub id: i64,
    #[prost(string, tag = "4")]
    pub error: String,
}

/// `etcdserverpb.LeaseRevokeRequest` and `LeaseKeepAliveRequest` (both one `ID` field 1).
#[derive(Clone, PartialEq, Message)]
pub struct LeaseIdRequest {
    #[prost(int64, tag = "1")]
    pub id: i64,
}

/// `etcdserverpb.LeaseKeepAliveResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct LeaseKeepAliveResponse {
    #[prost(int64, tag = "2")]
    pub id: i64,
    #[prost(int64, tag = "3")]
    pub ttl: i64,
}

/// A message with no fields Quince reads: `StatusRequest`, `MemberListRequest` (its
/// `linearizable` left false), `LeaseRevokeResponse`, `CompactionResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct Nothing {}

/// `etcdserverpb.StatusResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct StatusResponse {
    #[prost(message, optional, tag = "1")]
    pub header: Option<ResponseHeader>,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(uint64, tag = "4")]
    pub leader: u64,
}

/// `etcdserverpb.Member`.
#[derive(Clone, PartialEq, Message)]
pub struct Member {
    #[prost(uint64, tag = "1")]
    pub id: u64,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, repeated, tag = "4")]
    pub client_urls: Vec<String>,
}

/// `etcdserverpb.MemberListResponse`.
#[derive(Clone, PartialEq, Message)]
pub struct MemberListResponse {
    #[prost(message, repeated, tag = "2")]
    pub members: Vec<Member>,
}

/// The `(key, range_end)` of every key that starts with `prefix`. The empty prefix is etcd's
/// "every key": `key` `[0]` (etcd refuses an empty key) and `range_end` `[0]`.
pub fn prefix_bounds(prefix: &[u8]) -> (Vec<u8>, Vec<u8>) {
    if prefix.is_empty() {
        (vec![0], vec![0])
    } else {
        (prefix.to_vec(), prefix_end(prefix))
    }
}

/// The end of the range of keys that start with `prefix` (etcd's `range_end` for a prefix):
/// the prefix with its last byte below 0xff raised by one; `[0]` (every key) when there is none.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

/// How a connection to etcd is made.
#[derive(Clone, Debug)]
pub struct ConnectOptions {
    /// The longest a TCP connection to one member may take.
    pub connect_timeout: Duration,
    /// HTTP/2 pings while a stream (a watch, a call) is open: how often, and how long one may
    /// go unanswered before the connection counts as broken. etcd refuses pings more often
    /// than its `--grpc-keepalive-min-time` (5 s by default) and any ping on a connection
    /// with no stream, closing the connection after three (`too_many_pings`): so the interval
    /// must be above 5 s, and idle connections are never pinged.
    pub keep_alive: Option<(Duration, Duration)>,
    /// Ask each member to refuse a request while it has no leader (etcd's `hasleader`
    /// metadata), so that a request to a cut-off member fails at once instead of waiting.
    pub require_leader: bool,
}

/// A client of etcd's gRPC services over one channel, balanced across the endpoints it was
/// made with. Cheap to clone: clones share the channel.
#[derive(Clone)]
pub struct Rpc {
    channel: Channel,
    require_leader: bool,
}

/// How the error of a call that never got a ready connection (so was not sent) starts.
pub const NOT_READY: &str = "etcd connection not ready";

/// `hasleader: true`, which etcd reads as "refuse if you have no leader".
const REQUIRE_LEADER: (&str, &str) = ("hasleader", "true");

impl Rpc {
    /// A client over `endpoints` (`http://host:port` each). Connections are made lazily, on
    /// the first call, so this never waits; a member that cannot be reached fails that call.
    /// Must be called inside a tokio runtime (the channel's worker runs there); an empty list
    /// is an error (every call would wait for a member for ever).
    pub fn new(endpoints: &[String], options: &ConnectOptions) -> Result<Rpc, String> {
        if endpoints.is_empty() {
            return Err("no etcd endpoint given".into());
        }
        let mut list = Vec::with_capacity(endpoints.len());
        for endpoint in endpoints {
            let mut endpoint = Endpoint::from_shared(endpoint.clone())
                .map_err(|e| format!("bad etcd endpoint {endpoint:?}: {e}"))?
                .connect_timeout(options.connect_timeout);
            if let Some((interval, timeout)) = options.keep_alive {
                endpoint = endpoint
                    .http2_keep_alive_interval(interval)
                    .keep_alive_timeout(timeout)
                    .keep_alive_while_idle(false);
            }
            list.push(endpoint);
        }
        Ok(Rpc {
            channel: Channel::balance_list(list.into_iter()),
            require_leader: options.require_leader,
        })
    }

    fn request<T>(&self, message: T) -> Request<T> {
        let mut request = Request::new(message);
        if self.require_leader {
            request.metadata_mut().insert(
                REQUIRE_LEADER.0,
                AsciiMetadataValue::from_static(REQUIRE_LEADER.1),
            );
        }
        request
    }

    async fn ready(&self) -> Result<Grpc<Channel>, Status> {
        // etcd's own client takes answers of any size (a range over a large prefix, a watch
        // that resumes with up to 1,000 revisions in one answer); tonic's default is 4 MiB.
        let mut grpc = Grpc::new(self.channel.clone()).max_decoding_message_size(usize::MAX);
        grpc.ready()
            .await
            .map_err(|e| Status::unavailable(format!("{NOT_READY}: {e}")))?;
        Ok(grpc)
    }

    async fn unary<Q, A>(&self, path: &'static str, message: Q) -> Result<A, Status>
    where
        Q: Message + Send + Sync + 'static,
        A: Message + Default + Send + Sync + 'static,
    {
        let mut grpc = self.ready().await?;
        let codec = ProstCodec::<Q, A>::default();
        let answer = grpc
            .unary(
                self.request(message),
                PathAndQuery::from_static(path),
                codec,
            )
            .await?;
        Ok(answer.into_inner())
    }

    /// Opens a bidirectional stream on `path` and sends `first` on it; the sender (dropping
    /// it closes the stream) and the answers.
    async fn stream<Q, A>(
        &self,
        path: &'static str,
        first: Q,
    ) -> Result<(mpsc::Sender<Q>, Streaming<A>), Status>
    where
        Q: Message + Send + Sync + 'static,
        A: Message + Default + Send + Sync + 'static,
    {
        let mut grpc = self.ready().await?;
        let (sender, receiver) = mpsc::channel(4);
        sender
            .send(first)
            .await
            .map_err(|_| Status::internal("etcd stream closed before it opened"))?;
        let codec = ProstCodec::<Q, A>::default();
        let answers = grpc
            .streaming(
                self.request(ReceiverStream::new(receiver)),
                PathAndQuery::from_static(path),
                codec,
            )
            .await?
            .into_inner();
        Ok((sender, answers))
    }

    /// `KV.Range`.
    pub async fn range(&self, request: RangeRequest) -> Result<RangeResponse, Status> {
        self.unary("/etcdserverpb.KV/Range", request).await
    }

    /// `KV.Txn`.
    pub async fn txn(&self, request: TxnRequest) -> Result<TxnResponse, Status> {
        self.unary("/etcdserverpb.KV/Txn", request).await
    }

    /// `KV.Compact`: forgets the history before `revision` (physically, when asked, before
    /// answering).
    pub async fn compact(&self, revision: i64, physical: bool) -> Result<(), Status> {
        let request = CompactionRequest { revision, physical };
        self.unary::<_, Nothing>("/etcdserverpb.KV/Compact", request)
            .await
            .map(|_| ())
    }

    /// `Maintenance.Status` of the member the call reaches.
    pub async fn status(&self) -> Result<StatusResponse, Status> {
        self.unary("/etcdserverpb.Maintenance/Status", Nothing {})
            .await
    }

    /// `Cluster.MemberList`.
    pub async fn member_list(&self) -> Result<MemberListResponse, Status> {
        self.unary("/etcdserverpb.Cluster/MemberList", Nothing {})
            .await
    }

    /// `Lease.LeaseGrant`: a lease of `ttl` seconds; etcd's refusal in the answer's `error`
    /// becomes an error.
    pub async fn lease_grant(&self, ttl: i64) -> Result<i64, Status> {
        let answer: LeaseGrantResponse = self
            .unary("/etcdserverpb.Lease/LeaseGrant", LeaseGrantRequest { ttl })
            .await?;
        if answer.error.is_empty() {
            Ok(answer.id)
        } else {
            Err(Status::unknown(answer.error))
        }
    }

    /// `Lease.LeaseRevoke`.
    pub async fn lease_revoke(&self, id: i64) -> Result<(), Status> {
        self.unary::<_, Nothing>("/etcdserverpb.Lease/LeaseRevoke", LeaseIdRequest { id })
            .await
            .map(|_| ())
    }

    /// One renewal of lease `id` on a `Lease.LeaseKeepAlive` stream: its remaining TTL in
    /// seconds (0 or less: etcd has no such lease).
    pub async fn lease_keep_alive_once(&self, id: i64) -> Result<i64, Status> {
        let (sender, mut answers) = self
            .stream::<_, LeaseKeepAliveResponse>(
                "/etcdserverpb.Lease/LeaseKeepAlive",
                LeaseIdRequest { id },
            )
            .await?;
        let answer = answers.message().await?;
        drop(sender);
        match answer {
            Some(answer) => Ok(answer.ttl),
            None => Err(Status::unavailable("etcd closed the keep-alive stream")),
        }
    }

    /// Opens a `Watch.Watch` stream with one watch on the keys from `key` up to `range_end`,
    /// from `start_revision`. The stream lives while the returned sender does.
    pub async fn watch(
        &self,
        key: Vec<u8>,
        range_end: Vec<u8>,
        start_revision: i64,
    ) -> Result<(mpsc::Sender<WatchRequest>, Streaming<WatchResponse>), Status> {
        let create = WatchRequest {
            create_request: Some(WatchCreateRequest {
                key,
                range_end,
                start_revision,
            }),
        };
        self.stream("/etcdserverpb.Watch/Watch", create).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_ends_raise_the_last_byte_below_0xff() {
        assert_eq!(prefix_end(b"/a/"), b"/a0".to_vec());
        assert_eq!(prefix_end(b"a\xff"), b"b".to_vec());
        assert_eq!(prefix_end(b"\xff\xff"), vec![0]);
        assert_eq!(prefix_end(b""), vec![0]);
        assert_eq!(prefix_bounds(b""), (vec![0], vec![0]));
        assert_eq!(prefix_bounds(b"/a"), (b"/a".to_vec(), b"/b".to_vec()));
    }

    /// The bytes of a transaction as etcd's definitions give them, written out by hand:
    /// field 1 (compare), 2 (success), 3 (failure), each length-delimited.
    #[test]
    fn a_transaction_encodes_with_etcds_field_numbers() {
        let txn = TxnRequest {
            compare: vec![Compare {
                result: COMPARE_EQUAL,
                target: TARGET_MOD,
                key: b"k".to_vec(),
                with: Some(CompareWith::ModRevision(5)),
            }],
            success: vec![RequestOp {
                request: Some(Operation::Put(PutRequest {
                    key: b"k".to_vec(),
                    value: b"v".to_vec(),
                    lease: 7,
                })),
            }],
            failure: vec![RequestOp {
                request: Some(Operation::DeleteRange(DeleteRangeRequest {
                    key: b"k".to_vec(),
                    range_end: Vec::new(),
                })),
            }],
        };
        let expected: Vec<u8> = vec![
            // compare: target=2 (tag 2, varint), key "k" (tag 3), mod_revision 5 (tag 6)
            0x0a, 0x07, 0x10, 0x02, 0x1a, 0x01, b'k', 0x30, 0x05,
            // success: request_put (tag 2) { key "k", value "v", lease 7 }
            0x12, 0x0a, 0x12, 0x08, 0x0a, 0x01, b'k', 0x12, 0x01, b'v', 0x18, 0x07,
            // failure: request_delete_range (tag 3) { key "k" }
            0x1a, 0x05, 0x1a, 0x03, 0x0a, 0x01, b'k',
        ];
        assert_eq!(txn.encode_to_vec(), expected);
    }

    #[test]
    fn a_watch_answer_decodes_from_etcds_field_numbers() {
        // created (3) true, compact_revision (5) 9, cancel_reason (6) "x", one event (11):
        // type DELETE (1), kv (2) { key "k" (1), mod_revision (3) 4 }.
        let bytes: Vec<u8> = vec![
            0x18, 0x01, 0x28, 0x09, 0x32, 0x01, b'x', 0x5a, 0x09, 0x08, 0x01, 0x12, 0x05, 0x0a,
            0x01, b'k', 0x18, 0x04,
        ];
        let answer = WatchResponse::decode(bytes.as_slice()).unwrap();
        assert!(answer.created && !answer.canceled);
        assert_eq!(answer.compact_revision, 9);
        assert_eq!(answer.cancel_reason, "x");
        assert_eq!(answer.events[0].kind, EVENT_DELETE);
        let kv = answer.events[0].kv.as_ref().unwrap();
        assert_eq!((kv.key.as_slice(), kv.mod_revision), (&b"k"[..], 4));
    }
}
