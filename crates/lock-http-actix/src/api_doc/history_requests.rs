//! The parameters of the history routes and of the event stream in the OpenAPI document, from
//! the field definitions the parsers use (`crate::fields::history`, `crate::fields::listing`).

use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::IntoParams;

use crate::fields::{history, listing, resource};

/// `prefix` and `limit`, as a listing documents them (a limit of records).
fn listing_parameter(name: &str) -> Parameter {
    let mut parameter = listing::parameters()
        .into_iter()
        .find(|p| p.name == name)
        .expect("a listing parameter");
    if name == "limit" {
        parameter.description = Some("The most records on one page.".to_owned());
    }
    parameter
}

/// `{resource}` and the parameters of a lock's history page.
pub(crate) struct LockHistoryParams;

impl IntoParams for LockHistoryParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            resource::parameter("The resource name (see acquireLock).".to_owned()),
            listing_parameter("limit"),
            history::cursor_parameter(),
            history::since_parameter(),
        ]
    }
}

/// `{name}` and the parameters of a semaphore's or an election's history page.
pub(crate) struct NamedHistoryParams;

impl IntoParams for NamedHistoryParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            resource::parameter_named(
                "name",
                "The semaphore's or election's name (see acquirePermits, campaign).".to_owned(),
            ),
            listing_parameter("limit"),
            history::cursor_parameter(),
            history::since_parameter(),
        ]
    }
}

/// The parameters of the tenant's history page.
pub(crate) struct TenantHistoryParams;

impl IntoParams for TenantHistoryParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            listing_parameter("prefix"),
            history::since_parameter(),
            listing_parameter("limit"),
            history::cursor_parameter(),
        ]
    }
}

/// The parameters of the event stream.
pub(crate) struct EventParams;

impl IntoParams for EventParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![listing_parameter("prefix"), history::kinds_parameter()]
    }
}
