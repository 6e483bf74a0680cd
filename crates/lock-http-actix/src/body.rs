//! Reading and parsing request bodies, in the contract's order of precedence: 415 (media type),
//! 413 (size), 400 (not a JSON object), then 422 (field values) in the handlers.

use std::time::Duration;

use actix_web::http::header;
use actix_web::web::{self, Bytes, BytesMut};
use actix_web::{HttpMessage, HttpRequest};
use futures::StreamExt;
use lock_domain::{Owner, Ttl};
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::problem::{FieldError, ProblemKind};
use crate::MAX_BODY_BYTES;

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
/// Unknown fields are ignored; a known field given twice is a 400.
/// A field given as `null` is kept (as the raw text `null`), so that it is refused like any other
/// wrong value instead of being taken for an absent field.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct LockFields<'a> {
    #[serde(borrow, default, deserialize_with = "present")]
    pub owner: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub ttl_seconds: Option<&'a RawValue>,
    #[serde(borrow, default, deserialize_with = "present")]
    pub wait_seconds: Option<&'a RawValue>,
}

fn present<'de, D>(deserializer: D) -> Result<Option<&'de RawValue>, D::Error>
where
    D: serde::Deserializer<'de>,
{
    <&RawValue>::deserialize(deserializer).map(Some)
}

