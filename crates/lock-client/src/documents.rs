//! The server's own JSON documents, for tools that show them as they are (lockd's operator
//! commands): a read of one route, a force-release, and the event stream (`GET /events`).
//! Unlike the typed calls, nothing here picks the answer apart beyond what a caller must branch
//! on (found or not, the events one by one).

use std::io::{BufRead, BufReader};
use std::time::Duration;

use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value;

use crate::client::{read_text, segment, unexpected};
use crate::{ClientError, LockClient};

/// Everything but RFC 3986 unreserved characters is escaped in a query value (so `+`, `&` and
/// `=` in a prefix or a reason reach the server as given).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// How long the event stream may be silent before it counts as gone: three of the server's
/// keep-alive comments (one every 15 s) missed.
const EVENT_SILENCE: Duration = Duration::from_secs(45);

/// What a name is the name of: each has a namespace and routes of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    Lock,
    Semaphore,
    Election,
}

impl Primitive {
    /// The route of `name`: `/locks/{name}`, `/semaphores/{name}` or `/elections/{name}`, the
    /// name escaped as one path segment.
    pub fn path(self, name: &str) -> String {
        let collection = match self {
            Primitive::Lock => "locks",
            Primitive::Semaphore => "semaphores",
            Primitive::Election => "elections",
        };
        format!("/{collection}/{}", segment(name))
    }

    /// The query parameter of a fence check: `token`, or an election's `term`.
    pub fn fence_parameter(self) -> &'static str {
        match self {
            Primitive::Election => "term",
            Primitive::Lock | Primitive::Semaphore => "token",
        }
    }

    /// `lock`, `semaphore` or `election`, as the history's `kind` says it.
    pub fn kind(self) -> &'static str {
        match self {
            Primitive::Lock => "lock",
            Primitive::Semaphore => "semaphore",
            Primitive::Election => "election",
        }
    }
}

/// `path?name=value&...`, each value escaped.
pub fn with_query(path: &str, query: &[(&str, &str)]) -> String {
    let mut url = path.to_owned();
    for (index, (name, value)) in query.iter().enumerate() {
        url.push(if index == 0 { '?' } else { '&' });
        url.push_str(name);
        url.push('=');
        url.push_str(&utf8_percent_encode(value, QUERY_VALUE).to_string());
    }
    url
}

/// One event of the stream: its `id:` and its `data:` (a history record).
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub id: Option<String>,
    pub data: Value,
}

/// The events of `GET /events` as they come. The iterator ends when the server ends the stream
/// (it is stopping, or says in a comment why: [`EventStream::last_comment`]); a connection lost
/// or silent for 45 s is an error item, after which it ends.
pub struct EventStream {
    lines: std::io::Lines<BufReader<Box<dyn std::io::Read + Send + Sync>>>,
    last_comment: Option<String>,
    broken: bool,
}

impl EventStream {
    /// The last comment the server sent other than its keep-alives: why it ended the stream,
    /// when it said.
    pub fn last_comment(&self) -> Option<&str> {
        self.last_comment.as_deref()
    }
}

impl Iterator for EventStream {
    type Item = Result<Event, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.broken {
            return None;
        }
        let (mut id, mut data) = (None, String::new());
        loop {
            let line = match self.lines.next()? {
                Ok(line) => line,
                Err(error) => {
                    self.broken = true;
                    return Some(Err(ClientError::Transport(format!(
                        "the event stream broke off: {error}"
                    ))));
                }
            };
            if line.is_empty() {
                if data.is_empty() {
                    continue;
                }
                return Some(match serde_json::from_str(&data) {
                    Ok(data) => Ok(Event { id, data }),
                    Err(_) => Err(unexpected(200, data)),
                });
            }
            if let Some(comment) = line.strip_prefix(':') {
                let comment = comment.trim();
                if comment != "keep-alive" {
                    self.last_comment = Some(comment.to_owned());
                }
            } else if let Some(value) = field(&line, "id") {
                id = Some(value.to_owned());
            } else if let Some(value) = field(&line, "data") {
                if !data.is_empty() {
                    data.push('\n');
                }
                data.push_str(value);
            }
        }
    }
}

