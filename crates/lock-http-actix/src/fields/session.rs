//! `session`: the session a request holds under (`POST /sessions` opened it), in place of
//! `owner` (or an election's `candidate`), `ttl_seconds` and `lock_delay_seconds`: the session is
//! the holder, its end the hold's end, its lock-delay the hold's. Given in a JSON body, or as
//! the `?session=` of a release or resign.

use lock_domain::SessionId;
use serde_json::value::RawValue;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{Object, ObjectBuilder, Required, Type};

use super::given;
use crate::problem::FieldError;

pub(crate) const NAME: &str = "session";

/// The rule, in the words of the document.
pub(crate) const RULE: &str = "the id of a live session of the tenant (22 characters of URL-safe \
     base64, as `POST /sessions` answered it). The session is the holder: its owner label shows \
     as the hold's owner, its end is the hold's end (moved by each keepalive), and its \
     lock-delay applies when it runs out. Not together with the holder's name, `ttl_seconds` or \
     `lock_delay_seconds` (422 `conflict`); an unknown or ended session is 404 \
     /problems/session-not-found, and nothing is granted.";

fn text_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(SessionId::LEN))
        .max_length(Some(SessionId::LEN))
        .pattern(Some("^[A-Za-z0-9_-]{22}$"))
}

/// The schema of a body's `session`.
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn schema() -> Object {
    text_schema()
        .description(Some(format!("Hold under a session: {RULE}")))
        .example(Some("q7Hc0mB1TzK4n9XwVd2aLg".into()))
        .build()
}

/// The schema of a renew's `session`: a renew naming a session is refused.
#[allow(deprecated)] // `example`: the document keeps one example per field, like the rest of it
pub(crate) fn renew_schema() -> Object {
    text_schema()
        .description(Some(
            "A lease held under a session ends with the session: a renew naming one is answered \
             409 /problems/session-held (keep the session alive instead).",
        ))
        .example(Some("q7Hc0mB1TzK4n9XwVd2aLg".into()))
        .build()
}

/// The answer to a renew whose body names a session: `409 session-held` (a `null` session is a
/// `422`, as for any field); `Ok` without one.
///
/// # Errors
/// The problem to answer.
pub(crate) fn refuse_in_renew(raw: Option<&RawValue>) -> Result<(), crate::problem::ProblemKind> {
    match session_field(raw) {
        Ok(None) => Ok(()),
        Ok(Some(_)) => Err(crate::problem::ProblemKind::SessionHeld),
        Err(error) => Err(crate::problem::ProblemKind::Validation(vec![error])),
    }
}

/// The `?session=` of a release or resign of a session's hold. It has no example: Swagger UI
/// fills a parameter in with its example, and a release that names its owner and a session is a
/// `422`.
pub(crate) fn query_parameter() -> Parameter {
    ParameterBuilder::new()
        .name(NAME)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(
            "Release the hold of this session (in place of the holder's name): the id of a live \
             session of the tenant, such as `q7Hc0mB1TzK4n9XwVd2aLg`.",
        ))
        .schema(Some(text_schema()))
        .build()
}

/// The `session` of a JSON body, when given.
///
/// # Errors
/// `invalid_type` (not a string: `null` too, since a session is never "none"), or the domain's
/// code for an id no server made.
pub(crate) fn session_field(raw: Option<&RawValue>) -> Result<Option<SessionId>, FieldError> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    if given(Some(raw)).is_none() {
        return Err(FieldError::new(
            NAME,
            "invalid_type",
            "session must be a JSON string; leave it out to hold as the owner",
        ));
    }
    let text: String = serde_json::from_str(raw.get())
        .map_err(|_| FieldError::new(NAME, "invalid_type", "session must be a JSON string"))?;
    session_text(&text).map(Some)
}

/// A session id given as text (a path segment, or the decoded `?session=`).
///
/// # Errors
/// The domain's code.
pub(crate) fn session_text(text: &str) -> Result<SessionId, FieldError> {
    SessionId::parse(text).map_err(|e| FieldError::new(NAME, e.code(), format!("session {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::parse_object;

    #[test]
    fn session_table() {
        let cases: &[(&str, Result<Option<&str>, &str>)] = &[
            (r#"{}"#, Ok(None)),
            (r#"{"session": null}"#, Err("invalid_type")),
            (
                r#"{"session": "q7Hc0mB1TzK4n9XwVd2aLg"}"#,
                Ok(Some("q7Hc0mB1TzK4n9XwVd2aLg")),
            ),
            (r#"{"session": 7}"#, Err("invalid_type")),
            (r#"{"session": ""}"#, Err("empty")),
            (r#"{"session": "short"}"#, Err("invalid_character")),
            (r#"{"session": "q7Hc0mB1TzK4n9XwVd2aLgX"}"#, Err("too_long")),
        ];
        for (json, expected) in cases {
            let fields = parse_object(json.as_bytes()).expect("an object");
            let got = session_field(fields.session);
            match expected {
                Ok(id) => assert_eq!(
                    got.map(|id| id.map(|id| id.as_str().to_owned())),
                    Ok(id.map(str::to_owned)),
                    "{json}"
                ),
                Err(code) => assert_eq!(got.map_err(|e| e.code), Err((*code).to_owned()), "{json}"),
            }
        }
    }
}
