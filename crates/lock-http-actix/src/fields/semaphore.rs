//! `limit`, `permits` and `value`: a semaphore's limit and the permits an acquire asks for, and
//! the value stored with a lease (any JSON value, kept as its compact text).

use lock_domain::{Capacity, LeaseValue, Weight, MAX_LEASE_VALUE_BYTES, MAX_SEMAPHORE_LIMIT};
use serde_json::value::RawValue;
use utoipa::openapi::schema::{KnownFormat, SchemaFormat, SchemaType};
use utoipa::openapi::{Object, ObjectBuilder, Type};

use super::given;
use super::integer::{self, JsonInteger};
use crate::problem::FieldError;

const LIMIT: &str = "limit";
const PERMITS: &str = "permits";
const VALUE: &str = "value";

#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
fn count(description: String, maximum: u32, example: u32) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
        .description(Some(description))
        .example(Some(example.into()))
        .minimum(Some(1))
        .maximum(Some(maximum))
        .build()
}

/// The schema of a semaphore's `limit`.
pub(crate) fn limit_schema() -> Object {
    count(
        format!(
            "The semaphore's limit: the live holders' permits add up to at most this, 1 to \
             {MAX_SEMAPHORE_LIMIT}. Every live holder uses the same limit: another one answers \
             409 `/problems/limit-mismatch` until no holder is live."
        ),
        MAX_SEMAPHORE_LIMIT,
        8,
    )
}

/// The schema of an acquire's `permits`.
pub(crate) fn permits_schema() -> Object {
    count(
        "How many permits to take, 1 (the default) to `limit`. An owner holds at most one grant \
         per semaphore: acquiring again with the same permits re-grants it (same fencing token), \
         with other permits answers 409 `/problems/permits-mismatch`."
            .to_owned(),
        MAX_SEMAPHORE_LIMIT,
        1,
    )
}

/// The schema of a lease's `value` in a request.
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn value_schema(what: &str) -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::AnyValue)
        .description(Some(format!(
            "{what} Any JSON value whose compact text is at most {MAX_LEASE_VALUE_BYTES} bytes \
             (larger: 422 `too_long`); `null` is the same as absent."
        )))
        .example(Some(serde_json::json!({"host": "10.0.0.7", "port": 8443})))
        .build()
}

/// The schema of a required `value` (a proclaim's): any JSON value but `null`, which would be
/// read as absent. A `oneOf` of the five other types, since a 3.1 type array is what generators
/// get wrong.
pub(crate) fn required_value_schema(what: &str) -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{OneOfBuilder, Schema, Type};
    let mut one_of = OneOfBuilder::new().description(Some(format!(
        "{what} Any JSON value but `null`, whose compact text is at most {MAX_LEASE_VALUE_BYTES} \
         bytes (larger: 422 `too_long`)."
    )));
    // An array's items are any JSON value: generators refuse an array schema without `items`.
    one_of = one_of
        .item(ObjectBuilder::new().schema_type(Type::Object))
        .item(
            utoipa::openapi::schema::ArrayBuilder::new()
                .items(ObjectBuilder::new().schema_type(SchemaType::AnyValue)),
        );
    for kind in [Type::String, Type::Number, Type::Boolean] {
        one_of = one_of.item(ObjectBuilder::new().schema_type(kind));
    }
    Schema::OneOf(
        one_of
            .examples([serde_json::json!({"host": "10.0.0.7", "port": 8443})])
            .build(),
    )
}

fn count_field(field: &str, raw: &RawValue, max: u32) -> Result<u32, FieldError> {
    let range = format!("an integer between 1 and {max}");
    let out_of_range =
        || FieldError::new(field, "out_of_range", format!("{field} must be {range}"));
    match integer::read(raw.get()) {
        JsonInteger::Value(n) if (1..=i64::from(max)).contains(&n) => Ok(n as u32),
        JsonInteger::Value(_) | JsonInteger::Huge => Err(out_of_range()),
        JsonInteger::NotInteger => Err(FieldError::new(
            field,
            "invalid_type",
            format!(
                "{field} must be {range} (a JSON integer, not {:.32})",
                raw.get()
            ),
        )),
    }
}

/// The `limit` field: a required integer in `1..=10000`.
///
/// # Errors
/// `required` (absent or `null`), `invalid_type`, `out_of_range`.
pub(crate) fn limit_field(raw: Option<&RawValue>) -> Result<Capacity, FieldError> {
    let raw = given(raw).ok_or_else(|| {
        FieldError::new(
            LIMIT,
            "required",
            format!("limit is required: an integer between 1 and {MAX_SEMAPHORE_LIMIT}"),
        )
    })?;
    let limit = count_field(LIMIT, raw, MAX_SEMAPHORE_LIMIT)?;
    Capacity::semaphore_limit(i64::from(limit))
        .map_err(|e| FieldError::new(LIMIT, e.code(), format!("limit {e}")))
}

