//! `ttl_seconds` and `wait_seconds`: whole numbers of seconds in a lease request's body, bounded
//! by the server's configuration (`ApiSettings::max_ttl_seconds`, `max_wait_seconds`), which the
//! served document's `maximum`s follow.

use lock_domain::Ttl;
use serde_json::value::RawValue;
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{Object, ObjectBuilder, Type};

use super::given;
use super::integer::{self, JsonInteger};
use crate::problem::FieldError;

const TTL: &str = "ttl_seconds";
const WAIT: &str = "wait_seconds";

/// An integer schema of `minimum..=maximum` (written `int64`, like every integer of the API).
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
fn seconds(description: String, minimum: u32, maximum: u32, example: u32) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .description(Some(description))
        .example(Some(example.into()))
        .minimum(Some(minimum))
        .maximum(Some(maximum))
}

/// The schema of `ttl_seconds` on a server whose longest lease is `max_seconds`, described as
/// `what` (in whole seconds, 1 to ...).
pub(crate) fn ttl_schema(what: &str, max_seconds: u32) -> Object {
    // A maximum below 1 is read as 1 (see `Ttl::parse`).
    let max_seconds = max_seconds.max(1);
    seconds(
        format!(
            "{what} in whole seconds, 1 to the server's maximum (`--max-ttl-seconds`, \
             {max_seconds} on this server)."
        ),
        1,
        max_seconds,
        30.min(max_seconds),
    )
    .build()
}

/// The schema of `wait_seconds` (optional) on a server whose longest wait is `max_seconds`,
/// described as `what` (in whole seconds, 0 to ...) and `more`.
pub(crate) fn wait_schema(what: &str, more: &str, max_seconds: u32) -> Object {
    seconds(
        format!(
            "{what} in whole seconds, 0 to the server's maximum (`--max-wait-seconds`, \
             {max_seconds} on this server). Absent or 0: answer at once (`null` is refused, like \
             any value that is not a number). {more}"
        ),
        0,
        max_seconds,
        10.min(max_seconds),
    )
    .build()
}

/// The `ttl_seconds` field: a required integer in `1..=max_seconds`.
///
/// # Errors
/// `required` (absent or `null`), `invalid_type` (not an integer), `out_of_range`.
pub(crate) fn ttl_field(raw: Option<&RawValue>, max_seconds: u32) -> Result<Ttl, FieldError> {
    let range = format!("an integer number of seconds between 1 and {max_seconds}");
    let raw = given(raw).ok_or_else(|| {
        FieldError::new(TTL, "required", format!("ttl_seconds is required: {range}"))
    })?;
    match integer::read(raw.get()) {
        JsonInteger::Value(seconds) => Ttl::parse(seconds, max_seconds)
            .map_err(|e| FieldError::new(TTL, e.code(), format!("ttl_seconds {e}"))),
        JsonInteger::Huge => Err(FieldError::new(
            TTL,
            "out_of_range",
            format!("ttl_seconds must be {range}"),
        )),
        JsonInteger::NotInteger => Err(not_an_integer(TTL, &range, raw)),
    }
}

/// The optional `wait_seconds` field of an acquire: an integer in `0..=max_seconds`; absent is 0
/// (do not wait).
///
/// # Errors
/// `invalid_type` (not an integer, `null` included), `out_of_range`.
pub(crate) fn wait_field(raw: Option<&RawValue>, max_seconds: u32) -> Result<u32, FieldError> {
    let range = format!("an integer number of seconds between 0 and {max_seconds}");
    let Some(raw) = raw else {
        return Ok(0);
    };
    let out_of_range = || {
        FieldError::new(
            WAIT,
            "out_of_range",
            format!("wait_seconds must be {range}"),
        )
    };
    match integer::read(raw.get()) {
        JsonInteger::Value(seconds) => u32::try_from(seconds)
            .ok()
            .filter(|seconds| *seconds <= max_seconds)
            .ok_or_else(out_of_range),
        JsonInteger::Huge => Err(out_of_range()),
        JsonInteger::NotInteger => Err(not_an_integer(WAIT, &range, raw)),
    }
}

fn not_an_integer(field: &str, range: &str, raw: &RawValue) -> FieldError {
    FieldError::new(
        field,
        "invalid_type",
        format!(
            "{field} must be {range} (a JSON integer, not {:.32})",
            raw.get()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{parse_object, LockFields};

    fn fields(json: &str) -> LockFields<'_> {
        parse_object(json.as_bytes()).expect("an object")
    }

    #[test]
    fn ttl_table() {
        let cases: &[(&str, Result<u32, &str>)] = &[
            (r#"{"ttl_seconds": 30}"#, Ok(30)),
            (r#"{"ttl_seconds": 86400}"#, Ok(86_400)),
            (r#"{"ttl_seconds": 237.0}"#, Ok(237)),
            (r#"{"ttl_seconds": 6e1}"#, Ok(60)),
            (r#"{"ttl_seconds": 60.000}"#, Ok(60)),
            (r#"{"ttl_seconds": 86401}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": 86401.0}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": 0}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": -0.0}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": -5}"#, Err("out_of_range")),
            (
                r#"{"ttl_seconds": 9223372036854775808}"#,
                Err("out_of_range"),
            ),
            (
                r#"{"ttl_seconds": -9223372036854775809}"#,
                Err("out_of_range"),
            ),
            (r#"{"ttl_seconds": 1e400}"#, Err("out_of_range")),
            (r#"{"ttl_seconds": 60.5}"#, Err("invalid_type")),
            (r#"{"ttl_seconds": 1e-400}"#, Err("invalid_type")),
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
            (r#"{"wait_seconds": null}"#, Err("invalid_type")),
            (r#"{"wait_seconds": 0}"#, Ok(0)),
            (r#"{"wait_seconds": 1}"#, Ok(1)),
            (r#"{"wait_seconds": 60}"#, Ok(60)),
            (r#"{"wait_seconds": 5.0}"#, Ok(5)),
            (r#"{"wait_seconds": 1e1}"#, Ok(10)),
            (r#"{"wait_seconds": 61}"#, Err("out_of_range")),
            (r#"{"wait_seconds": -1}"#, Err("out_of_range")),
            (r#"{"wait_seconds": 4294967296}"#, Err("out_of_range")),
            (
                r#"{"wait_seconds": 99999999999999999999999}"#,
                Err("out_of_range"),
            ),
            (r#"{"wait_seconds": 1.5}"#, Err("invalid_type")),
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
}
