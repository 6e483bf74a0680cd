//! `lock_delay_seconds`: how long a lease keeps its place from other owners after it ends by
//! expiry (0 to 60), on an exclusive acquire and a campaign. Absent: the server's default
//! (`--default-lock-delay-seconds`).

use lock_domain::LockDelay;
use serde_json::value::RawValue;
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{Object, ObjectBuilder, Type};

use super::integer::{self, JsonInteger};
use crate::problem::FieldError;

pub(crate) const NAME: &str = "lock_delay_seconds";

/// The schema of `lock_delay_seconds`, described as `what`.
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn schema(what: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .description(Some(format!(
            "{what} in whole seconds, 0 to {}. Absent: the server's default \
             (`--default-lock-delay-seconds`, 0 unless configured). A release ends the lease with \
             no delay.",
            LockDelay::MAX_SECONDS
        )))
        .example(Some(10.into()))
        .minimum(Some(0))
        .maximum(Some(LockDelay::MAX_SECONDS))
        .build()
}

/// The schema of `lock_delay_seconds` where only 0 is accepted (a set of locks).
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn none_schema() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .description(Some(
            "A set's grants have no lock-delay: only 0 is accepted (acquire a lock alone for one).",
        ))
        .example(Some(0.into()))
        .minimum(Some(0))
        .maximum(Some(0))
        .build()
}

/// The optional `lock_delay_seconds` field: an integer in `0..=60`; absent is `default`.
///
/// # Errors
/// `invalid_type` (not an integer, `null` included), `out_of_range`.
pub(crate) fn lock_delay_field(
    raw: Option<&RawValue>,
    default: LockDelay,
) -> Result<LockDelay, FieldError> {
    let Some(raw) = raw else {
        return Ok(default);
    };
    let range = format!(
        "an integer number of seconds between 0 and {}",
        LockDelay::MAX_SECONDS
    );
    let out_of_range = || {
        FieldError::new(
            NAME,
            "out_of_range",
            format!("lock_delay_seconds must be {range}"),
        )
    };
    match integer::read(raw.get()) {
        JsonInteger::Value(seconds) => LockDelay::parse(seconds).map_err(|_| out_of_range()),
        JsonInteger::Huge => Err(out_of_range()),
        JsonInteger::NotInteger => Err(FieldError::new(
            NAME,
            "invalid_type",
            format!(
                "lock_delay_seconds must be {range} (a JSON integer, not {:.32})",
                raw.get()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::parse_object;

    fn parsed(json: &str, default: u32) -> Result<u32, String> {
        let default = LockDelay::parse(i64::from(default)).unwrap();
        lock_delay_field(
            parse_object(json.as_bytes()).unwrap().lock_delay_seconds,
            default,
        )
        .map(LockDelay::seconds)
        .map_err(|e| e.code)
    }

    #[test]
    fn lock_delay_table() {
        let cases: &[(&str, u32, Result<u32, &str>)] = &[
            ("{}", 0, Ok(0)),
            ("{}", 15, Ok(15)),
            (r#"{"lock_delay_seconds": 0}"#, 15, Ok(0)),
            (r#"{"lock_delay_seconds": 60}"#, 0, Ok(60)),
            (r#"{"lock_delay_seconds": 61}"#, 0, Err("out_of_range")),
            (r#"{"lock_delay_seconds": -1}"#, 0, Err("out_of_range")),
            (r#"{"lock_delay_seconds": 1e400}"#, 0, Err("out_of_range")),
            (r#"{"lock_delay_seconds": 1e1}"#, 0, Ok(10)),
            (
                r#"{"lock_delay_seconds": 99999999999999999999}"#,
                0,
                Err("out_of_range"),
            ),
            (r#"{"lock_delay_seconds": 1.5}"#, 0, Err("invalid_type")),
            (r#"{"lock_delay_seconds": "5"}"#, 0, Err("invalid_type")),
            (r#"{"lock_delay_seconds": null}"#, 0, Err("invalid_type")),
        ];
        for (json, default, expected) in cases {
            assert_eq!(
                parsed(json, *default),
                expected.map_err(str::to_owned),
                "{json}"
            );
        }
    }
}
