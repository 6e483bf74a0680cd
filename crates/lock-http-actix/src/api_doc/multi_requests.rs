//! What the multi-lock request bodies look like in the OpenAPI document, assembled from the
//! field definitions the parsers use.

use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Object, ObjectBuilder, RefOr, Type};
use utoipa::{PartialSchema, ToSchema};

use super::request_limits::RequestLimits;
use crate::fields::session;
use crate::fields::{lock_delay, lock_list, owner, seconds, semaphore};

fn acquire_all(limits: &RequestLimits) -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(
            "Acquire several locks together, or none. Unknown fields are ignored.",
        ))
        .property(
            "owner",
            owner::schema(format!("Who is acquiring every lock: {}", owner::rule())),
        )
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The lease length of every lock", limits.max_ttl_seconds),
        )
        .property("locks", lock_list::locks_schema())
        .required("locks")
        .property(
            "wait_seconds",
            seconds::wait_schema(
                "How long to wait until every lock is available together,",
                "Nothing is held while waiting. The answer comes as soon as all are granted, or \
                 with `acquired: false` and `Retry-After` when the wait ends.",
                limits.max_wait_seconds,
            ),
        )
        .property(
            "value",
            semaphore::value_schema("A value stored with each lease."),
        )
        .property(lock_delay::NAME, lock_delay::none_schema())
        .property(session::NAME, session::schema())
        .build()
}

fn release_all() -> Object {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("Release several locks you hold."))
        .property(
            "owner",
            owner::schema(format!("The owner that holds the locks: {}", owner::rule())),
        )
        .required("owner")
        .property("resources", lock_list::resources_schema())
        .required("resources")
        .build()
}

/// The body of `POST /locks` (`body::LockFields` parses it).
pub(crate) struct MultiAcquireRequest;

impl PartialSchema for MultiAcquireRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(acquire_all(&RequestLimits::default())))
    }
}

impl ToSchema for MultiAcquireRequest {}

/// The body of `DELETE /locks` (`body::LockFields` parses it).
pub(crate) struct ReleaseManyRequest;

impl PartialSchema for ReleaseManyRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(release_all()))
    }
}

impl ToSchema for ReleaseManyRequest {}

/// The schemas whose maximums follow the server's configuration.
pub(crate) fn configured(limits: &RequestLimits) -> Vec<(String, RefOr<Schema>)> {
    vec![(
        MultiAcquireRequest::name().into_owned(),
        RefOr::T(Schema::Object(acquire_all(limits))),
    )]
}
