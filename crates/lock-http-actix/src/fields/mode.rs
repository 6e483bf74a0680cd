//! `mode`: how an acquire wants to hold a lock, `exclusive` (the default, v1) or `shared`.

use lock_domain::LockMode;
use serde_json::value::RawValue;
use utoipa::openapi::{Object, ObjectBuilder, Type};

use crate::problem::FieldError;

const MODE: &str = "mode";

/// The schema of an acquire's `mode`.
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn mode_schema() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(["exclusive", "shared"]))
        .default(Some("exclusive".into()))
        .example(Some("shared".into()))
        .description(Some(
            "`exclusive` (the default): one holder excludes every other. `shared`: shared \
             holders coexist, each with its own lease and fencing token, and an exclusive holder \
             excludes them all. While an exclusive acquire waits on a server, later shared \
             acquires on that server queue behind it. An owner holding the lock in the other \
             mode gets 409 `/problems/mode-mismatch` (no upgrade or downgrade in place).",
        ))
        .build()
}

/// The optional `mode` field: `"exclusive"` (also when absent) or `"shared"`.
///
/// # Errors
/// `invalid_type` (not a string, `null` included), `invalid_value` (another string).
pub(crate) fn mode_field(raw: Option<&RawValue>) -> Result<LockMode, FieldError> {
    let Some(raw) = raw else {
        return Ok(LockMode::Exclusive);
    };
    match serde_json::from_str::<String>(raw.get()) {
        Ok(text) if text == "exclusive" => Ok(LockMode::Exclusive),
        Ok(text) if text == "shared" => Ok(LockMode::Shared),
        Ok(_) => Err(FieldError::new(
            MODE,
            "invalid_value",
            "mode must be \"exclusive\" or \"shared\"",
        )),
        Err(_) => Err(FieldError::new(
            MODE,
            "invalid_type",
            format!(
                "mode must be the string \"exclusive\" or \"shared\", not {:.32}",
                raw.get()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Result<LockMode, String> {
        let raw = RawValue::from_string(json.to_owned()).unwrap();
        mode_field(Some(&raw)).map_err(|e| e.code)
    }

    #[test]
    fn mode_table() {
        assert_eq!(mode_field(None), Ok(LockMode::Exclusive));
        assert_eq!(parse("\"exclusive\""), Ok(LockMode::Exclusive));
        assert_eq!(parse("\"shared\""), Ok(LockMode::Shared));
        assert_eq!(parse("\"Shared\""), Err("invalid_value".into()));
        assert_eq!(parse("\"\""), Err("invalid_value".into()));
        assert_eq!(parse("null"), Err("invalid_type".into()));
        assert_eq!(parse("1"), Err("invalid_type".into()));
        assert_eq!(parse("[\"shared\"]"), Err("invalid_type".into()));
    }
}
