//! The bounds of the request pipeline and their defaults, in one place.
//!
//! What it is: constants. The configurable ones are defaults of [`crate::ApiConfig`]; the
//! fixed ones (URL length, token lifetime) are ArangoDB's values.
//!
//! What it is not: enforcement. The pipeline and the listener apply these numbers.

/// The longest request target (path and query) accepted; longer ones get 414, as in ArangoDB.
pub const URL_LENGTH_MAX: usize = 16 * 1024;

/// The most bytes of request headers (names and values) accepted; more get 431, as in
/// ArangoDB. The listener lets somewhat larger heads through so that this check, with its
/// JSON error body, is the one clients see.
pub const HEADER_BYTES_MAX: usize = 64 * 1024;

/// Default bound on a request body, before and after decompression (`--http.max-body-size`).
pub const BODY_SIZE_MAX_DEFAULT: usize = 512 * 1024 * 1024;

/// Default bound on the body of one `POST /_api/import`, before and after decompression
/// (`--http.max-import-size`). Imports stream, so this bounds time and disk, not memory.
pub const IMPORT_SIZE_MAX_DEFAULT: usize = 16 << 30;

/// Default bound on the size of one reply (`--http.max-reply-size`): as large as a body may be.
pub const REPLY_SIZE_MAX_DEFAULT: usize = BODY_SIZE_MAX_DEFAULT;

/// The default of `--query.memory-limit`: 2 GiB per query.
pub const QUERY_MEMORY_LIMIT_DEFAULT: u64 = 2 << 30;

/// Default bound on the nesting of JSON bodies (`--http.max-json-depth`).
pub const JSON_DEPTH_MAX_DEFAULT: usize = 64;

/// Default bound on requests queued or in flight at once (`--server.maximal-queue-size`).
pub const QUEUE_SIZE_MAX_DEFAULT: usize = 4096;

/// Lifetime of a token issued by `POST /_open/auth` (ArangoDB's `--server.session-timeout`).
pub const TOKEN_LIFETIME_SECS: u64 = 3600;

/// The most query parameters one request may carry; more are a client error, not work to do.
pub const QUERY_PARAMS_MAX: usize = 256;

/// The version of ArangoDB whose API Quince speaks, reported by `/_api/version`.
pub const ARANGODB_VERSION: &str = "3.12.4";

/// One user may have at most this share (1/N) of `--server.maximal-queue-size` in
/// asynchronous jobs queued or running.
pub const JOBS_PER_USER_SHARE: usize = 4;

/// The most asynchronous jobs one user may have queued or running with a queue bound of
/// `queue_size_max`.
pub fn jobs_per_user_max(queue_size_max: usize) -> usize {
    (queue_size_max / JOBS_PER_USER_SHARE).max(1)
}

/// The most password checks (Argon2, tens of milliseconds each) waiting at once; more get
/// 503/21003, so that wrong passwords cannot occupy the whole request queue.
pub const PASSWORD_CHECKS_MAX: usize = 64;

/// The largest body of a request whose caller did not authenticate (open paths: a login is a
/// few hundred bytes).
pub const UNAUTHENTICATED_BODY_MAX: usize = 64 * 1024;
