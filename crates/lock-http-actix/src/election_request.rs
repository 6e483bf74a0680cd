//! Reading the requests of the election routes into domain values: a campaign
//! ([`campaign_request`]), a proclaim ([`proclaim_request`]) and a renew
//! ([`leader_renew_request`]); a resign is read like a lock's release, with `candidate` for
//! `owner` (`lock_request::release_request_by`). Each authenticates, reads the body, parses every
//! input through its field definition (`crate::fields`) and lists every invalid one in one 422.

use std::time::Duration;

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LeaseValue, Owner, ResourceName, Tenant, Ttl};
use lock_service::CampaignRequest;

use crate::authentication::tenant_of;
use crate::body::{parse_object, read_json_body, ttl_field, wait_field};
use crate::fields::lock_delay::lock_delay_field;
use crate::fields::owner::{owner_field_named, CANDIDATE};
use crate::fields::semaphore::value_field;
use crate::problem::{FieldError, ProblemKind};
use crate::resource_path::election_of;
use crate::ApiState;

/// The value of one input, its error kept in `errors`.
fn take<T>(parsed: Result<T, FieldError>, errors: &mut Vec<FieldError>) -> Option<T> {
    parsed.map_err(|error| errors.push(error)).ok()
}

/// Authenticates, reads and validates a campaign (`{candidate, ttl_seconds, value?,
/// wait_seconds?}`), in the contract's order: 401, 415, 413, 408, 400, then one 422 listing every
/// invalid input.
pub(crate) async fn campaign_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<CampaignRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let election = take(election_of(req), &mut errors);
    let candidate = take(owner_field_named(CANDIDATE, fields.candidate), &mut errors);
    let ttl = take(
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
        &mut errors,
    );
    let wait = take(
        wait_field(fields.wait_seconds, state.settings.max_wait_seconds),
        &mut errors,
    );
    let value = take(value_field(fields.value), &mut errors);
    let lock_delay = take(
        lock_delay_field(fields.lock_delay_seconds, state.settings.default_lock_delay),
        &mut errors,
    );
    let (Some(election), Some(candidate), Some(ttl), Some(wait), Some(value), Some(lock_delay)) =
        (election, candidate, ttl, wait, value, lock_delay)
    else {
        return Err(ProblemKind::Validation(errors));
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(CampaignRequest {
        tenant,
        election,
        candidate,
        ttl,
        wait: Duration::from_secs(u64::from(wait)),
        value,
        lock_delay,
    })
}

/// A proclaim, parsed.
pub(crate) struct Proclaim {
    pub tenant: Tenant,
    pub election: ResourceName,
    pub candidate: Owner,
    pub value: LeaseValue,
}

/// Authenticates, reads and validates a proclaim (`{candidate, value}`; `value` is required).
pub(crate) async fn proclaim_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<Proclaim, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let election = take(election_of(req), &mut errors);
    let candidate = take(owner_field_named(CANDIDATE, fields.candidate), &mut errors);
    let value = take(
        value_field(fields.value).and_then(|value| {
            value.ok_or_else(|| {
                FieldError::new(
                    "value",
                    "required",
                    "value is required: the JSON value the leader proclaims",
                )
            })
        }),
        &mut errors,
    );
    let (Some(election), Some(candidate), Some(value)) = (election, candidate, value) else {
        return Err(ProblemKind::Validation(errors));
    };
    Ok(Proclaim {
        tenant,
        election,
        candidate,
        value,
    })
}

/// A leader's renew, parsed.
pub(crate) struct LeaderRenew {
    pub tenant: Tenant,
    pub election: ResourceName,
    pub candidate: Owner,
    pub ttl: Ttl,
}

/// Authenticates, reads and validates a leader's renew (`{candidate, ttl_seconds}`).
pub(crate) async fn leader_renew_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<LeaderRenew, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let election = take(election_of(req), &mut errors);
    let candidate = take(owner_field_named(CANDIDATE, fields.candidate), &mut errors);
    let ttl = take(
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
        &mut errors,
    );
    let (Some(election), Some(candidate), Some(ttl)) = (election, candidate, ttl) else {
        return Err(ProblemKind::Validation(errors));
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(LeaderRenew {
        tenant,
        election,
        candidate,
        ttl,
    })
}
