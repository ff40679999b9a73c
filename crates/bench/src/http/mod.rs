//! The load generator's hand-written HTTP/1.1 client.
//!
//! What it is: request bytes ([`request`]), a response parser that is a pure function of the
//! bytes received so far ([`response`]) and a blocking keep-alive connection ([`connection`]).
//!
//! What it is not: a general client (no TLS, no pipelining, no redirects). It exists so the
//! benchmark thread's cost per request is one write and usually one read, and so that the
//! client is not the bottleneck of a measurement.

pub mod connection;
pub mod request;
pub mod response;
