//! TCP smoke tests of the `quince` binary: it starts on port 0, prints its ready line, answers
//! over real sockets (credentials, unknown paths, HTTP/1.0 keep-alive, body limits, gzip
//! bodies), reads a configuration file, refuses unknown options with exit code 2, and exits
//! 0 on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long the server may take to print its ready line or to exit.
const WAIT: Duration = Duration::from_secs(30);

const PASSWORD: &str = "smoke-pw";

/// A running server process, killed on drop if still alive.
struct Server {
    child: Option<Child>,
    port: u16,
}

impl Server {
    fn start(data_dir: &Path, extra: &[&str]) -> Server {
        Server::start_in(Path::new("."), &data_dir.display().to_string(), extra)
    }

    /// Starts the server with `cwd` as its working directory (so `data_dir` may be relative).
    fn start_in(cwd: &Path, data_dir: &str, extra: &[&str]) -> Server {
        let mut args = vec![
            "serve".to_string(),
            "--server.endpoint".into(),
            "tcp://127.0.0.1:0".into(),
            "--database.directory".into(),
            data_dir.to_string(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let mut child = Command::new(env!("CARGO_BIN_EXE_quince"))
            .args(&args)
            .current_dir(cwd)
            .env_remove("QUINCE_ROOT_PASSWORD")
            .env_remove("ARANGO_ROOT_PASSWORD")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the quince binary starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (lines, ready) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines.send(line).is_err() {
                    break;
                }
            }
        });
        let line = ready.recv_timeout(WAIT).expect("the ready line");
        let port = line
            .strip_prefix("quince: listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected ready line {line:?}"))
            .trim()
            .parse()
            .expect("a port number");
        Server {
            child: Some(child),
            port,
        }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).expect("connects");
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }

    /// Sends SIGTERM and returns the exit code.
    fn terminate(mut self) -> Option<i32> {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success());
        let (done, exited) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = done.send(child.wait().map(|s| s.code()));
        });
        exited
            .recv_timeout(WAIT)
            .expect("the server exits after SIGTERM")
            .expect("wait succeeds")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// One response: status, lower-cased headers, body (read by Content-Length).
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

fn read_response(reader: &mut BufReader<TcpStream>) -> Response {
    let mut status_line = String::new();
    reader.read_line(&mut status_line).expect("status line");
    let status = status_line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("bad status line {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("header line");
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        let (name, value) = line.split_once(':').expect("a header");
        headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .map(|(_, v)| v.parse().expect("a length"))
        .expect("every reply has a Content-Length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).expect("the body");
    Response {
        status,
        headers,
        body,
    }
}

fn basic() -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(format!("root:{PASSWORD}"));
    format!("Authorization: Basic {encoded}\r\n")
}

/// Sends one request on a fresh connection and reads the reply.
fn call(server: &Server, head: &str, body: &[u8]) -> Response {
    let mut stream = server.connect();
    let mut bytes = head.as_bytes().to_vec();
    bytes.extend_from_slice(body);
    stream.write_all(&bytes).unwrap();
    read_response(&mut BufReader::new(stream))
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn serves_over_tcp_and_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        dir.path(),
        &[
            "--database.password",
            PASSWORD,
            "--http.max-body-size",
            "4096",
        ],
    );

    let anonymous = call(
        &server,
        "GET /_api/version HTTP/1.1\r\nHost: t\r\n\r\n",
        b"",
    );
    assert_eq!(anonymous.status, 401);
    assert_eq!(anonymous.json()["errorNum"], 11);
    assert!(anonymous.header("www-authenticate").is_some());

    let head = format!("GET /_api/version HTTP/1.1\r\nHost: t\r\n{}\r\n", basic());
    let version = call(&server, &head, b"");
    assert_eq!(version.status, 200);
    assert_eq!(version.json()["server"], "arango");
    assert_eq!(version.header("server"), Some("ArangoDB"));

    let head = format!("GET /_api/nowhere HTTP/1.1\r\nHost: t\r\n{}\r\n", basic());
    let unknown = call(&server, &head, b"");
    assert_eq!(unknown.status, 404);
    assert_eq!(
        unknown.json(),
        serde_json::json!({"error": true, "errorNum": 404,
            "errorMessage": "unknown path '/_api/nowhere'", "code": 404})
    );

    // HTTP/1.0 keep-alive as `ab -k` uses it: two requests on one connection.
    let stream = server.connect();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    for _ in 0..2 {
        let head = format!(
            "GET /_api/version HTTP/1.0\r\nConnection: Keep-Alive\r\n{}\r\n",
            basic()
        );
        writer.write_all(head.as_bytes()).unwrap();
        let reply = read_response(&mut reader);
        assert_eq!(reply.status, 200);
        assert_eq!(
            reply.header("connection").map(str::to_ascii_lowercase),
            Some("keep-alive".to_string())
        );
    }

    let big = vec![b'x'; 10_000];
    let head = format!(
        "POST /_admin/echo HTTP/1.1\r\nHost: t\r\n{}Content-Length: {}\r\n\r\n",
        basic(),
        big.len()
    );
    let too_large = call(&server, &head, &big);
    assert_eq!(too_large.status, 413);
    assert_eq!(too_large.json()["errorNum"], 413);

    let text = br#"{"hello":"quince"}"#;
    let zipped = gzip(text);
    let head = format!(
        "POST /_admin/echo HTTP/1.1\r\nHost: t\r\n{}Content-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        basic(),
        zipped.len()
    );
    let echoed = call(&server, &head, &zipped);
    assert_eq!(echoed.status, 200);
    assert_eq!(echoed.json()["requestBody"], r#"{"hello":"quince"}"#);

    assert_eq!(server.terminate(), Some(0));
}

#[test]
fn configuration_file_sets_options() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("quince.conf");
    std::fs::write(
        &conf,
        "# smoke\n[server]\nauthentication = false\nendpoint = tcp://127.0.0.1:1\n",
    )
    .unwrap();
    // The command line's endpoint (port 0, added by `start`) overrides the file's.
    let data = dir.path().join("data");
    let server = Server::start(&data, &["-c", conf.to_str().unwrap()]);
    let open = call(
        &server,
        "GET /_api/version HTTP/1.1\r\nHost: t\r\n\r\n",
        b"",
    );
    assert_eq!(open.status, 200);
    assert_eq!(server.terminate(), Some(0));
}

/// Regression: a relative data directory with no parent part (`data`) was refused with
/// 1224 "not writable", because creating its missing ancestors tried to create "".
#[test]
fn a_relative_data_directory_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start_in(dir.path(), "data", &[]);
    assert!(dir.path().join("data").join("LOCK").is_file());
    assert_eq!(server.terminate(), Some(0));
    let nested = Server::start_in(dir.path(), "more/data", &[]);
    assert!(dir.path().join("more/data/LOCK").is_file());
    assert_eq!(nested.terminate(), Some(0));
}

#[test]
fn unknown_options_exit_with_code_2() {
    let output = Command::new(env!("CARGO_BIN_EXE_quince"))
        .args(["serve", "--server.no-such-option", "1"])
        .output()
        .expect("the quince binary runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no-such-option"));
}
