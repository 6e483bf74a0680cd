//! What the election requests look like in the OpenAPI document: the bodies of campaign,
//! proclaim, renew and resign and the election routes' parameters, assembled from the field
//! definitions in `crate::fields`, which the parsers use too. The `maximum`s of `ttl_seconds` and
//! `wait_seconds` follow the server's configuration ([`configured`]).

use utoipa::openapi::path::{Parameter, ParameterIn};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::{Object, ObjectBuilder, RefOr, Type};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::request_limits::RequestLimits;
use crate::fields::owner::{self, CANDIDATE};
use crate::fields::session;
use crate::fields::{lock_delay, resource, seconds, semaphore, token};

fn object(description: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(description))
}

fn candidate(what: &str) -> Object {
    owner::schema(format!("{what}: {}", owner::rule()))
}

fn campaign(limits: &RequestLimits) -> Object {
    object("Campaign to lead an election. Unknown fields are ignored.")
        .property(
            CANDIDATE,
            candidate(
                "Who campaigns. A candidate string is an identity: the leader campaigning again \
                 is re-granted its lease (same term), so two candidates must never share one",
            ),
        )
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The leader's lease length", limits.max_ttl_seconds),
        )
        .property(
            "wait_seconds",
            seconds::wait_schema(
                "How long to wait for the office when another candidate leads,",
                "Waiting candidates of one election are served first come first served on each \
                 server; the answer comes as soon as the candidate is elected, or with \
                 `elected: false` and `Retry-After` when the wait ends. A client that closes its \
                 connection leaves the line at once.",
                limits.max_wait_seconds,
            ),
        )
        .property(
            "value",
            semaphore::value_schema(
                "What the leader proclaims once elected (the sitting leader campaigning again \
                 keeps the one it had unless given a new one).",
            ),
        )
        .property(
            lock_delay::NAME,
            lock_delay::schema(
                "Once the leader's lease ends by expiry rather than a resign, other candidates \
                 cannot be elected until `expires_at` plus this delay,",
            ),
        )
        .property(session::NAME, session::schema())
        .build()
}

fn proclaim() -> Object {
    object("Proclaim a new value as the leader. Unknown fields are ignored.")
        .property(
            CANDIDATE,
            candidate("The leader (required unless the leader is a session, given as `session`)"),
        )
        .property(session::NAME, session::schema())
        .property(
            "value",
            semaphore::required_value_schema("The new value, replacing the leader's."),
        )
        .required("value")
        .build()
}

fn renew(limits: &RequestLimits) -> Object {
    object("Renew the leader's lease. Unknown fields are ignored.")
        .property(CANDIDATE, candidate("The leader"))
        .required(CANDIDATE)
        .property(
            "ttl_seconds",
            seconds::ttl_schema("The new lease length from now,", limits.max_ttl_seconds),
        )
        .required("ttl_seconds")
        .property(session::NAME, session::renew_schema())
        .build()
}

fn resign() -> Object {
    object(
        "Resign as the leader. The candidate may instead be given as `?candidate=` without a \
         body.",
    )
    .property(CANDIDATE, candidate("The leader"))
    .required(CANDIDATE)
    .build()
}

/// The election bodies with `limits`, by schema name, for the served document.
pub(super) fn configured(limits: &RequestLimits) -> Vec<(String, RefOr<Schema>)> {
    vec![
        (
            CampaignRequest::name().into_owned(),
            RefOr::T(Schema::Object(campaign(limits))),
        ),
        (
            LeaderRenewRequest::name().into_owned(),
            RefOr::T(Schema::Object(renew(limits))),
        ),
    ]
}

/// The body of a campaign (`body::LockFields` parses it).
pub(crate) struct CampaignRequest;

impl PartialSchema for CampaignRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(campaign(&RequestLimits::default())))
    }
}

impl ToSchema for CampaignRequest {}

/// The body of a proclaim.
pub(crate) struct ProclaimRequest;

impl PartialSchema for ProclaimRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(proclaim()))
    }
}

impl ToSchema for ProclaimRequest {}

/// The body of a leader's renew.
pub(crate) struct LeaderRenewRequest;

impl PartialSchema for LeaderRenewRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(renew(&RequestLimits::default())))
    }
}

impl ToSchema for LeaderRenewRequest {}

/// The body of a resign.
pub(crate) struct ResignRequest;

impl PartialSchema for ResignRequest {
    fn schema() -> RefOr<Schema> {
        RefOr::T(Schema::Object(resign()))
    }
}

impl ToSchema for ResignRequest {}

/// The `{name}` of the election routes.
pub(crate) struct ElectionPath;

impl IntoParams for ElectionPath {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![resource::parameter_named(
            "name",
            format!(
                "The election's name, by the rules of a resource name: {} Elections have a \
                 namespace of their own: election `x`, lock `x` and semaphore `x` are unrelated.",
                resource::rule()
            ),
        )]
    }
}

/// The `?candidate=` of a resign without a body.
pub(crate) struct CandidateQuery;

impl IntoParams for CandidateQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![
            owner::query_parameter_named(CANDIDATE),
            session::query_parameter(),
        ]
    }
}

/// The `?term=` of an election's fence check.
pub(crate) struct TermQuery;

impl IntoParams for TermQuery {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        vec![token::query_parameter_named(
            token::TERM,
            "The term to check: a positive integer, as a campaign returned it.",
        )]
    }
}