/// A 200 answer's JSON document.
fn json_document(status: u16, text: String) -> Result<Value, ClientError> {
    match serde_json::from_str(&text) {
        Ok(document) if status == 200 => Ok(document),
        _ => Err(unexpected(status, text)),
    }
}

/// The value of an event stream field line `name: value` (one space after the colon is not
/// part of the value).
fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let value = line.strip_prefix(name)?.strip_prefix(':')?;
    Some(value.strip_prefix(' ').unwrap_or(value))
}

impl LockClient {
    /// `GET path?query` (values escaped here): the document answered.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer, an error answer (a 404 for a name nothing
    /// holds is a [`ClientError::Problem`] like any other), or a body that is not JSON.
    pub fn document(&self, path: &str, query: &[(&str, &str)]) -> Result<Value, ClientError> {
        let url = with_query(path, query);
        let (status, text) = self.exchange("GET", &url, None, self.request_timeout())?;
        json_document(status, text)
    }

    /// Ends every live lease of `primitive` `name` whoever holds it (an admin key's right),
    /// keeping `reason` in the history: the server's answer, `{"force_released": [...]}`.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer: 404 when nothing was held,
    /// 403 `/problems/admin-required` for a key that is not an admin key, 422 for a bad reason.
    pub fn force_release(
        &self,
        primitive: Primitive,
        name: &str,
        reason: &str,
    ) -> Result<Value, ClientError> {
        let url = with_query(
            &primitive.path(name),
            &[("force", "true"), ("reason", reason)],
        );
        let (status, text) = self.exchange("DELETE", &url, None, self.request_timeout())?;
        json_document(status, text)
    }

    /// Follows the tenant's events from now on (`GET /events?query`). Returns once the server
    /// has answered, so every record committed after the return is in the stream.
    ///
    /// # Errors
    /// [`ClientError`] when there is no answer or an error answer (422 for a bad prefix, 429
    /// over the tenant's max_observers).
    pub fn events(&self, query: &[(&str, &str)]) -> Result<EventStream, ClientError> {
        // A stream has no end to wait for: this agent bounds the connect and each read (the
        // server's keep-alives come every 15 s), not the whole exchange.
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(self.connect_timeout())
            .timeout_read(EVENT_SILENCE)
            .build();
        let accept = "text/event-stream, application/problem+json";
        let path = with_query("/events", query);
        let response = self.send_with(&agent, accept, ("GET", &path), None, None)?;
        let status = response.status();
        if status != 200 {
            return Err(unexpected(status, read_text(response)?));
        }
        let reader: Box<dyn std::io::Read + Send + Sync> = Box::new(response.into_reader());
        Ok(EventStream {
            lines: BufReader::new(reader).lines(),
            last_comment: None,
            broken: false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_escaped() {
        assert_eq!(
            with_query("/locks/a", &[("force", "true"), ("reason", "a b+c&d=é")]),
            "/locks/a?force=true&reason=a%20b%2Bc%26d%3D%C3%A9"
        );
        assert_eq!(with_query("/locks", &[]), "/locks");
        assert_eq!(Primitive::Election.path("x/y"), "/elections/x%2Fy");
    }

    fn stream(text: &'static str) -> EventStream {
        let reader: Box<dyn std::io::Read + Send + Sync> = Box::new(text.as_bytes());
        EventStream {
            lines: BufReader::new(reader).lines(),
            last_comment: None,
            broken: false,
        }
    }

    #[test]
    fn events_are_read_one_by_one_and_comments_kept() {
        let mut events = stream(
            ": keep-alive\n\nid: 7\ndata: {\"id\":7}\n\nid: 8\ndata:{\"id\":8}\n\n: the lock database is unavailable\n\n",
        );
        let first = events.next().unwrap().unwrap();
        assert_eq!(first.id.as_deref(), Some("7"));
        assert_eq!(first.data, serde_json::json!({"id": 7}));
        assert_eq!(events.next().unwrap().unwrap().data["id"], 8);
        assert!(events.next().is_none());
        assert_eq!(
            events.last_comment(),
            Some("the lock database is unavailable")
        );
    }
}
