//! The connection of both tools to the server, and the JSON requests they send on it.
//!
//! What it is: [`connect`], the one function that turns `--server.*` options into a
//! connection (endpoint syntax, name resolution, credentials by the shared password rule),
//! and [`Server`], a keep-alive connection with the head every request carries, that sends a
//! request and returns the status and the parsed JSON body. [`Server::another`] opens a second
//! connection to the same server (one per worker thread), through the same function.
//!
//! What it is not: TLS itself. For an `ssl://` endpoint the client crate's
//! [`quince_client::Target`] carries the TLS configuration (built once, from `--ssl.cafile` or
//! the system's roots), and every connection [`open`] makes speaks TLS.
//!
//! Invariants: every request goes to `/_db/<database>/…`; a transport failure or an answer
//! that is not JSON is an error naming the endpoint, never a panic; a request is never resent.

use std::time::Duration;

use quince_client::{Connection, Endpoint, Method, RequestHead, Timeouts};
use serde_json::Value;

use crate::options::ServerArgs;

/// arangodump's defaults: `--server.connection-timeout 5`, `--server.request-timeout 1200`.
const TIMEOUTS: Timeouts = Timeouts {
    connect: Duration::from_secs(5),
    request: Duration::from_secs(1200),
};

/// Where the server is and how to log in: what a further connection needs.
#[derive(Clone)]
struct Target {
    /// The resolved address, and TLS for `ssl://`.
    address: quince_client::Target,
    /// As written on the command line, for messages.
    endpoint: String,
    host_port: String,
    credentials: Option<(String, String)>,
}

/// A connection to one database of the server.
pub struct Server {
    target: Target,
    connection: Connection,
    head: RequestHead,
    database: String,
    /// A request's bytes, kept to reuse the allocation.
    request: Vec<u8>,
}

/// One answer: the HTTP status and the body as JSON (`Null` when empty).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub body: Value,
}

impl Reply {
    /// True for a 2xx status.
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The server's `errorNum` (0 when none).
    pub fn error_num(&self) -> u64 {
        self.body
            .get("errorNum")
            .and_then(Value::as_u64)
            .unwrap_or(0)
    }

    /// The server's message for a failed request: `errorMessage (HTTP status, errorNum N)`.
    pub fn error(&self) -> String {
        let message = self
            .body
            .get("errorMessage")
            .and_then(Value::as_str)
            .unwrap_or("no message");
        format!(
            "{message} (HTTP {}, errorNum {})",
            self.status,
            self.error_num()
        )
    }
}

/// Opens a connection to the server the options name, for `database`.
pub fn connect(args: &ServerArgs, database: &str) -> Result<Server, String> {
    let endpoint = Endpoint::parse(&args.endpoint)?;
    let address = quince_client::Target::resolve(&endpoint, args.ssl_cafile.as_deref())?;
    let credentials = args.authentication.then(|| {
        let password = quince_client::password(args.password.clone()).unwrap_or_default();
        (args.username.clone(), password)
    });
    let target = Target {
        address,
        endpoint: args.endpoint.clone(),
        host_port: endpoint.host_port,
        credentials,
    };
    Ok(open(target, database))
}

/// The one place a connection is made (lazily: the socket opens on the first request).
fn open(target: Target, database: &str) -> Server {
    let mut head = RequestHead::new(database, &target.host_port, true);
    if let Some((user, password)) = &target.credentials {
        head = head.with_basic_auth(user, password);
    }
    Server {
        connection: Connection::to(target.address.clone(), TIMEOUTS),
        target,
        head,
        database: database.to_owned(),
        request: Vec::new(),
    }
}

impl Server {
    /// Another connection to the same server, for `database`.
    pub fn another(&self, database: &str) -> Server {
        open(self.target.clone(), database)
    }

    /// The database this connection's requests go to.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The endpoint as the options wrote it.
    pub fn endpoint(&self) -> &str {
        &self.target.endpoint
    }

    /// Checks that the server answers and takes the credentials (`GET /_api/version`), so
    /// that a wrong endpoint or password stops a tool before it writes anything.
    pub fn check(&mut self) -> Result<(), String> {
        let reply = self.json(Method::Get, "/_api/version", None)?;
        if !reply.ok() {
            return Err(format!(
                "the server at {} refused GET /_api/version: {}",
                self.target.endpoint,
                reply.error()
            ));
        }
        Ok(())
    }

    /// Sends a request with an optional JSON body.
    pub fn json(
        &mut self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Reply, String> {
        let bytes = body.map(|b| b.to_string().into_bytes());
        self.send(method, path, "application/json", bytes.as_deref(), None)
    }

    /// Sends a request, inside stream transaction `trx` when given.
    pub fn send(
        &mut self,
        method: Method,
        path: &str,
        content_type: &str,
        body: Option<&[u8]>,
        trx: Option<&str>,
    ) -> Result<Reply, String> {
        let extra = trx.map_or(String::new(), |id| format!("x-arango-trx-id: {id}\r\n"));
        let mut request = std::mem::take(&mut self.request);
        request.clear();
        self.head
            .write_with_headers(&mut request, method, path, &extra, content_type, body);
        let result = self.connection.exchange(&request);
        self.request = request;
        let reply = result
            .map_err(|e| format!("cannot reach the server at {}: {e}", self.target.endpoint))?;
        let bytes = reply.body(self.connection.buffer());
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(bytes).map_err(|e| {
                format!(
                    "the server at {} answered {} {method:?} {path} with a body that is not JSON: {e}",
                    self.target.endpoint, reply.status
                )
            })?
        };
        let reply = Reply {
            status: reply.status,
            body,
        };
        if reply.status == 401 {
            return Err(format!(
                "the server at {} refused the credentials of user '{}': {}",
                self.target.endpoint,
                self.target
                    .credentials
                    .as_ref()
                    .map_or("(none)", |(user, _)| user.as_str()),
                reply.error()
            ));
        }
        Ok(reply)
    }
}
