//! `resource`: the name of a lockable resource, the `{resource}` segment of a lock route
//! (percent-decoded by `resource_path`).

use lock_domain::ResourceName;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};

use super::pattern;
use crate::problem::FieldError;

const NAME: &str = "resource";

/// The rule, in the words of the document.
pub(crate) fn rule() -> String {
    format!(
        "1 to {} characters once percent-decoded (UTF-8), no control characters (`%2F` is a `/`, \
         `+` is a plus).",
        ResourceName::MAX_CHARS
    )
}

/// The `{resource}` path parameter, described by `description`.
pub(crate) fn parameter(description: String) -> Parameter {
    parameter_named(NAME, description)
}

/// A path parameter `name` that follows the resource rules (a semaphore's `{name}`).
pub(crate) fn parameter_named(name: &str, description: String) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(description))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(ResourceName::MAX_CHARS))
                .pattern(Some(pattern::resource_name())),
        ))
        .example(Some("payment:42".into()))
        .build()
}

/// A decoded `{resource}` segment, validated by the domain.
///
/// # Errors
/// The domain's code.
pub(crate) fn resource_text(text: String) -> Result<ResourceName, FieldError> {
    text_named(NAME, text)
}

/// A decoded path segment `field` that follows the resource rules.
///
/// # Errors
/// The domain's code, for `field`.
pub(crate) fn text_named(field: &str, text: String) -> Result<ResourceName, FieldError> {
    ResourceName::parse(text).map_err(|e| FieldError::new(field, e.code(), format!("{field} {e}")))
}
