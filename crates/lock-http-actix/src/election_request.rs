//! Reading the requests of the election routes into domain values: a campaign
//! ([`campaign_request`]), a proclaim ([`proclaim_request`]) and a renew
//! ([`leader_renew_request`]); a resign is read like a lock's release, with `candidate` for
//! `owner` (`lock_request::release_request_by`). Each authenticates, reads the body, parses every
//! input through its field definition (`crate::fields`) and lists every invalid one in one 422.

use actix_web::web;
use actix_web::HttpRequest;
use lock_domain::{LeaseValue, Owner, ResourceName, Tenant, Ttl};
use lock_service::CampaignRequest;

use crate::authentication::tenant_of;
use crate::body::{parse_object, read_json_body, ttl_field};
use crate::fields::owner::{owner_field_named, CANDIDATE};
use crate::fields::semaphore::value_field;
use crate::lease_terms::{Delay, Holder, Invalid, Terms, Wait};
use crate::problem::{FieldError, ProblemKind};
use crate::resource_path::election_of;
use crate::ApiState;

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
    let terms = Terms::read(
        &fields,
        Holder::Candidate,
        Wait::Read,
        Delay::OrDefault,
        &state.settings,
    );
    let mut invalid = Invalid::default();
    let election = invalid.take(election_of(req));
    let candidate = invalid.take(terms.holder);
    let ttl = invalid.take(terms.ttl);
    let wait = invalid.take(terms.wait);
    let value = invalid.take(terms.value);
    let lock_delay = invalid.take(terms.lock_delay);
    let (Some(election), Some(candidate), Some(ttl), Some(wait), Some(value), Some(lock_delay)) =
        (election, candidate, ttl, wait, value, lock_delay)
    else {
        return Err(invalid.problem());
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(CampaignRequest {
        tenant,
        election,
        wait,
        terms: lock_domain::LeaseTerms {
            owner: candidate,
            ttl,
            value,
            lock_delay,
        },
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
    let mut invalid = Invalid::default();
    let election = invalid.take(election_of(req));
    // A leader under a session proclaims as its session.
    let candidate = match crate::fields::session::session_field(fields.session) {
        Ok(None) => owner_field_named(CANDIDATE, fields.candidate),
        Ok(Some(_)) if fields.candidate.is_some_and(|raw| raw.get() != "null") => {
            Err(FieldError::new(
                CANDIDATE,
                "conflict",
                "candidate cannot be given with session",
            ))
        }
        Ok(Some(id)) => Ok(Owner::of_session(&id)),
        Err(error) => Err(error),
    };
    let candidate = invalid.take(candidate);
    let value = invalid.take(value_field(fields.value).and_then(|value| {
        value.ok_or_else(|| {
            FieldError::new(
                "value",
                "required",
                "value is required: the JSON value the leader proclaims",
            )
        })
    }));
    let (Some(election), Some(candidate), Some(value)) = (election, candidate, value) else {
        return Err(invalid.problem());
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
    // A hold under a session ends with its session: only a keepalive moves it.
    crate::fields::session::refuse_in_renew(fields.session)?;
    let mut invalid = Invalid::default();
    let election = invalid.take(election_of(req));
    let candidate = invalid.take(owner_field_named(CANDIDATE, fields.candidate));
    let ttl = invalid.take(ttl_field(
        fields.ttl_seconds,
        state.settings.max_ttl_seconds,
    ));
    let (Some(election), Some(candidate), Some(ttl)) = (election, candidate, ttl) else {
        return Err(invalid.problem());
    };
    state.service.tenants().check_ttl(&tenant, ttl)?;
    Ok(LeaderRenew {
        tenant,
        election,
        candidate,
        ttl,
    })
}