fn is_null(raw: &RawValue) -> bool {
    raw.get() == "null"
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

/// The `owner` field: a required JSON string, trimmed and validated by the domain.
pub(crate) fn owner_field(raw: Option<&RawValue>) -> Result<Owner, FieldError> {
    let raw = raw
        .filter(|raw| !is_null(raw))
        .ok_or_else(|| FieldError::new("owner", "required", "owner is required: a JSON string"))?;
    let text: String = serde_json::from_str(raw.get()).map_err(|_| {
        FieldError::new(
            "owner",
            "invalid_type",
            "owner must be a JSON string of valid Unicode",
        )
    })?;
    Owner::parse(&text).map_err(|e| FieldError::new("owner", e.code(), format!("owner {e}")))
}

/// The `ttl_seconds` field: a required JSON integer in `1..=max_seconds`.
pub(crate) fn ttl_field(raw: Option<&RawValue>, max_seconds: u32) -> Result<Ttl, FieldError> {
    let range = format!("an integer number of seconds between 1 and {max_seconds}");
    let raw = raw.filter(|raw| !is_null(raw)).ok_or_else(|| {
        FieldError::new(
            "ttl_seconds",
            "required",
            format!("ttl_seconds is required: {range}"),
        )
    })?;
    let text = raw.get();
    let seconds = match serde_json::from_str::<i64>(text) {
        Ok(seconds) => seconds,
        Err(_) if is_integer_literal(text) => {
            return Err(FieldError::new(
                "ttl_seconds",
                "out_of_range",
                format!("ttl_seconds must be {range}"),
            ))
        }
        Err(_) => {
            return Err(FieldError::new(
                "ttl_seconds",
                "invalid_type",
                format!("ttl_seconds must be {range} (a JSON integer, not {text:.32})"),
            ))
        }
    };
    Ttl::parse(seconds, max_seconds)
        .map_err(|e| FieldError::new("ttl_seconds", e.code(), format!("ttl_seconds {e}")))
}

/// The optional `wait_seconds` field of an acquire: a JSON integer in `0..=max_seconds`; absent
/// or `null` is 0 (do not wait).
pub(crate) fn wait_field(raw: Option<&RawValue>, max_seconds: u32) -> Result<u32, FieldError> {
    let range = format!("an integer number of seconds between 0 and {max_seconds}");
    let Some(raw) = raw.filter(|raw| !is_null(raw)) else {
        return Ok(0);
    };
    let text = raw.get();
    match serde_json::from_str::<i64>(text) {
        Ok(seconds) => u32::try_from(seconds)
            .ok()
            .filter(|seconds| *seconds <= max_seconds)
            .ok_or_else(|| {
                FieldError::new(
                    "wait_seconds",
                    "out_of_range",
                    format!("wait_seconds must be {range}"),
                )
            }),
        Err(_) if is_integer_literal(text) => Err(FieldError::new(
            "wait_seconds",
            "out_of_range",
            format!("wait_seconds must be {range}"),
        )),
        Err(_) => Err(FieldError::new(
            "wait_seconds",
            "invalid_type",
            format!("wait_seconds must be {range} (a JSON integer, not {text:.32})"),
        )),
    }
}

fn is_integer_literal(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> LockFields<'_> {
        parse_object(json.as_bytes()).expect("an object")
    }

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

    #[test]
    fn ttl_table() {
        let cases: &[(&str, Result<u32, &str>)] = &[
            (r#"{"ttl_seconds": 30}"#, Ok(30)),
            (r#"{"ttl_seconds": 86400}"#, Ok(86_400)),
            (r#"{"ttl_seconds": 86401}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": 0}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": -5}"#, Err("out_of_range")),
            (
                r#"{"ttl_seconds": 9223372036854775808}"#,
                Err("out_of_range"),
            ),
            (
                r#"{"ttl_seconds": -9223372036854775809}"#,
                Err("out_of_range"),
            ),
            (r#"{"ttl_seconds": 60.5}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": 60.0}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": 6e1}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": 1e400}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": "3600"}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": true}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": [60]}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": null}"#, Err("required")),
            (r#"{}"#, Err("required")),
        ];
        for (json, expected) in cases {
            let got = ttl_field(fields(json).ttl_seconds, 86_400)
                .map(Ttl::seconds)
                .map_err(|e| e.code);
            assert_eq!(got, expected.map_err(str::to_owned), "{json}");
        }
    }

    #[test]
    fn wait_table() {
        let cases: &[(&str, Result<u32, &str>)] = &[
            (r#"{}"#, Ok(0)),
            (r#"{"wait_seconds": null}"#, Ok(0)),
            (r#"{"wait_seconds": 0}"#, Ok(0)),
            (r#"{"wait_seconds": 1}"#, Ok(1)),
            (r#"{"wait_seconds": 60}"#, Ok(60)),
            (r#"{"wait_seconds": 61}"#, Err("out_of_range")),
            (r#"{"wait_seconds": -1}"#, Err("out_of_range")),
            (r#"{"wait_seconds": 4294967296}"#, Err("out_of_range")),
            (
                r#"{"wait_seconds": 99999999999999999999999}"#,
                Err("out_of_range"),
            ),
            (r#"{"wait_seconds": 1.5}"#, Err("invalid_type")),
            (r#"{"wait_seconds": 5.0}"#, Err("invalid_type")),
            (r#"{"wait_seconds": 1e1}"#, Err("invalid_type")),
            (r#"{"wait_seconds": "5"}"#, Err("invalid_type")),
            (r#"{"wait_seconds": true}"#, Err("invalid_type")),
            (r#"{"wait_seconds": [5]}"#, Err("invalid_type")),
            (r#"{"wait_seconds": {}}"#, Err("invalid_type")),
        ];
        for (json, expected) in cases {
            let got = wait_field(fields(json).wait_seconds, 60).map_err(|e| e.code);
            assert_eq!(got, expected.map_err(str::to_owned), "{json}");
        }
    }

    #[test]
    fn owner_table() {
        let cases: &[(&str, Result<&str, &str>)] = &[
            (r#"{"owner": "worker-7"}"#, Ok("worker-7")),
            (r#"{"owner": "  worker-7 "}"#, Ok("worker-7")),
            (r#"{"owner": "w\u00e9"}"#, Ok("wé")),
            (r#"{"owner": ""}"#, Err("empty")),
            (r#"{"owner": " \t "}"#, Err("empty")),
            (r#"{"owner": "a\u0000b"}"#, Err("control_character")),
            (r#"{"owner": 7}"#, Err("invalid_type")),
            (r#"{"owner": {"name": "x"}}"#, Err("invalid_type")),
            (r#"{"owner": null}"#, Err("required")),
            (r#"{}"#, Err("required")),
        ];
        for (json, expected) in cases {
            let got = owner_field(fields(json).owner);
            match expected {
                Ok(owner) => assert_eq!(
                    got.map(Owner::into_string),
                    Ok((*owner).to_owned()),
                    "{json}"
                ),
                Err(code) => assert_eq!(got.map_err(|e| e.code), Err((*code).to_owned()), "{json}"),
            }
        }
        let long = format!(r#"{{"owner": "{}"}}"#, "o".repeat(256));
        assert_eq!(
            owner_field(fields(&long).owner).map_err(|e| e.code),
            Err("too_long".to_owned())
        );
    }
}
