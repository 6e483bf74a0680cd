//! Reading the requests of the semaphore routes into domain values: an acquire
//! ([`acquire_request`]) and a renew ([`renew_request`]); a release is read like a lock's
//! (`lock_request::release_request`). Each authenticates, reads the body, parses every input
//! through its field definition (`crate::fields`) and lists every invalid one in one 422.

use std::time::Duration;

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LeaseValue, Owner, PermitRequest, ResourceName, Tenant, Ttl};
use lock_service::PermitsRequest;

use crate::authentication::tenant_of;
use crate::body::{owner_field, parse_object, read_json_body, ttl_field, wait_field};
use crate::fields::lock_delay::lock_delay_field;
use crate::fields::semaphore::{limit_field, permits_field, value_field};
use crate::problem::{FieldError, ProblemKind};
use crate::resource_path::semaphore_of;
use crate::ApiState;

/// The value of one input, its error kept in `errors`.
fn take<T>(parsed: Result<T, FieldError>, errors: &mut Vec<FieldError>) -> Option<T> {
    parsed.map_err(|error| errors.push(error)).ok()
}

/// Authenticates, reads and validates an acquire of permits, in the contract's order: 401, 415,
/// 413, 408, 400, then one 422 listing every invalid input (name, owner, ttl_seconds, limit,
/// permits, wait_seconds, value).
pub(crate) async fn acquire_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<PermitsRequest, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let name = take(semaphore_of(req), &mut errors);
    let owner = take(owner_field(fields.owner), &mut errors);
    let ttl = take(
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
        &mut errors,
    );
    let limit = take(limit_field(fields.limit), &mut errors);
    let permits = take(permits_field(fields.permits, limit), &mut errors);
    let wait = take(
        wait_field(fields.wait_seconds, state.settings.max_wait_seconds),
        &mut errors,
    );
    let value = take(value_field(fields.value), &mut errors);
    let lock_delay = take(
        lock_delay_field(fields.lock_delay_seconds, state.settings.default_lock_delay),
        &mut errors,
    );
    let (
        Some(name),
        Some(owner),
        Some(ttl),
        Some(limit),
        Some(permits),
        Some(wait),
        Some(value),
        Some(lock_delay),
    ) = (name, owner, ttl, limit, permits, wait, value, lock_delay)
    else {
        return Err(ProblemKind::Validation(errors));
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(PermitsRequest {
        tenant,
        name,
        permit: PermitRequest {
            owner,
            permits,
            limit,
            ttl,
            value,
            lock_delay,
        },
        wait: Duration::from_secs(u64::from(wait)),
    })
}

/// A renew of permits, parsed.
pub(crate) struct PermitRenew {
    pub tenant: Tenant,
    pub name: ResourceName,
    pub owner: Owner,
    pub ttl: Ttl,
    pub value: Option<LeaseValue>,
}

/// Authenticates, reads and validates a renew of permits (`{owner, ttl_seconds, value?}`).
pub(crate) async fn renew_request(
    req: &HttpRequest,
    payload: web::Payload,
    state: &ApiState,
) -> Result<PermitRenew, ProblemKind> {
    let tenant = tenant_of(req, state)?;
    let body = read_json_body(req, payload, state.settings.body_timeout).await?;
    let fields = parse_object(&body)?;
    let mut errors = Vec::new();
    let name = take(semaphore_of(req), &mut errors);
    let owner = take(owner_field(fields.owner), &mut errors);
    let ttl = take(
        ttl_field(fields.ttl_seconds, state.settings.max_ttl_seconds),
        &mut errors,
    );
    let value = take(value_field(fields.value), &mut errors);
    let (Some(name), Some(owner), Some(ttl), Some(value)) = (name, owner, ttl, value) else {
        return Err(ProblemKind::Validation(errors));
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(PermitRenew {
        tenant,
        name,
        owner,
        ttl,
        value,
    })
}
