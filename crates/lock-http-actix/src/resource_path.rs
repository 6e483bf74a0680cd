//! The `{resource}` path segment (and a semaphore's or an election's `{name}`), percent-decoded by our own rules.
//!
//! actix decodes most of the path before routing but keeps `%2F`, `%25` and `+` encoded, so a
//! name containing `/` stays one segment. We take the raw segment from the request URI and decode
//! it once, completely: `%2F` becomes `/`, `+` stays a literal plus, and bytes that are not UTF-8
//! are refused rather than replaced.

use actix_web::HttpRequest;
use lock_domain::ResourceName;
use percent_encoding::percent_decode_str;

use crate::fields::resource::{resource_text, text_named};
use crate::problem::FieldError;

const PREFIX: &str = "/locks/";

/// Parses the resource of a `/locks/{resource}` or `/locks/{resource}/renew` request.
///
/// # Errors
/// A `resource` [`FieldError`]: `invalid_utf8`, or the domain's code.
pub(crate) fn resource_of(req: &HttpRequest) -> Result<ResourceName, FieldError> {
    let raw = req.path().strip_prefix(PREFIX).unwrap_or_default();
    let segment = raw.split('/').next().unwrap_or_default();
    decode(segment)
}

/// Parses the name of a `/semaphores/{name}` or `/semaphores/{name}/renew` request, by the
/// resource rules.
///
/// # Errors
/// A `name` [`FieldError`]: `invalid_utf8`, or the domain's code.
pub(crate) fn semaphore_of(req: &HttpRequest) -> Result<ResourceName, FieldError> {
    let raw = req.path().strip_prefix("/semaphores/").unwrap_or_default();
    let segment = raw.split('/').next().unwrap_or_default();
    let decoded = decode_utf8("name", segment)?;
    text_named("name", decoded)
}

/// Parses the name of an `/elections/{name}[/...]` request, by the resource rules.
///
/// # Errors
/// A `name` [`FieldError`]: `invalid_utf8`, or the domain's code.
pub(crate) fn election_of(req: &HttpRequest) -> Result<ResourceName, FieldError> {
    let raw = req.path().strip_prefix("/elections/").unwrap_or_default();
    let segment = raw.split('/').next().unwrap_or_default();
    let decoded = decode_utf8("name", segment)?;
    text_named("name", decoded)
}

fn decode_utf8(field: &str, segment: &str) -> Result<String, FieldError> {
    percent_decode_str(segment)
        .decode_utf8()
        .map(std::borrow::Cow::into_owned)
        .map_err(|_| {
            FieldError::new(
                field,
                "invalid_utf8",
                format!("{field} must be valid UTF-8 once percent-decoded"),
            )
        })
}

fn decode(segment: &str) -> Result<ResourceName, FieldError> {
    resource_text(decode_utf8("resource", segment)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_table() {
        let long = "a".repeat(256);
        // The limit counts characters: 255 three-byte characters are a valid name.
        let (wide_raw, wide) = ("%E6%97%A5".repeat(255), "日".repeat(255));
        let cases: Vec<(&str, Result<&str, &str>)> = vec![
            ("payment:42", Ok("payment:42")),
            ("a%2Fb", Ok("a/b")),
            ("a%2fb", Ok("a/b")),
            ("a+b", Ok("a+b")),
            ("a%2Bb", Ok("a+b")),
            ("a%20b", Ok("a b")),
            ("100%25", Ok("100%")),
            ("%E6%97%A5", Ok("日")),
            (
                "x'%3B%20DROP%20TABLE%20distributed_locks%3B%20--",
                Ok("x'; DROP TABLE distributed_locks; --"),
            ),
            ("%", Ok("%")),
            ("%zz", Ok("%zz")),
            ("%FF", Err("invalid_utf8")),
            ("%C3", Err("invalid_utf8")),
            ("a%00b", Err("control_character")),
            ("a%0Ab", Err("control_character")),
            (&long, Err("too_long")),
            (&wide_raw, Ok(&wide)),
        ];
        for (raw, expected) in cases {
            let got = decode(raw);
            match expected {
                Ok(name) => assert_eq!(got.map(|n| n.into_string()), Ok(name.to_owned()), "{raw}"),
                Err(code) => assert_eq!(got.map_err(|e| e.code), Err(code.to_owned()), "{raw}"),
            }
        }
    }
}
