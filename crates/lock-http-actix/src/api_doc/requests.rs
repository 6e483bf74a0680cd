//! What the requests look like in the OpenAPI document: the bodies of acquire, renew and release
//! and the parameters of every route, assembled from the field definitions in `crate::fields`,
//! which the parsers use too.
//!
//! The bodies' `maximum`s follow the server's configuration: [`RequestLimits`] writes them into
//! the served document; the committed `openapi/openapi.json` shows the defaults.

use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Object, ObjectBuilder, OpenApi, RefOr, Type};
use utoipa::{IntoParams, Modify, PartialSchema, ToSchema};

use super::request_limits::RequestLimits;
use crate::fields::{listing, lock_delay, mode, owner, resource, seconds, semaphore, session};

impl Modify for RequestLimits {
    fn modify(&self, openapi: &mut OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        for (name, schema) in [
            (AcquireRequest::name(), acquire(self)),
            (RenewRequest::name(), renew(self)),
            (PermitAcquireRequest::name(), permit_acquire(self)),
            (PermitRenewRequest::name(), permit_renew(self)),
            (SessionOpenRequest::name(), session_open(self)),
            (SessionKeepAliveRequest::name(), session_keep_alive(self)),
        ] {
            components
                .schemas
                .insert(name.into_owned(), RefOr::T(Schema::Object(schema)));
        }
        components
            .schemas
            .extend(super::multi_requests::configured(self));
        components
            .schemas
            .extend(super::election_requests::configured(self));
    }
}

fn object(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
}

fn acquire(limits: &RequestLimits) -> Object {
    object("Acquire a lock. Unknown fields are ignored.")
        .property(
            "owner",
            owner::schema(format!(
                "Who is acquiring: {} An owner string is an identity: an acquire by the owner \
                 that holds the lock re-grants it to that holder (same fencing token), so two \
                 holders must never share one (add a random part per process or run).",
                owner::rule()
            )),
        )
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The lease length", limits.max_ttl_seconds),
        )
        .property(
            "wait_seconds",
            seconds::wait_schema(
                "How long to wait for the lock when another owner holds it,",
                "Waiting requests of one lock are served first come first served on each server; \
                 the answer comes as soon as the lock is granted, or with `acquired: false` and \
                 `Retry-After` when the wait ends. A client that closes its connection leaves the \
                 queue at once.",
                limits.max_wait_seconds,
            ),
        )
        .property("mode", mode::mode_schema())
        .property(
            "value",
            semaphore::value_schema(
                "A value stored with the lease and shown with the lock (a re-grant to the holder \
                 keeps the one it had unless given a new one).",
            ),
        )
        .property(
            lock_delay::NAME,
            lock_delay::schema(
                "Exclusive only (a shared acquire may send 0): once the lease ends by expiry \
                 rather than a release, other owners cannot take the lock until `expires_at` \
                 plus this delay (an acquire then answers `acquired: false` with `Retry-After`, \
                 a status 404 with `available_at`),",
            ),
        )
        .property(session::NAME, session::schema())
        .build()
}

fn renew(limits: &RequestLimits) -> Object {
    object("Renew a lock you hold. Unknown fields are ignored.")
        .property("owner", holder())
        .required("owner")
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The new lease length from now,", limits.max_ttl_seconds),
        )
        .required("ttl_seconds")
        .property(
            "value",
            semaphore::value_schema("Replaces the stored value; absent keeps it."),
        )
        .property(session::NAME, session::renew_schema())
        .build()
}

fn permit_acquire(limits: &RequestLimits) -> Object {
    object("Acquire permits of a semaphore. Unknown fields are ignored.")
        .property(
            "owner",
            owner::schema(format!(
                "Who is acquiring: {} An owner holds at most one grant per semaphore.",
                owner::rule()
            )),
        )
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The lease length", limits.max_ttl_seconds),
        )
        .property("limit", semaphore::limit_schema())
        .required("limit")
        .property("permits", semaphore::permits_schema())
        .property(
            "wait_seconds",
            seconds::wait_schema(
                "How long to wait for permits when too few are free,",
                "Waiting requests of one semaphore are served first come first served on each \
                 server, and a later one never overtakes an earlier one that needs more permits. \
                 The answer comes as soon as the permits are granted, or with `acquired: false` \
                 and `Retry-After` when the wait ends.",
                limits.max_wait_seconds,
            ),
        )
        .property(
            "value",
            semaphore::value_schema("A value stored with the grant and shown with it."),
        )
        .property(
            lock_delay::NAME,
            lock_delay::schema(
                "Once the grant ends by expiry rather than a release, its permits stay taken for \
                 other owners until `expires_at` plus this delay (acquires meanwhile count them \
                 as taken),",
            ),
        )
        .property(session::NAME, session::schema())
        .build()
}