/// The optional `permits` field: an integer in `1..=limit` (`1..=10000` when the limit itself
/// is invalid); absent is 1.
///
/// # Errors
/// `invalid_type` (`null` included), `out_of_range`.
pub(crate) fn permits_field(
    raw: Option<&RawValue>,
    limit: Option<Capacity>,
) -> Result<Weight, FieldError> {
    let max = limit.map_or(MAX_SEMAPHORE_LIMIT, Capacity::get);
    let permits = match raw {
        None => 1,
        Some(raw) => count_field(PERMITS, raw, max)?,
    };
    let limit = limit.unwrap_or(
        Capacity::semaphore_limit(i64::from(max))
            .map_err(|e| FieldError::new(PERMITS, e.code(), format!("permits {e}")))?,
    );
    Weight::permits(i64::from(permits), limit)
        .map_err(|e| FieldError::new(PERMITS, e.code(), format!("permits {e}")))
}

/// The optional `value` field: any JSON value, kept as its compact text; absent or `null` is
/// none.
///
/// # Errors
/// `too_long` past [`MAX_LEASE_VALUE_BYTES`] of compact JSON; `invalid_value` for a string with
/// a lone surrogate escape.
pub(crate) fn value_field(raw: Option<&RawValue>) -> Result<Option<LeaseValue>, FieldError> {
    let Some(raw) = given(raw) else {
        return Ok(None);
    };
    // Valid JSON text may still hold a string no strict parser reads back (a lone surrogate
    // escape, `"\ud800"`): such a value would be stored and then break every client reading it.
    if serde_json::from_str::<serde_json::Value>(raw.get()).is_err() {
        return Err(FieldError::new(
            VALUE,
            "invalid_value",
            "value must be JSON that decodes to Unicode text (no lone surrogate escapes)",
        ));
    }
    LeaseValue::parse(compact(raw.get()))
        .map(Some)
        .map_err(|e| FieldError::new(VALUE, e.code(), format!("value {e}")))
}

/// The text of valid JSON without the whitespace outside its strings: exactly the value,
/// numbers and escapes as written (no reformatting, no rounding).
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            out.push(c);
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !matches!(c, ' ' | '\t' | '\n' | '\r') {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::parse_object;

    /// A body, and the (limit, permits) read from it or the first error as "field code".
    type Case = (&'static str, Result<(u32, u32), &'static str>);

    #[test]
    fn limit_and_permits_table() {
        let cases: &[Case] = &[
            (r#"{"limit": 8}"#, Ok((8, 1))),
            (r#"{"limit": 8, "permits": 8}"#, Ok((8, 8))),
            (r#"{"limit": 8.0, "permits": 3e0}"#, Ok((8, 3))),
            (r#"{"limit": 10000}"#, Ok((10_000, 1))),
            (r#"{"limit": 10001}"#, Err("limit out_of_range")),
            (r#"{"limit": 0}"#, Err("limit out_of_range")),
            (r#"{"limit": -1}"#, Err("limit out_of_range")),
            (r#"{"limit": 1e400}"#, Err("limit out_of_range")),
            (r#"{"limit": "8"}"#, Err("limit invalid_type")),
            (r#"{"limit": null}"#, Err("limit required")),
            (r#"{}"#, Err("limit required")),
            (r#"{"limit": 8, "permits": 9}"#, Err("permits out_of_range")),
            (r#"{"limit": 8, "permits": 0}"#, Err("permits out_of_range")),
            (
                r#"{"limit": 8, "permits": null}"#,
                Err("permits invalid_type"),
            ),
            (
                r#"{"limit": 8, "permits": 1.5}"#,
                Err("permits invalid_type"),
            ),
        ];
        for (json, expected) in cases {
            let fields = parse_object(json.as_bytes()).expect("an object");
            let limit = limit_field(fields.limit);
            let permits = permits_field(fields.permits, limit.as_ref().ok().copied());
            let got = match (limit, permits) {
                (Ok(limit), Ok(permits)) => Ok((limit.get(), permits.get())),
                (Err(e), _) | (_, Err(e)) => Err(format!("{} {}", e.field, e.code)),
            };
            assert_eq!(got, expected.map_err(str::to_owned), "{json}");
        }
    }

    #[test]
    fn values_are_kept_compact_and_exact() {
        let value_of = |json: &str| {
            let fields = parse_object(json.as_bytes()).expect("an object");
            value_field(fields.value).map(|v| v.map(|v| v.as_str().to_owned()))
        };
        assert_eq!(value_of("{}"), Ok(None));
        assert_eq!(value_of(r#"{"value": null}"#), Ok(None));
        assert_eq!(
            value_of("{\"value\": { \"a\" : [1, 2.50, 12345678901234567890123],\n \"s\": \"x \\\" y\" }}"),
            Ok(Some(r#"{"a":[1,2.50,12345678901234567890123],"s":"x \" y"}"#.to_owned()))
        );
        assert_eq!(
            value_of(r#"{"value": "  spaced  "}"#),
            Ok(Some(r#""  spaced  ""#.to_owned()))
        );
        let big = format!(r#"{{"value": "{}"}}"#, "a".repeat(MAX_LEASE_VALUE_BYTES));
        assert_eq!(
            value_of(&big).map_err(|e| e.code),
            Err("too_long".to_owned())
        );
    }
}
