//! Starting and stopping `lockd` processes, and a small HTTP client for them.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{mpsc, Mutex};
use std::time::{Duration, Instant};

use lock_store_diesel::testing::TestDatabase;
use serde_json::Value;

/// A running `lockd`. Killed (SIGKILL) when dropped.
pub struct TestServer {
    child: Child,
    pub base: String,
    client: Client,
    stderr_lines: Mutex<mpsc::Receiver<String>>,
}

/// The lockd under test: this build's, or the one `LOCKD_E2E_BINARY` names (to show that a new
/// test fails on an older build).
pub fn lockd_binary() -> PathBuf {
    std::env::var_os("LOCKD_E2E_BINARY")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_lockd")), PathBuf::from)
}

impl TestServer {
    /// Starts lockd on the database with extra arguments, and waits for its "listening on" line.
    /// Drop the server before the database: a PostgreSQL test database is dropped with it.
    pub fn start(db: &TestDatabase, extra: &[&str]) -> Self {
        Self::start_on(&db.url_string(), extra)
    }

    /// Starts lockd on a database URL (for instance one that goes through a proxy).
    pub fn start_on(database_url: &str, extra: &[&str]) -> Self {
        Self::start_with_env(database_url, extra, &[])
    }

    /// [`TestServer::start_on`], with these variables added to lockd's environment.
    pub fn start_with_env(database_url: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut command = Command::new(lockd_binary());
        command.envs(env.iter().copied());
        command
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--database-url",
                database_url,
            ])
            .args(extra)
            // Quiet unless the test asks for a log level of its own.
            .env("LOCKD_LOG", "warn")
            .env_remove("DATABASE_URL")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = command.spawn().expect("spawn lockd");
        let stderr = child.stderr.take().expect("piped stderr");
        let (lines_tx, lines_rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut seen = Vec::new();
        let base = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines_rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(addr) = line.strip_prefix("listening on ") {
                        break addr.trim().to_owned();
                    }
                    seen.push(line);
                }
                Err(_) => {
                    let _ = child.kill();
                    panic!("lockd did not start listening; stderr: {seen:#?}");
                }
            }
        };
        Self {
            child,
            client: Client::new(&base),
            base,
            stderr_lines: Mutex::new(lines_rx),
        }
    }

    /// A client of this server that reports a missing answer instead of panicking.
    pub fn client(&self) -> Client {
        self.client.clone()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends SIGKILL and reaps the process.
    pub fn kill9(mut self) {
        self.child.kill().expect("kill -9 lockd");
        self.child.wait().expect("reap lockd");
    }

    /// Sends SIGTERM and waits up to `within` for the exit status.
    pub fn terminate(mut self, within: Duration) -> ExitStatus {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM failed");
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait lockd") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "lockd did not exit within {within:?} of SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything lockd wrote to stderr since the last call (after start-up).
    pub fn drain_stderr(&self) -> Vec<String> {
        self.stderr_lines
            .lock()
            .expect("stderr lines")
            .try_iter()
            .collect()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends a request with an optional JSON body (as `application/json`) and returns status,
    /// content type and the parsed body (`Value::Null` when empty, a string when not JSON).
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Reply {
        answered(self.client.send(method, path, body))
    }

    /// Like [`TestServer::send`], with one extra header (e.g. `Authorization`).
    pub fn send_with_header(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        header: (&str, &str),
    ) -> Reply {
        answered(self.client.send_with_header(method, path, body, header))
    }

    /// A `GET` with the given headers.
    pub fn get_with_headers(&self, path: &str, headers: &[(&str, &str)]) -> Reply {
        let mut request = self.client.agent.request("GET", &self.url(path));
        for (name, value) in headers {
            request = request.set(name, value);
        }
        Reply::from(request.call())
    }

    /// Sends a raw body with the given content type (or none).
    pub fn send_raw(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Reply {
        let mut request = self.client.agent.request(method, &self.url(path));
        if let Some(content_type) = content_type {
            request = request.set("content-type", content_type);
        }
        Reply::from(request.send_bytes(body))
    }

    pub fn acquire(&self, resource: &str, owner: &str, ttl: i64) -> Reply {
        answered(self.client.acquire(resource, owner, ttl))
    }

    pub fn status(&self, resource: &str) -> Reply {
        answered(self.client.status(resource))
    }

    pub fn release(&self, resource: &str, owner: &str) -> Reply {
        answered(self.client.release(resource, owner))
    }

    pub fn renew(&self, resource: &str, owner: &str, ttl: i64) -> Reply {
        answered(self.client.renew(resource, owner, ttl))
    }
}

fn answered(result: Result<Reply, NoReply>) -> Reply {
    result.unwrap_or_else(|failure| panic!("{failure}"))
}

/// An HTTP client of one lockd. It reports an exchange without a whole answer as [`NoReply`]
/// instead of panicking, for tests in which the server goes away. Clones share connections.
#[derive(Clone)]
pub struct Client {
    agent: ureq::Agent,
    base: String,
}

impl Client {
    pub fn new(base: &str) -> Self {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(30))
            .max_idle_connections_per_host(128)
            .build();
        Self {
            agent,
            base: base.to_owned(),
        }
    }

    /// Sends a request with an optional JSON body (as `application/json`).
    ///
    /// # Errors
    /// [`NoReply`] when no response arrived or its body broke off.
    pub fn send(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Reply, NoReply> {
        self.send_request(
            self.agent.request(method, &format!("{}{path}", self.base)),
            body,
        )
    }

    /// Like [`Client::send`], with one extra header (e.g. `Authorization`).
    ///
    /// # Errors
    /// [`NoReply`] when no response arrived or its body broke off.
    pub fn send_with_header(
        &self,
        method: &str,
        path: &str,
        body: Option<&Value>,
        (name, value): (&str, &str),
    ) -> Result<Reply, NoReply> {
        let request = self.agent.request(method, &format!("{}{path}", self.base));
        self.send_request(request.set(name, value), body)
    }

    fn send_request(&self, request: ureq::Request, body: Option<&Value>) -> Result<Reply, NoReply> {
        Reply::read(match body {
            Some(body) => request
                .set("content-type", "application/json")
                .send_string(&body.to_string()),
            None => request.call(),
        })
    }

    pub fn acquire(&self, resource: &str, owner: &str, ttl: i64) -> Result<Reply, NoReply> {
        self.send(
            "POST",
            &format!("/locks/{resource}"),
            Some(&serde_json::json!({"owner": owner, "ttl_seconds": ttl})),
        )
    }

    pub fn status(&self, resource: &str) -> Result<Reply, NoReply> {
        self.send("GET", &format!("/locks/{resource}"), None)
    }

    pub fn release(&self, resource: &str, owner: &str) -> Result<Reply, NoReply> {
        self.send(
            "DELETE",
            &format!("/locks/{resource}"),
            Some(&serde_json::json!({"owner": owner})),
        )
    }

    pub fn renew(&self, resource: &str, owner: &str, ttl: i64) -> Result<Reply, NoReply> {
        self.send(
            "POST",
            &format!("/locks/{resource}/renew"),
            Some(&serde_json::json!({"owner": owner, "ttl_seconds": ttl})),
        )
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One HTTP answer.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub content_type: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl From<Result<ureq::Response, ureq::Error>> for Reply {
    fn from(result: Result<ureq::Response, ureq::Error>) -> Self {
        Reply::read(result).unwrap_or_else(|failure| panic!("{failure}"))
    }
}

/// Why an exchange produced no whole answer.
#[derive(Debug, Clone)]
pub enum NoReply {
    /// No response arrived: the connection was refused, reset or closed first.
    Transport(String),
    /// A response began, but its body broke off.
    Cut(String),
}

impl std::fmt::Display for NoReply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoReply::Transport(error) => write!(f, "transport error: {error}"),
            NoReply::Cut(error) => write!(f, "response body cut: {error}"),
        }
    }
}

impl Reply {
    /// The whole answer of an exchange, or why there is none.
    ///
    /// # Errors
    /// [`NoReply`] when no response arrived or its body broke off.
    pub fn read(result: Result<ureq::Response, ureq::Error>) -> Result<Self, NoReply> {
        let response = match result {
            Ok(response) | Err(ureq::Error::Status(_, response)) => response,
            Err(error) => return Err(NoReply::Transport(error.to_string())),
        };
        let status = response.status();
        let content_type = response
            .header("content-type")
            .unwrap_or_default()
            .to_owned();
        let headers = response
            .headers_names()
            .into_iter()
            .map(|name| {
                let value = response.header(&name).unwrap_or_default().to_owned();
                (name, value)
            })
            .collect();
        let text = response
            .into_string()
            .map_err(|error| NoReply::Cut(format!("{status}: {error}")))?;
        let body = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        Ok(Reply {
            status,
            content_type,
            headers,
            body,
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The lock of a granted acquire.
    pub fn granted(&self) -> &Value {
        assert_eq!(self.status, 200, "{self:?}");
        assert_eq!(self.body["acquired"], true, "{self:?}");
        &self.body["lock"]
    }

    pub fn token(&self) -> i64 {
        self.granted()["fencing_token"]
            .as_i64()
            .expect("integer token")
    }

    /// Asserts a problem+json answer with this status and slug.
    pub fn assert_problem(&self, status: u16, slug: &str) {
        assert_eq!(self.status, status, "{self:?}");
        assert_eq!(self.content_type, "application/problem+json", "{self:?}");
        let kind = self.body["type"].as_str().unwrap_or_default();
        assert!(kind.ends_with(slug), "type {kind:?} should end in {slug}");
        assert_eq!(self.body["status"], status, "{self:?}");
        assert!(
            self.body["title"].is_string() && self.body["detail"].is_string(),
            "{self:?}"
        );
        assert!(
            self.body["instance"]
                .as_str()
                .is_some_and(|i| i.starts_with('/')),
            "{self:?}"
        );
    }

    /// The `code`s of a 422 answer's `errors`, by field.
    pub fn error_codes(&self) -> Vec<(String, String)> {
        self.assert_problem(422, "validation-failed");
        self.body["errors"]
            .as_array()
            .expect("errors list")
            .iter()
            .map(|e| {
                (
                    e["field"].as_str().unwrap_or_default().to_owned(),
                    e["code"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }
}

/// Parses an RFC 3339 timestamp and checks the contract's exact shape (UTC `Z`, 3 digits).
pub fn timestamp_ms(value: &Value) -> i64 {
    let text = value.as_str().expect("timestamp string");
    assert_eq!(text.len(), "2026-11-29T21:32:27.123Z".len(), "{text}");
    assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
    chrono_like_parse(text)
}

/// Milliseconds since the epoch of `YYYY-MM-DDTHH:MM:SS.mmmZ` (no external date crate needed).
fn chrono_like_parse(text: &str) -> i64 {
    let num = |range: std::ops::Range<usize>| text[range].parse::<i64>().expect("digits");
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let (hour, minute, second, milli) = (num(11..13), num(14..16), num(17..19), num(20..23));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1_000 + milli
}

#[test]
fn timestamp_parser_agrees_with_known_instants() {
    assert_eq!(chrono_like_parse("1970-01-01T00:00:00.000Z"), 0);
    assert_eq!(
        chrono_like_parse("2026-11-29T21:32:27.123Z"),
        1_795_987_947_123
    );
}

/// lockd run under `prlimit --nofile=SOFT:HARD` on `database_url`, logging at info.
pub struct LimitedLockd {
    pub child: std::process::Child,
    pub port: u16,
    /// What it logged before it said where it listens (the rest is read and dropped).
    pub start_up: Vec<String>,
}

impl LimitedLockd {
    pub fn start(nofile: &str, database_url: &str) -> Self {
        let mut child = Command::new("prlimit")
            .arg(format!("--nofile={nofile}"))
            .arg(lockd_binary())
            .args([
                "serve",
                "--bind",
                "127.0.0.1:0",
                "--database-url",
                database_url,
            ])
            .env("LOCKD_LOG", "info")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prlimit (util-linux) starts lockd");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut start_up = Vec::new();
        let port = loop {
            let line = lines
                .next()
                .expect("lockd says where it listens")
                .expect("a line");
            if let Some(addr) = line.strip_prefix("listening on http://") {
                break addr
                    .rsplit(':')
                    .next()
                    .and_then(|port| port.parse().ok())
                    .expect("a port");
            }
            start_up.push(line);
        };
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            port,
            start_up,
        }
    }
}

impl Drop for LimitedLockd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
