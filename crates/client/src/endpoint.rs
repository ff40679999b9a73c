//! Server endpoints as ArangoDB spells them: `tcp://HOST:PORT`, `http+tcp://…`, `http://…`,
//! and over TLS `ssl://HOST:PORT`, `http+ssl://…`, `https://…`.
//!
//! What it is: syntax checking ([`Endpoint::parse`]) and name resolution
//! ([`Endpoint::resolve`]) of `--server.endpoint`, the address `quince serve` listens on and
//! the one Quince's tools connect to. [`Endpoint::tls`] says whether the scheme asks for TLS;
//! whoever opens the socket decides what that takes (certificates, a CA to trust).
//!
//! What it is not: unix sockets: `unix://` and `http+unix://` are refused with a message
//! rather than silently misused.
//!
//! Invariants: a parsed endpoint always has a port (8529 when none is written) that is a valid
//! port number (0 included, for a server that picks one); the scheme is matched without regard
//! to case.

use std::net::{SocketAddr, ToSocketAddrs};

/// One server address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// As written on the command line.
    pub text: String,
    /// `host:port`, also the `Host` header.
    pub host_port: String,
    /// True for `ssl://`, `http+ssl://` and `https://`.
    pub tls: bool,
}

impl Endpoint {
    /// Checks the syntax of an endpoint.
    pub fn parse(text: &str) -> Result<Endpoint, String> {
        let lower = text.to_ascii_lowercase();
        if ["unix://", "http+unix://"]
            .iter()
            .any(|scheme| lower.starts_with(scheme))
        {
            return Err(format!(
                "endpoint '{text}': unix sockets are not supported (use tcp://HOST:PORT or ssl://HOST:PORT)"
            ));
        }
        const SCHEMES: [(&str, bool); 6] = [
            ("tcp://", false),
            ("http+tcp://", false),
            ("http://", false),
            ("ssl://", true),
            ("http+ssl://", true),
            ("https://", true),
        ];
        let (rest, tls) = SCHEMES
            .iter()
            .find_map(|(scheme, tls)| {
                lower
                    .starts_with(scheme)
                    .then(|| (&text[scheme.len()..], *tls))
            })
            .ok_or_else(|| {
                format!("endpoint '{text}': expected tcp://HOST:PORT or ssl://HOST:PORT")
            })?;
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
            tls,
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
        assert!(Endpoint::parse("ssl://h:1").unwrap().tls);
        assert!(!Endpoint::parse("tcp://h:1").unwrap().tls);
        assert!(Endpoint::parse("unix:///s")
            .unwrap_err()
            .contains("not supported"));
        assert!(Endpoint::parse("h:1").is_err());
        assert!(Endpoint::parse("tcp://h:x").unwrap_err().contains("port"));
        assert!(Endpoint::parse("tcp://h:1/path").is_err());
        assert!(Endpoint::parse("tcp://").is_err());
        assert!(Endpoint::parse("tcp://h :1").is_err());
    }

    #[test]
    fn every_spelling_a_tool_or_the_server_takes() {
        let host_port = |text: &str| Endpoint::parse(text).map(|e| e.host_port);
        assert_eq!(host_port("TCP://10.0.0.1").unwrap(), "10.0.0.1:8529");
        assert_eq!(host_port("http://localhost").unwrap(), "localhost:8529");
        assert_eq!(host_port("http+tcp://[::1]:9/").unwrap(), "[::1]:9");
        // A server may listen on port 0 and report the port it got.
        assert_eq!(host_port("http+tcp://localhost:0").unwrap(), "localhost:0");
        assert_eq!(host_port("https://h:1").unwrap(), "h:1");
        assert_eq!(host_port("HTTP+SSL://h").unwrap(), "h:8529");
        for refused in ["unix:///tmp/s", "http+unix:///tmp/s", "127.0.0.1:8529"] {
            assert!(host_port(refused).is_err(), "{refused}");
        }
        assert!(host_port("tcp://h:70000").unwrap_err().contains("port"));
    }

    #[test]
    fn resolving_gives_the_address_of_the_host() {
        let endpoint = Endpoint::parse("tcp://127.0.0.1:8530").unwrap();
        assert_eq!(
            endpoint.resolve().unwrap(),
            "127.0.0.1:8530".parse().unwrap()
        );
        assert_eq!(endpoint.text, "tcp://127.0.0.1:8530");
    }
}
