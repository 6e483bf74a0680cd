//! `owner`: who holds a lock, as the client names itself. Given in a JSON body, or as the
//! form-encoded `?owner=` of a release. An election's `candidate` follows the same rules under its
//! own name.

use lock_domain::Owner;
use serde_json::value::RawValue;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{Object, ObjectBuilder, Required, Type};

use super::{given, pattern};
use crate::problem::FieldError;

const NAME: &str = "owner";
/// The name of an owner in an election's requests.
pub(crate) const CANDIDATE: &str = "candidate";

/// The rule, in the words of the document.
pub(crate) fn rule() -> String {
    format!(
        "trimmed of surrounding whitespace, then 1 to {} characters, no control characters. \
         Compared case-sensitively.",
        Owner::MAX_CHARS
    )
}

/// An owner as sent (before trimming): the pattern carries the length, which counts after
/// trimming, so there is no `maxLength`.
fn text_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .pattern(Some(pattern::owner()))
}

/// The schema of a body's `owner` (`description` should state [`rule`]).
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn schema(description: String) -> Object {
    text_schema()
        .description(Some(description))
        .example(Some("worker-7".into()))
        .build()
}

/// The `?owner=` of a release without a body.
pub(crate) fn query_parameter() -> Parameter {
    query_parameter_named(NAME)
}

/// The `?{name}=` (`owner` or `candidate`) of a release or resign without a body.
pub(crate) fn query_parameter_named(name: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(format!(
            "The {name}, when the request has no body (form-encoded: `+` is a space): {}",
            rule()
        )))
        .schema(Some(text_schema()))
        .example(Some("worker-7".into()))
        .build()
}

/// The `owner` of a JSON body: a required JSON string, trimmed and validated by the domain.
///
/// # Errors
/// `required` (absent or `null`), `invalid_type` (not a string of valid Unicode), or the
/// domain's code.
pub(crate) fn owner_field(raw: Option<&RawValue>) -> Result<Owner, FieldError> {
    owner_field_named(NAME, raw)
}

/// [`owner_field`] for the field `name` (`owner`, or an election's `candidate`).
///
/// # Errors
/// As [`owner_field`], for `name`.
pub(crate) fn owner_field_named(
    name: &'static str,
    raw: Option<&RawValue>,
) -> Result<Owner, FieldError> {
    let raw = given(raw).ok_or_else(|| {
        FieldError::new(
            name,
            "required",
            format!("{name} is required: a JSON string"),
        )
    })?;
    let text: String = serde_json::from_str(raw.get()).map_err(|_| {
        FieldError::new(
            name,
            "invalid_type",
            format!("{name} must be a JSON string of valid Unicode"),
        )
    })?;
    owner_text_named(name, &text)
}

/// An owner given as text (the decoded `?owner=` of a release, or `?candidate=` of a resign)
/// for the field `name`.
///
/// # Errors
/// The domain's code.
pub(crate) fn owner_text_named(name: &str, text: &str) -> Result<Owner, FieldError> {
    Owner::parse(text).map_err(|e| FieldError::new(name, e.code(), format!("{name} {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::parse_object;

    fn owner_of(json: &str) -> Result<Owner, FieldError> {
        owner_field(parse_object(json.as_bytes()).expect("an object").owner)
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
            (r#"{"owner": "\ud800"}"#, Err("invalid_type")),
            (r#"{"owner": null}"#, Err("required")),
            (r#"{}"#, Err("required")),
        ];
        for (json, expected) in cases {
            let got = owner_of(json);
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
            owner_of(&long).map_err(|e| e.code),
            Err("too_long".to_owned())
        );
        let multibyte = format!(r#"{{"owner": " {} "}}"#, "日".repeat(255));
        assert_eq!(
            owner_of(&multibyte).map(|o| o.as_str().chars().count()),
            Ok(255)
        );
    }
}
