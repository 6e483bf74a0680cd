//! lockd under sessions: a session opened, kept alive and ended over one connection, and W1's
//! cycle with each client acquiring and releasing under a session of its own (W1S).

use std::io;
use std::sync::Mutex;

use crate::http::HttpConnection;
use crate::workload::{LockClient, LockSystem};

/// Opens a session of `ttl_seconds` labelled `owner`; its id.
///
/// # Errors
/// When lockd answers anything but `201` with a session, or the connection fails.
pub async fn open(conn: &mut HttpConnection, owner: &str, ttl_seconds: u64) -> io::Result<String> {
    let body = format!(r#"{{"ttl_seconds":{ttl_seconds},"owner":"{owner}"}}"#);
    let answer = conn
        .request("POST", "/sessions", Some(body.as_bytes()))
        .await?;
    match answer.status {
        201 => session_id(&answer.body)
            .ok_or_else(|| io::Error::other("a session opened without an id")),
        status => Err(io::Error::other(format!(
            "opening a session answered {status}"
        ))),
    }
}

/// Moves the session's end to now plus its TTL; `Ok(false)` when lockd answers anything but
/// `200` (`404`: the session ended, and every hold with it).
pub async fn keep_alive(conn: &mut HttpConnection, id: &str) -> io::Result<bool> {
    let path = format!("/sessions/{id}/keepalive");
    Ok(conn.request("POST", &path, None).await?.status == 200)
}

/// Ends the session and every hold under it; `Ok(false)` when lockd answers anything but `204`.
pub async fn close(conn: &mut HttpConnection, id: &str) -> io::Result<bool> {
    let path = format!("/sessions/{id}");
    Ok(conn.request("DELETE", &path, None).await?.status == 204)
}

/// The id in an open's answer, `{"session": {"id": ..., ...}}`.
fn session_id(body: &[u8]) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_slice(body).ok()?;
    answer["session"]["id"].as_str().map(str::to_owned)
}

/// lockd with every client under a session of its own (W1S): the client opens it as it
/// connects, then acquires with `{"session": id}` and releases with `?session=id`.
pub struct LockdSessionSystem {
    addr: String,
    /// Long enough for a whole run, so that the cycles need no keepalive (one every ttl/3 would
    /// be one request among thousands).
    ttl_seconds: u64,
    /// The sessions the clients opened, for [`LockdSessionSystem::close_all`].
    opened: Mutex<Vec<String>>,
}

impl LockdSessionSystem {
    pub fn new(addr: &str, ttl_seconds: u64) -> Self {
        Self {
            addr: addr.to_owned(),
            ttl_seconds,
            opened: Mutex::new(Vec::new()),
        }
    }

    /// Ends every session the clients opened; how many could not be ended.
    pub async fn close_all(&self) -> u64 {
        let ids = std::mem::take(&mut *self.opened.lock().expect("the sessions' list"));
        let Ok(mut conn) = HttpConnection::connect(&self.addr).await else {
            return ids.len() as u64;
        };
        let mut failed = 0;
        for id in ids {
            if !matches!(close(&mut conn, &id).await, Ok(true)) {
                failed += 1;
            }
        }
        failed
    }
}

pub struct LockdSessionClient {
    conn: HttpConnection,
    session: String,
    acquire_body: Vec<u8>,
}

impl LockSystem for LockdSessionSystem {
    type Client = LockdSessionClient;

    async fn connect(&self, client: usize) -> io::Result<LockdSessionClient> {
        let mut conn = HttpConnection::connect(&self.addr).await?;
        let session = open(&mut conn, &format!("bench-{client}"), self.ttl_seconds).await?;
        self.opened
            .lock()
            .expect("the sessions' list")
            .push(session.clone());
        Ok(LockdSessionClient {
            conn,
            acquire_body: format!(r#"{{"session":"{session}"}}"#).into_bytes(),
            session,
        })
    }
}

impl LockClient for LockdSessionClient {
    async fn acquire(&mut self, resource: &str) -> io::Result<bool> {
        let answer = self
            .conn
            .request(
                "POST",
                &format!("/locks/{resource}"),
                Some(&self.acquire_body),
            )
            .await?;
        match answer.status {
            200 => Ok(answer.body.starts_with(br#"{"acquired":true"#)),
            status => Err(io::Error::other(format!(
                "acquire under a session answered {status}"
            ))),
        }
    }

    async fn release(&mut self, resource: &str) -> io::Result<bool> {
        let path = format!("/locks/{resource}?session={}", self.session);
        Ok(self.conn.request("DELETE", &path, None).await?.status == 204)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The id comes from the `session` object of the answer, wherever it stands in it.
    #[test]
    fn the_id_of_an_opened_session() {
        let answer = br#"{"session":{"id":"q7Hc0mB1TzK4n9XwVd2aLg","owner":"w","ttl_seconds":30}}"#;
        assert_eq!(
            session_id(answer).as_deref(),
            Some("q7Hc0mB1TzK4n9XwVd2aLg")
        );
        let reordered = br#"{"session":{"owner":"w","id":"abc"}}"#;
        assert_eq!(session_id(reordered).as_deref(), Some("abc"));
        assert_eq!(session_id(br#"{"id":"abc"}"#), None);
        assert_eq!(session_id(b"not json"), None);
    }
}
