//! Reading and parsing request bodies, in the contract's order of precedence: 415 (media type),
//! 413 (size), 400 (not a JSON object), then 422 (field values, parsed by `crate::fields`) in the
//! handlers.

use std::time::Duration;

use actix_web::http::header;
use actix_web::web::{self, Bytes, BytesMut};
use actix_web::{HttpMessage, HttpRequest};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::problem::ProblemKind;
use crate::MAX_BODY_BYTES;

// The fields of a lease request are parsed by their definitions (`crate::fields`).
pub(crate) use crate::fields::{owner_field, ttl_field};

/// Whether the request says it carries a body (a positive `Content-Length`, or chunked).
pub(crate) fn declares_body(req: &HttpRequest) -> bool {
    let headers = req.headers();
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|length| length > 0)
}

/// Reads the body of a request whose body is to be JSON.
///
/// # Errors
/// 415 when a `Content-Type` is given and is not `application/json` (parameters allowed); 413
/// when the body is over [`MAX_BODY_BYTES`] (declared or actual, chunked included); 408 when the
/// whole body has not arrived within `timeout`; 400 when the body cannot be read.
pub(crate) async fn read_json_body(
    req: &HttpRequest,
    payload: web::Payload,
    timeout: Duration,
) -> Result<Bytes, ProblemKind> {
    check_media_type(req)?;
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|length| length > MAX_BODY_BYTES as u64) {
        return Err(ProblemKind::PayloadTooLarge);
    }
    // actix bounds the time to receive headers, but not a body: a client stalling mid-body
    // would otherwise hold its connection (and this request) forever.
    tokio::time::timeout(
        timeout,
        read_limited(payload, declared.unwrap_or(0) as usize),
    )
    .await
    .map_err(|_| ProblemKind::RequestTimeout)?
}

async fn read_limited(mut payload: web::Payload, capacity: usize) -> Result<Bytes, ProblemKind> {
    let mut body = BytesMut::with_capacity(capacity);
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| {
            ProblemKind::BadRequest(format!("could not read the request body: {e}"))
        })?;
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(ProblemKind::PayloadTooLarge);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

fn check_media_type(req: &HttpRequest) -> Result<(), ProblemKind> {
    if !req.headers().contains_key(header::CONTENT_TYPE) {
        // A body without a Content-Type is read as JSON.
        return Ok(());
    }
    match req.mime_type() {
        Ok(Some(mime)) if mime.essence_str() == "application/json" => Ok(()),
        _ => {
            let given = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("(not text)");
            Err(ProblemKind::UnsupportedMediaType(format!(
                "request bodies must be application/json, got {given:?}"
            )))
        }
    }
}

/// The fields a lock request may carry, still as raw JSON: their types are checked one by one, so
/// that each wrong field gets its own 422 entry (and `1e400` is a wrong type, not a parse error).
/// Unknown fields are ignored; a known field given twice is a 400. A field given as `null` is kept
/// (as the raw text `null`) and its parser reads it as absent.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LockFields<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub owner: Option<&'a RawValue>,
    /// An election's owner.
    #[serde(borrow, default, deserialize_with = "present")]
    pub candidate: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub ttl_seconds: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub wait_seconds: Option<&'a RawValue>,
    /// A semaphore's limit.
    #[serde(borrow, default, deserialize_with = "present")]
    pub limit: Option<&'a RawValue>,
    /// The permits a semaphore acquire asks for.
    #[serde(borrow, default, deserialize_with = "present")]
    pub permits: Option<&'a RawValue>,
    /// How long a lease keeps its place after it ends by expiry.
    #[serde(borrow, default, deserialize_with = "present")]
    pub lock_delay_seconds: Option<&'a RawValue>,
    /// The value stored with a lease.
    #[serde(borrow, default, deserialize_with = "present")]
    pub value: Option<&'a RawValue>,
    /// How a lock acquire wants to hold the lock.
    #[serde(borrow, default, deserialize_with = "present")]
    pub mode: Option<&'a RawValue>,
    /// The locks of a multi-lock acquire.
    #[serde(borrow, default, deserialize_with = "present")]
    pub locks: Option<&'a RawValue>,
    /// The resources of a release of many.
    #[serde(borrow, default, deserialize_with = "present")]
    pub resources: Option<&'a RawValue>,
    /// The session an acquire holds under, in place of the holder, its TTL and lock-delay.
    #[serde(borrow, default, deserialize_with = "present")]
    pub session: Option<&'a RawValue>,
}

fn present<'de, D>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue>::deserialize(deserializer).map(Some)
}

/// Parses a body that must be a JSON object.
///
/// # Errors
/// 400 when it is empty, not UTF-8, not JSON, not an object, or repeats a known field.
pub(crate) fn parse_object(body: &[u8]) -> Result<LockFields<'_>, ProblemKind> {
    // serde_json skips unknown fields without decoding them: check the whole body first.
    std::str::from_utf8(body)
        .map_err(|e| ProblemKind::BadRequest(format!("the request body is not UTF-8: {e}")))?;
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        None => Err(ProblemKind::BadRequest(
            "the request body is empty; send a JSON object".into(),
        )),
        Some(b'{') => serde_json::from_slice(body).map_err(|e| {
            ProblemKind::BadRequest(format!("the request body is not valid JSON: {e}"))
        }),
        Some(_) => {
            if serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok() {
                Err(ProblemKind::BadRequest(
                    "the request body must be a JSON object".into(),
                ))
            } else {
                Err(ProblemKind::BadRequest(
                    "the request body is not valid JSON".into(),
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_that_are_not_json_objects_are_bad_requests() {
        for body in [
            "",
            "   ",
            "null",
            "[]",
            "[\"o\", 60]",
            "\"x\"",
            "42",
            "{",
            "{\"owner\": }",
            "{} x",
            "{\"owner\":\"a\",\"owner\":\"b\"}",
        ] {
            assert!(
                matches!(
                    parse_object(body.as_bytes()),
                    Err(ProblemKind::BadRequest(_))
                ),
                "{body:?}"
            );
        }
        assert!(matches!(
            parse_object(b"{\"owner\": \"\xff\"}"),
            Err(ProblemKind::BadRequest(_))
        ));
        assert!(parse_object(b"{\"unknown\": [1e400, {}], \"unknown\": 2}").is_ok());
    }
}
