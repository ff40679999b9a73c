//! [`ApiConfig`]: the server's settings that the API needs.
//!
//! What it is: plain values, filled by the `quince` binary from its options and read by every
//! layer of the crate through [`crate::Api::config`].
//!
//! What it is not: option parsing (the binary does that) or mutable: the settings are fixed
//! once the API is created.
//!
//! Invariants: the defaults are ArangoDB's (see `crate::limits`); `queue_size_max` is at least
//! one and `json_depth_max` at most the model's depth limit, which [`crate::Api::open`] asserts.

use crate::limits;

/// The server's settings that the API needs.
#[derive(Clone, Debug)]
pub struct ApiConfig {
    /// `--server.authentication`: when false every request runs as root.
    pub authentication: bool,
    /// Root's password.
    pub root_password: String,
    /// The HS256 secret that signs tokens (`--server.jwt-secret-keyfile`, the first file of
    /// `--server.jwt-secret-folder`, or random when empty).
    pub jwt_secret: Vec<u8>,
    /// Further secrets that verify tokens but do not sign them (the other files of
    /// `--server.jwt-secret-folder`), for rotation.
    pub jwt_passive_secrets: Vec<Vec<u8>>,
    /// `--server.authentication-system-only`: when true, only paths starting with `/_` need
    /// credentials.
    pub authentication_system_only: bool,
    /// `--http.max-body-size`, applied before and after decompression.
    pub body_size_max: usize,
    /// `--http.max-import-size`: the bound on a `POST /_api/import` body (which streams, so
    /// it may be far larger than `body_size_max`), before and after decompression.
    pub import_size_max: usize,
    /// `--http.max-json-depth`.
    pub json_depth_max: usize,
    /// `--http.max-reply-size`: the most bytes one reply may have (and, times
    /// [`crate::reply_budget::SHARED_REPLIES`], all large replies being built at once).
    pub reply_size_max: usize,
    /// `--server.maximal-queue-size`: requests in flight at once.
    pub queue_size_max: usize,
    /// The most asynchronous jobs one user may have queued or running (a share of
    /// `queue_size_max`: [`limits::jobs_per_user_max`]).
    pub jobs_per_user_max: usize,
    /// The endpoint the server listens on (`http://127.0.0.1:8529`), for `/_admin/echo`
    /// and status replies.
    pub endpoint: String,
    /// `--http.static-dir`: the directory served as static files (none when absent).
    pub static_dir: Option<std::path::PathBuf>,
    /// `--http.static-prefix`: where the static directory is mounted (`/_static`).
    pub static_prefix: String,
    /// `--query.memory-limit`: the bytes one query may hold (0: no limit); a query's own
    /// `memoryLimit` may only lower it.
    pub query_memory_limit: u64,
    /// `--query.global-memory-limit`: the bytes all queries (and the results their cursors
    /// keep) may hold together (0: no limit).
    pub query_global_memory_limit: u64,
    /// `--server.api-call-recording`: keep the recent API calls for
    /// `/_admin/server/api-calls`.
    pub api_call_recording: bool,
    /// `--server.options-api`: who may read `/_admin/options*` (arangod's default: `jwt`).
    pub options_api: super::ApiPolicy,
    /// `--server.support-info-api`: who may read `/_admin/support-info` (default: `admin`).
    pub support_info_api: super::ApiPolicy,
    /// `--log.api-enabled`: who may use `/_admin/log*` (default `true`: administrators).
    pub log_api: super::ApiPolicy,
    /// `--log.recording-api-enabled`: who may read `/_admin/server/api-calls` (default
    /// `true`: administrators).
    pub recording_api: super::ApiPolicy,
    /// `--http.compress-response-threshold`: replies with a body of at least this many bytes
    /// are compressed when the client accepts gzip or deflate (0: never, the default).
    pub compress_response_threshold: u64,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            authentication: true,
            jwt_passive_secrets: Vec::new(),
            authentication_system_only: true,
            root_password: String::new(),
            jwt_secret: Vec::new(),
            body_size_max: limits::BODY_SIZE_MAX_DEFAULT,
            import_size_max: limits::IMPORT_SIZE_MAX_DEFAULT,
            json_depth_max: limits::JSON_DEPTH_MAX_DEFAULT,
            reply_size_max: limits::REPLY_SIZE_MAX_DEFAULT,
            queue_size_max: limits::QUEUE_SIZE_MAX_DEFAULT,
            jobs_per_user_max: limits::jobs_per_user_max(limits::QUEUE_SIZE_MAX_DEFAULT),
            endpoint: "http://127.0.0.1:8529".to_string(),
            static_dir: None,
            static_prefix: crate::static_files::PREFIX_DEFAULT.to_string(),
            query_memory_limit: limits::QUERY_MEMORY_LIMIT_DEFAULT,
            query_global_memory_limit: 0,
            api_call_recording: true,
            options_api: super::ApiPolicy::Jwt,
            support_info_api: super::ApiPolicy::Admin,
            log_api: super::ApiPolicy::Admin,
            recording_api: super::ApiPolicy::Admin,
            compress_response_threshold: 0,
        }
    }
}
