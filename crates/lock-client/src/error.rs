//! Why a call got no usable answer.

use serde::Deserialize;
use thiserror::Error;

/// One invalid input of a 422 answer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct FieldProblem {
    pub field: String,
    pub code: String,
    #[serde(default)]
    pub message: String,
}

/// An RFC 9457 problem document, as lockd sends with every error status.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Problem {
    /// The HTTP status of the answer.
    #[serde(default)]
    pub status: u16,
    /// The problem type URI reference (it ends in a slug such as `validation-failed`).
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub detail: String,
    /// The invalid inputs of a 422.
    #[serde(default)]
    pub errors: Vec<FieldProblem>,
    /// The `Retry-After` header (503), in seconds.
    #[serde(skip)]
    pub retry_after_seconds: Option<u64>,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}: {}", self.status, self.title, self.detail)
    }
}

/// Why a call produced no typed answer.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The server answered with an error status and a problem document (401, 422, 503, ...).
    #[error("the lock server refused the request: {0}")]
    Problem(Problem),
    /// No answer: the connection was refused or reset, the name did not resolve, or the
    /// request timed out. Whether the server acted on the request is unknown.
    #[error("no answer from the lock server: {0}")]
    Transport(String),
    /// An answer this client does not understand (an unexpected status or body).
    #[error("unexpected answer from the lock server (status {status}): {body}")]
    Unexpected { status: u16, body: String },
}

impl ClientError {
    /// The HTTP status of an answered error, if there was an answer.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Problem(problem) => Some(problem.status),
            Self::Unexpected { status, .. } => Some(*status),
            Self::Transport(_) => None,
        }
    }
}