fn permit_renew(limits: &RequestLimits) -> Object {
    object("Renew a grant of permits you hold. Unknown fields are ignored.")
        .property(
            "owner",
            owner::schema(format!(
                "The owner that holds the permits: {}",
                owner::rule()
            )),
        )
        .required("owner")
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The new lease length from now,", limits.max_ttl_seconds),
        )
        .required("ttl_seconds")
        .property(
            "value",
            semaphore::value_schema("Replaces the stored value; absent keeps it."),
        )
        .property(session::NAME, session::renew_schema())
        .build()
}

fn holder() -> Object {
    owner::schema(format!("The owner that holds the lock: {}", owner::rule()))
}

fn release() -> Object {
    object("Release a lock you hold. The owner may instead be given as `?owner=` without a body.")
        .property("owner", holder())
        .required("owner")
        .build()
}

fn session_open(limits: &RequestLimits) -> Object {
    object("Open a session. Unknown fields are ignored.")
        .property(
            "ttl_seconds",
            seconds::ttl_schema(
                "How long the session lives without a keepalive",
                limits.max_ttl_seconds,
            ),
        )
        .required("ttl_seconds")
        .property(
            "owner",
            owner::schema(format!(
                "The label every hold of the session shows as its owner (by default the \
                 session's id): {} Two sessions with one label are still two holders.",
                owner::rule()
            )),
        )
        .property(
            lock_delay::NAME,
            lock_delay::schema(
                "When the session runs out (not when it is closed or forced), each hold's place \
                 stays kept from others until the session's end plus this delay,",
            ),
        )
        .build()
}

fn session_keep_alive(limits: &RequestLimits) -> Object {
    object("Keep a session alive (the body may be empty). Unknown fields are ignored.")
        .property(
            "ttl_seconds",
            seconds::ttl_schema(
                "A new TTL for the session, from now on (absent: its own)",
                limits.max_ttl_seconds,
            ),
        )
        .build()
}

/// The body of `POST /sessions`.
pub(crate) struct SessionOpenRequest;

impl PartialSchema for SessionOpenRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(session_open(&RequestLimits::default())))
    }
}

impl ToSchema for SessionOpenRequest {}

/// The body of `POST /sessions/{id}/keepalive`.
pub(crate) struct SessionKeepAliveRequest;

impl PartialSchema for SessionKeepAliveRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(
            session_keep_alive(&RequestLimits::default()),
        ))
    }
}

impl ToSchema for SessionKeepAliveRequest {}

/// The body of an acquire (`body::LockFields` parses it).
pub(crate) struct AcquireRequest;

impl PartialSchema for AcquireRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(acquire(&RequestLimits::default())))
    }
}

impl ToSchema for AcquireRequest {}

/// The body of a renew (`body::LockFields` parses it).
pub(crate) struct RenewRequest;

impl PartialSchema for RenewRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(renew(&RequestLimits::default())))
    }
}

impl ToSchema for RenewRequest {}

/// The body of a release (`body::LockFields` parses it).
pub(crate) struct ReleaseRequest;

impl PartialSchema for ReleaseRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(release()))
    }
}

impl ToSchema for ReleaseRequest {}

/// The body of an acquire of permits (`body::LockFields` parses it).
pub(crate) struct PermitAcquireRequest;

impl PartialSchema for PermitAcquireRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(permit_acquire(&RequestLimits::default())))
    }
}

impl ToSchema for PermitAcquireRequest {}

/// The body of a renew of permits (`body::LockFields` parses it).
pub(crate) struct PermitRenewRequest;

impl PartialSchema for PermitRenewRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(permit_renew(&RequestLimits::default())))
    }
}

impl ToSchema for PermitRenewRequest {}

/// The `{name}` of a semaphore acquire, where the document states the rule.
pub(crate) struct AcquireNamePath;

impl IntoParams for AcquireNamePath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![resource::parameter_named(
            "name",
            format!(
                "The semaphore's name, by the rules of a resource name: {} Semaphores have a \
                 namespace of their own: semaphore `x` and lock `x` are unrelated.",
                resource::rule()
            ),
        )]
    }
}

/// The `{name}` of the other semaphore routes.
pub(crate) struct NamePath;

impl IntoParams for NamePath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![resource::parameter_named(
            "name",
            "The semaphore's name (see acquirePermits).".to_owned(),
        )]
    }
}

/// The `{resource}` of an acquire, where the document states the rule.
pub(crate) struct AcquireResourcePath;

impl IntoParams for AcquireResourcePath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![resource::parameter(format!(
            "The resource name: {}",
            resource::rule()
        ))]
    }
}

/// The `{resource}` of the other lock routes.
pub(crate) struct ResourcePath;

impl IntoParams for ResourcePath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![resource::parameter(
            "The resource name (see acquireLock).".to_owned(),
        )]
    }
}

/// The `?owner=` of a release.
pub(crate) struct ReleaseQuery;

impl IntoParams for ReleaseQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![owner::query_parameter(), session::query_parameter()]
    }
}

/// The `?token=` of a fence check.
pub(crate) struct FenceQuery;

impl IntoParams for FenceQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![crate::fields::token::query_parameter()]
    }
}

/// The query of a listing.
pub(crate) struct ListParams;

impl IntoParams for ListParams {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        listing::parameters()
    }
}
