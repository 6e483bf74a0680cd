//! The query parameters of `GET /locks`: `prefix`, `limit` and `cursor` (form-decoded by the
//! listing route, which also refuses unknown and repeated parameters).

use lock_domain::{ListLimit, ResourceName, ResourcePrefix};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{ObjectBuilder, Required, Type};

use super::integer::{self, JsonInteger};
use super::pattern;
use crate::cursor;
use crate::problem::FieldError;

/// The `format` that marks a cursor in the document: a `next_cursor` this server issued, which
/// no pattern can describe (it is the base64url text of a version byte and a resource name).
/// Clients pass it back unchanged; a fuzzer is taught to make one (`scripts/fuzz_hooks.py`).
pub(crate) const CURSOR_FORMAT: &str = "lockd-cursor";

fn query(
    name: &str,
    description: String,
    schema: ObjectBuilder,
    example: serde_json::Value,
) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .example(Some(example))
        .build()
}

/// The parameters of a listing, in the order the document shows them.
pub(crate) fn parameters() -> Vec<Parameter> {
    vec![
        query(
            "prefix",
            format!(
                "Only names starting with this, compared literally and bytewise (`%`, `_` and \
                 `\\` are ordinary characters). 0 to {} characters, no control characters. \
                 Default: every name.",
                ResourceName::MAX_CHARS
            ),
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(ResourceName::MAX_CHARS))
                .pattern(Some(pattern::prefix())),
            "payment:".into(),
        ),
        query(
            "limit",
            "The most locks on one page.".to_owned(),
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
                .minimum(Some(ListLimit::MIN))
                .maximum(Some(ListLimit::MAX)),
            100.into(),
        ),
        query(
            "cursor",
            "The `next_cursor` of the previous page, unchanged. Opaque: a cursor this server did \
             not issue is refused (`invalid_cursor`)."
                .to_owned(),
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::Custom(CURSOR_FORMAT.to_owned())))
                .min_length(Some(1)),
            "AXBheW1lbnQ6NDI".into(),
        ),
    ]
}

/// A decoded `prefix`, validated by the domain.
///
/// # Errors
/// The domain's code.
pub(crate) fn prefix_text(value: String) -> Result<ResourcePrefix, FieldError> {
    ResourcePrefix::parse(value)
        .map_err(|e| FieldError::new("prefix", e.code(), format!("prefix {e}")))
}

/// A decoded `limit`: an integer (as JSON Schema counts them) in `1..=1000`.
///
/// # Errors
/// `invalid_type` (not an integer), `out_of_range`.
pub(crate) fn limit_text(value: &str) -> Result<ListLimit, FieldError> {
    let range = format!(
        "limit must be an integer between {} and {}",
        ListLimit::MIN,
        ListLimit::MAX
    );
    match integer::read(value) {
        JsonInteger::Value(number) => ListLimit::parse(number)
            .map_err(|e| FieldError::new("limit", e.code(), format!("limit {e}"))),
        JsonInteger::Huge => Err(FieldError::new("limit", "out_of_range", range)),
        JsonInteger::NotInteger => Err(FieldError::new("limit", "invalid_type", range)),
    }
}

/// A decoded `cursor`: the name the page starts after.
///
/// # Errors
/// `invalid_cursor` for anything this server did not issue, the empty cursor included.
pub(crate) fn cursor_text(value: &str) -> Result<ResourceName, FieldError> {
    cursor::decode(value)
        .map_err(|e| FieldError::new("cursor", "invalid_cursor", format!("cursor {e}")))
}
