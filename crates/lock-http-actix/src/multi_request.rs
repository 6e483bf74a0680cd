//! Reading the multi-lock requests into domain values: an acquire of several locks
//! (`POST /locks`) and a release of several (`DELETE /locks`). Each authenticates, reads the
//! body, parses every input through its field definition and lists every invalid one in one
//! 422.

use std::time::Duration;

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LockDelay, LockSet, Owner, ResourceName, Tenant};
use lock_service::MultiAcquireRequest;

use crate::authentication::tenant_of;
use crate::body::{owner_field, parse_object, read_json_body, ttl_field, wait_field};
use crate::fields::lock_delay::{self, lock_delay_field};
use crate::fields::lock_list::{locks_field, resources_field};
use crate::fields::semaphore::value_field;
use crate::problem::{FieldError, ProblemKind};
use crate::ApiState;

/// The value of one input, its errors kept in `errors`.
fn take<T>(parsed: Result<T, FieldError>, errors: &mut Vec<FieldError>) -> Option<T> {
    parsed.map_err(|error| errors.push(error)).ok()
}

/// Authenticates, reads and validates a multi-lock acquire
/// (`{owner, ttl_seconds, locks, wait_seconds?, value?}`), in the contract's order: 401, 415,
/// 413, 408, 400, then one 422 listing every invalid input.
pub(crate) async fn acquire_all_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<MultiAcquireRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let owner = take(owner_field(fields.owner), &mut errors);
    let ttl = take(
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
        &mut errors,
    );
    let locks = locks_field(fields.locks)
        .map_err(|invalid| errors.extend(invalid))
        .ok();
    let wait = take(
        wait_field(fields.wait_seconds, state.settings.max_wait_seconds),
        &mut errors,
    );
    let value = take(value_field(fields.value), &mut errors);
    // A set's grants have no lock-delay: asking for one is refused, not ignored.
    let no_delay = take(
        lock_delay_field(fields.lock_delay_seconds, LockDelay::NONE).and_then(|delay| {
            if delay == LockDelay::NONE {
                Ok(())
            } else {
                Err(FieldError::new(
                    lock_delay::NAME,
                    "invalid_value",
                    "lock_delay_seconds is not supported by POST /locks: a set's grants have \
                     no lock-delay; acquire the lock alone for one",
                ))
            }
        }),
        &mut errors,
    );
    let (Some(owner), Some(ttl), Some(locks), Some(wait), Some(value), Some(())) =
        (owner, ttl, locks, wait, value, no_delay)
    else {
        return Err(ProblemKind::Validation(errors));
    };
    let set = LockSet::new(owner, ttl, locks, value).map_err(|error| {
        ProblemKind::Validation(vec![FieldError::new(
            "locks",
            "out_of_range",
            error.to_string(),
        )])
    })?;
    state.service.tenants().check_ttl(&tenant, set.ttl())?;
    Ok(MultiAcquireRequest {
        tenant,
        set,
        wait: Duration::from_secs(u64::from(wait)),
    })
}

/// A release of several locks, parsed.
pub(crate) struct ReleaseMany {
    pub tenant: Tenant,
    pub owner: Owner,
    pub resources: Vec<ResourceName>,
}

/// Authenticates, reads and validates a release of several locks (`{owner, resources}`).
pub(crate) async fn release_all_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<ReleaseMany, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let owner = take(owner_field(fields.owner), &mut errors);
    let resources = resources_field(fields.resources)
        .map_err(|invalid| errors.extend(invalid))
        .ok();
    let (Some(owner), Some(resources)) = (owner, resources) else {
        return Err(ProblemKind::Validation(errors));
    };
    Ok(ReleaseMany {
        tenant,
        owner,
        resources,
    })
}
