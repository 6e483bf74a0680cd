//! Reading the requests of the semaphore routes into domain values: an acquire
//! ([`acquire_request`]) and a renew ([`renew_request`]); a release is read like a lock's
//! (`lock_request::release_request`). Each authenticates, reads the body, parses every input
//! through its field definition (`crate::fields`) and lists every invalid one in one 422.

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LeaseValue, Owner, PermitRequest, ResourceName, Tenant, Ttl};
use lock_service::PermitsRequest;

use crate::authentication::tenant_of;
use crate::body::{owner_field, parse_object, read_json_body, ttl_field};
use crate::fields::semaphore::{limit_field, permits_field, value_field};
use crate::lease_terms::{Delay, Holder, Invalid, Terms, Wait};
use crate::problem::ProblemKind;
use crate::resource_path::semaphore_of;
use crate::ApiState;

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
    let terms = Terms::read(
        &fields,
        Holder::Owner,
        Wait::Read,
        Delay::OrDefault,
        &state.settings,
    );
    let mut invalid = Invalid::default();
    let name = invalid.take(semaphore_of(req));
    let owner = invalid.take(terms.holder);
    let ttl = invalid.take(terms.ttl);
    let limit = invalid.take(limit_field(fields.limit));
    let permits = invalid.take(permits_field(fields.permits, limit));
    let wait = invalid.take(terms.wait);
    let value = invalid.take(terms.value);
    let lock_delay = invalid.take(terms.lock_delay);
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
        return Err(invalid.problem());
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(PermitsRequest {
        tenant,
        name,
        permit: PermitRequest {
            permits,
            limit,
            terms: lock_domain::LeaseTerms {
                owner,
                ttl,
                value,
                lock_delay,
            },
        },
        wait,
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
    // A hold under a session ends with its session: only a keepalive moves it.
    crate::fields::session::refuse_in_renew(fields.session)?;
    let mut invalid = Invalid::default();
    let name = invalid.take(semaphore_of(req));
    let owner = invalid.take(owner_field(fields.owner));
    let ttl = invalid.take(ttl_field(
        fields.ttl_seconds,
        state.settings.max_ttl_seconds,
    ));
    let value = invalid.take(value_field(fields.value));
    let (Some(name), Some(owner), Some(ttl), Some(value)) = (name, owner, ttl, value) else {
        return Err(invalid.problem());
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
