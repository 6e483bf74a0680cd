//! `token`: the fencing token a fence check asks about, as the form-encoded `?token=` of
//! `GET /locks/{resource}/fence` and `GET /semaphores/{name}/fence`; and `term`, an election's
//! fencing token, as the `?term=` of `GET /elections/{name}/fence`.

use lock_domain::FencingToken;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{ObjectBuilder, Required, Type};

use super::integer::{self, JsonInteger};
use crate::problem::FieldError;
use crate::query_string::form_decode;

const NAME: &str = "token";
/// The name of a fence check's token at an election.
pub(crate) const TERM: &str = "term";

/// The query parameter, as the document shows it.
pub(crate) fn query_parameter() -> Parameter {
    query_parameter_named(
        NAME,
        "The fencing token to check: a positive integer, as a grant returned it.",
    )
}

/// The query parameter `name` (`token`, or an election's `term`), described as `description`.
pub(crate) fn query_parameter_named(name: &str, description: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(1)),
        ))
        .example(Some(17.into()))
        .build()
}

/// The token of a fence check's query string: required, once, a positive integer. Any other
/// parameter is refused, so that a misspelt one is not silently ignored.
///
/// # Errors
/// Every invalid input: `token` `required`, `conflict` (given twice), `invalid_type` (not an
/// integer), `out_of_range` (not positive, or past an i64); another parameter
/// `unknown_parameter`; a name that is not UTF-8 `invalid_utf8`.
pub(crate) fn token_query(query: &str) -> Result<FencingToken, Vec<FieldError>> {
    token_query_named(NAME, query)
}

/// [`token_query`] for the parameter `name` (`token`, or an election's `term`).
///
/// # Errors
/// As [`token_query`], for `name`.
pub(crate) fn token_query_named(name: &str, query: &str) -> Result<FencingToken, Vec<FieldError>> {
    let mut errors = Vec::new();
    let mut token: Option<Result<FencingToken, FieldError>> = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (raw_key, raw_value) = pair.split_once('=').unwrap_or((pair, ""));
        match form_decode(raw_key).as_deref() {
            Ok(key) if key == name && token.is_some() => errors.push(FieldError::new(
                name,
                "conflict",
                format!("{name} is given more than once"),
            )),
            Ok(key) if key == name => token = Some(token_text(name, raw_value)),
            Ok(key) => errors.push(FieldError::new(
                key,
                "unknown_parameter",
                format!("unknown parameter {key:?}: the only parameter is {name}"),
            )),
            Err(_) => errors.push(FieldError::new(
                "query",
                "invalid_utf8",
                "a parameter name is not valid UTF-8 once percent-decoded",
            )),
        }
    }
    match token {
        None => errors.push(FieldError::new(
            name,
            "required",
            format!("{name} is required: the fencing token to check"),
        )),
        Some(Err(error)) => errors.push(error),
        Some(Ok(token)) if errors.is_empty() => return Ok(token),
        Some(Ok(_)) => {}
    }
    Err(errors)
}

fn token_text(name: &str, raw: &str) -> Result<FencingToken, FieldError> {
    let rule = format!("{name} must be a positive integer (a fencing token)");
    let Ok(text) = form_decode(raw) else {
        return Err(FieldError::new(name, "invalid_type", rule));
    };
    match integer::read(&text) {
        JsonInteger::Value(value) => {
            FencingToken::new(value).map_err(|_| FieldError::new(name, "out_of_range", rule))
        }
        JsonInteger::Huge => Err(FieldError::new(name, "out_of_range", rule)),
        JsonInteger::NotInteger => Err(FieldError::new(name, "invalid_type", rule)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(query: &str) -> Vec<(String, String)> {
        match token_query(query) {
            Ok(token) => vec![("ok".into(), token.value().to_string())],
            Err(errors) => errors.into_iter().map(|e| (e.field, e.code)).collect(),
        }
    }

    fn one(field: &str, code: &str) -> Vec<(String, String)> {
        vec![(field.to_owned(), code.to_owned())]
    }

    #[test]
    fn token_query_table() {
        let cases: Vec<(&str, Vec<(String, String)>)> = vec![
            ("token=17", one("ok", "17")),
            (
                "token=9223372036854775807",
                one("ok", "9223372036854775807"),
            ),
            ("token=1e2", one("ok", "100")),
            ("", one("token", "required")),
            ("token=", one("token", "invalid_type")),
            ("token", one("token", "invalid_type")),
            ("token=0", one("token", "out_of_range")),
            ("token=-3", one("token", "out_of_range")),
            ("token=9223372036854775808", one("token", "out_of_range")),
            ("token=1.5", one("token", "invalid_type")),
            ("token=abc", one("token", "invalid_type")),
            ("token=%FF", one("token", "invalid_type")),
            ("token=+5", one("token", "invalid_type")),
            ("token=1&token=1", one("token", "conflict")),
            ("token=1&owner=a", one("owner", "unknown_parameter")),
            (
                "tokn=1",
                vec![
                    ("tokn".into(), "unknown_parameter".into()),
                    ("token".into(), "required".into()),
                ],
            ),
        ];
        for (query, expected) in cases {
            assert_eq!(codes(query), expected, "{query:?}");
        }
        let term = |query| token_query_named(TERM, query).map_err(|errors| errors[0].clone());
        assert_eq!(term("term=4").map(FencingToken::value), Ok(4));
        let refused = term("token=4").unwrap_err();
        assert_eq!(
            (refused.field.as_str(), refused.code.as_str()),
            ("token", "unknown_parameter")
        );
        let refused = term("term=0").unwrap_err();
        assert_eq!(
            (refused.field.as_str(), refused.code.as_str()),
            ("term", "out_of_range")
        );
    }
}
