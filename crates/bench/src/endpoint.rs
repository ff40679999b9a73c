//! Server endpoints as ArangoDB's clients spell them: `tcp://HOST:PORT`, `http+tcp://…`,
//! `http://…`.
//!
//! What it is: syntax checking ([`Endpoint::parse`]) and name resolution
//! ([`Endpoint::resolve`]), and the rule that spreads threads over endpoints (thread `i` uses
//! endpoint `i mod k`, as arangobench since 3.9).
//!
//! What it is not: TLS or unix sockets: `ssl://`, `http+ssl://` and `unix://` are refused with
//! a message rather than silently misused.
//!
//! Invariants: a parsed endpoint always has a port (8529 when none is written).

use std::net::{SocketAddr, ToSocketAddrs};

/// One server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// As written on the command line.
    pub text: String,
    /// `host:port`, also the `Host` header.
    pub host_port: String,
}

impl Endpoint {
    /// Checks the syntax of an endpoint.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let lower = text.to_ascii_lowercase();
        if [
            "ssl://",
            "http+ssl://",
            "https://",
            "unix://",
            "http+unix://",
        ]
        .iter()
        .any(|scheme| lower.starts_with(scheme))
        {
            return Err(format!(
                "endpoint '{text}': ssl and unix sockets are not supported (use tcp://HOST:PORT)"
            ));
        }
        let rest = ["tcp://", "http+tcp://", "http://"]
            .iter()
            .find_map(|scheme| lower.starts_with(scheme).then(|| &text[scheme.len()..]))
            .ok_or_else(|| format!("endpoint '{text}': expected tcp://HOST:PORT"))?;
        let rest = rest.trim_end_matches('/');
        if rest.is_empty() || rest.contains('/') || rest.contains(' ') {
            return Err(format!("endpoint '{text}': expected tcp://HOST:PORT"));
        }
        let has_port = if rest.starts_with('[') {
            rest.contains("]:")
        } else {
            rest.contains(':')
        };
        let host_port = if has_port {
            let port = rest.rsplit(':').next().unwrap_or_default();
            if port.parse::<u16>().is_err() {
                return Err(format!("endpoint '{text}': '{port}' is not a port number"));
            }
            rest.to_string()
        } else {
            format!("{rest}:8529")
        };
        Ok(Endpoint {
            text: text.to_string(),
            host_port,
        })
    }

    /// The first socket address the host name resolves to.
    pub fn resolve(&self) -> Result<SocketAddr, String> {
        self.host_port
            .to_socket_addrs()
            .map_err(|e| format!("endpoint '{}': cannot resolve: {e}", self.text))?
            .next()
            .ok_or_else(|| format!("endpoint '{}': the name has no address", self.text))
    }
}

/// The endpoint a thread uses: thread `i` of `k` endpoints uses endpoint `i mod k`.
pub fn for_thread(thread: u64, endpoints: usize) -> usize {
    assert!(endpoints > 0, "at least one endpoint");
    (thread % endpoints as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_and_default_port() {
        assert_eq!(
            Endpoint::parse("tcp://127.0.0.1:9").unwrap().host_port,
            "127.0.0.1:9"
        );
        assert_eq!(Endpoint::parse("http+tcp://h").unwrap().host_port, "h:8529");
        assert_eq!(
            Endpoint::parse("http://[::1]:7/").unwrap().host_port,
            "[::1]:7"
        );
        assert!(Endpoint::parse("ssl://h:1")
            .unwrap_err()
            .contains("not supported"));
        assert!(Endpoint::parse("h:1").is_err());
        assert!(Endpoint::parse("tcp://h:x").unwrap_err().contains("port"));
        assert!(Endpoint::parse("tcp://h:1/path").is_err());
    }

    #[test]
    fn threads_spread_round_robin() {
        let spread: Vec<usize> = (0..5).map(|t| for_thread(t, 2)).collect();
        assert_eq!(spread, [0, 1, 0, 1, 0]);
    }
}
