//! Reading the multi-lock requests into domain values: an acquire of several locks
//! (`POST /locks`) and a release of several (`DELETE /locks`). Each authenticates, reads the
//! body, parses every input through its field definition and lists every invalid one in one
//! 422.

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LockSet, Owner, ResourceName, Tenant};
use lock_service::MultiAcquireRequest;

use crate::authentication::tenant_of;
use crate::body::{owner_field, parse_object, read_json_body};
use crate::fields::lock_list::{locks_field, resources_field};
use crate::lease_terms::{Delay, Holder, Invalid, Terms, Wait};
use crate::problem::{FieldError, ProblemKind};
use crate::ApiState;

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
    let terms = Terms::read(
        &fields,
        Holder::Owner,
        Wait::Read,
        // A set's grants have no lock-delay: asking for one is refused, not ignored.
        Delay::Refused(
            "lock_delay_seconds is not supported by POST /locks: a set's grants have no \
             lock-delay; acquire the lock alone for one",
        ),
        &state.settings,
    );
    let mut invalid = Invalid::default();
    let owner = invalid.take(terms.holder);
    let ttl = invalid.take(terms.ttl);
    let locks = invalid.take_all(locks_field(fields.locks));
    let wait = invalid.take(terms.wait);
    let value = invalid.take(terms.value);
    let no_delay = invalid.take(terms.lock_delay);
    let (Some(owner), Some(ttl), Some(locks), Some(wait), Some(value), Some(_)) =
        (owner, ttl, locks, wait, value, no_delay)
    else {
        return Err(invalid.problem());
    };
    let set =
        LockSet::new(lock_domain::LeaseTerms::new(owner, ttl, value), locks).map_err(|error| {
            ProblemKind::Validation(vec![FieldError::new(
                "locks",
                "out_of_range",
                error.to_string(),
            )])
        })?;
    state.service.tenants().check_ttl(&tenant, set.ttl())?;
    Ok(MultiAcquireRequest { tenant, set, wait })
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
    let mut invalid = Invalid::default();
    let owner = invalid.take(owner_field(fields.owner));
    let resources = invalid.take_all(resources_field(fields.resources));
    let (Some(owner), Some(resources)) = (owner, resources) else {
        return Err(invalid.problem());
    };
    Ok(ReleaseMany {
        tenant,
        owner,
        resources,
    })
}
