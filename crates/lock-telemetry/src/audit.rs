//! The audit log: one structured event (target `lockd::audit`, level INFO or WARN) for every
//! grant, denial, renewal, forbidden attempt, release, election operation and refused fence
//! check, with tenant,
//! resource and owner (and the fencing token where the answer carries one). API keys never
//! appear here.

use lock_domain::{
    FencingToken, Leader, Lock, Owner, Permit, ReleaseResult, RenewResult, ResourceName, Tenant,
    UnheardGrant, UnheardKind,
};

/// As the API writes times: RFC 3339, milliseconds, `Z`.
fn timestamp(at: chrono::DateTime<chrono::Utc>) -> String {
    at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub(crate) fn granted(tenant: &Tenant, lock: &Lock) {
    tracing::info!(
        target: "lockd::audit",
        event = "granted",
        tenant = %tenant,
        resource = %lock.resource,
        owner = %lock.owner,
        fencing_token = lock.fencing_token.value(),
        expires_at = %timestamp(lock.expires_at),
        mode = lock.mode.as_str(),
    );
}

pub(crate) fn denied(tenant: &Tenant, resource: &ResourceName, owner: &Owner) {
    tracing::info!(target: "lockd::audit", event = "denied", tenant = %tenant, resource = %resource, owner = %owner);
}

pub(crate) fn released(
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    result: ReleaseResult,
) {
    match result {
        ReleaseResult::Released(fencing_token) => {
            tracing::info!(
                target: "lockd::audit",
                event = "released",
                tenant = %tenant,
                resource = %resource,
                owner = %owner,
                fencing_token = fencing_token.value(),
            );
        }
        ReleaseResult::Forbidden => forbidden("release", tenant, resource, owner),
        ReleaseResult::NotFound => {
            tracing::info!(target: "lockd::audit", event = "release_not_found", tenant = %tenant, resource = %resource, owner = %owner);
        }
    }
}

pub(crate) fn renewed(
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    result: &RenewResult,
) {
    match result {
        RenewResult::Renewed(lock) => {
            tracing::info!(
                target: "lockd::audit",
                event = "renewed",
                tenant = %tenant,
                resource = %resource,
                owner = %owner,
                fencing_token = lock.fencing_token.value(),
                expires_at = %timestamp(lock.expires_at),
            );
        }
        RenewResult::Forbidden => forbidden("renew", tenant, resource, owner),
        RenewResult::NotFound => {
            tracing::info!(target: "lockd::audit", event = "renew_not_found", tenant = %tenant, resource = %resource, owner = %owner);
        }
    }
}

fn forbidden(operation: &str, tenant: &Tenant, resource: &ResourceName, owner: &Owner) {
    tracing::warn!(
        target: "lockd::audit",
        event = "forbidden",
        operation,
        tenant = %tenant,
        resource = %resource,
        owner = %owner,
    );
}

/// A grant that nobody will use was undone (`undone`), or was found no longer to be exactly that
/// grant (a re-grant, renewal or other lease followed it) and was left alone.
pub(crate) fn grant_undone(tenant: &Tenant, lock: &Lock, undone: bool, reason: &str) {
    tracing::info!(
        target: "lockd::audit",
        event = if undone { "grant_undone" } else { "grant_undo_skipped" },
        tenant = %tenant,
        resource = %lock.resource,
        owner = %lock.owner,
        fencing_token = lock.fencing_token.value(),
        reason,
    );
}

/// A fence check refused `token` on lock or semaphore `name`: whoever presented it does not
/// hold a live lease (a holder that paused past its lease, or a forged token). Valid checks are
/// not written: they come before every protected write.
pub(crate) fn fence_stale(
    tenant: &Tenant,
    primitive: &str,
    name: &ResourceName,
    token: FencingToken,
) {
    tracing::info!(
        target: "lockd::audit",
        event = "fence_stale",
        tenant = %tenant,
        primitive,
        resource = %name,
        fencing_token = token.value(),
    );
}

/// A semaphore event: `event` of `owner` on semaphore `name`, with the grant where there is one.
pub(crate) fn semaphore(
    event: &str,
    tenant: &Tenant,
    name: &ResourceName,
    owner: &Owner,
    permit: Option<&Permit>,
) {
    match permit {
        Some(permit) => tracing::info!(
            target: "lockd::audit",
            event,
            primitive = "semaphore",
            tenant = %tenant,
            semaphore = %name,
            owner = %owner,
            permits = permit.lease.weight.get(),
            limit = permit.lease.capacity.get(),
            fencing_token = permit.lease.fencing_token.value(),
            expires_at = %timestamp(permit.lease.expires_at),
        ),
        None => tracing::info!(
            target: "lockd::audit",
            event,
            primitive = "semaphore",
            tenant = %tenant,
            semaphore = %name,
            owner = %owner,
        ),
    }
}

/// A semaphore grant that nobody will use was undone, or left alone (see [`grant_undone`]).
/// A grant the store made after its caller had gone, undone by the store (or left alone: no
/// longer exactly that grant), in the shape of the use cases' own undone grants.
pub(crate) fn unheard_grant(grant: &UnheardGrant) {
    const REASON: &str = "the grant was made after its caller had gone";
    let event = if grant.undone {
        "grant_undone"
    } else {
        "grant_undo_skipped"
    };
    let (tenant, name, owner, token) = (
        &grant.tenant,
        &grant.name,
        &grant.owner,
        grant.fencing_token.value(),
    );
    match grant.kind {
        UnheardKind::Lock => tracing::info!(
            target: "lockd::audit",
            event,
            tenant = %tenant,
            resource = %name,
            owner = %owner,
            fencing_token = token,
            reason = REASON,
        ),
        UnheardKind::LockInMode(mode) => tracing::info!(
            target: "lockd::audit",
            event,
            tenant = %tenant,
            resource = %name,
            owner = %owner,
            mode = mode.as_str(),
            fencing_token = token,
            reason = REASON,
        ),
        UnheardKind::Permits => tracing::info!(
            target: "lockd::audit",
            event,
            primitive = "semaphore",
            tenant = %tenant,
            semaphore = %name,
            owner = %owner,
            fencing_token = token,
            reason = REASON,
        ),
    }
}

pub(crate) fn permit_grant_undone(tenant: &Tenant, permit: &Permit, undone: bool, reason: &str) {
    tracing::info!(
        target: "lockd::audit",
        event = if undone { "grant_undone" } else { "grant_undo_skipped" },
        primitive = "semaphore",
        tenant = %tenant,
        semaphore = %permit.name,
        owner = %permit.lease.owner,
        fencing_token = permit.lease.fencing_token.value(),
        reason,
    );
}

/// An election operation of `candidate` on `election` (`operation`: campaign, proclaim, renew,
/// resign) and its outcome as the event, with the term and the lease's end when the candidate
/// leads after it. Values are not written: they are the leader's data, not the log's.
pub(crate) fn election(
    operation: &str,
    outcome: &str,
    tenant: &Tenant,
    election: &ResourceName,
    candidate: &Owner,
    leader: Option<&Leader>,
) {
    match leader {
        Some(leader) => tracing::info!(
            target: "lockd::audit",
            event = outcome,
            operation,
            primitive = "election",
            tenant = %tenant,
            election = %election,
            candidate = %candidate,
            term = leader.term.value(),
            expires_at = %timestamp(leader.expires_at),
        ),
        None => tracing::info!(
            target: "lockd::audit",
            event = outcome,
            operation,
            primitive = "election",
            tenant = %tenant,
            election = %election,
            candidate = %candidate,
        ),
    }
}

/// An admin's force-release: one WARN event per lease ended, with the reason (none when nothing
/// was held: one event saying so).
pub(crate) fn force_released(tenant: &Tenant, report: &lock_service::ForceReleased<'_>) {
    if report.ended.is_empty() {
        tracing::warn!(
            target: "lockd::audit",
            event = "force_release_nothing",
            tenant = %tenant,
            primitive = report.kind.as_str(),
            name = %report.name,
            reason = report.reason.as_str(),
        );
    }
    for (owner, token) in report.ended {
        tracing::warn!(
            target: "lockd::audit",
            event = "force_released",
            tenant = %tenant,
            primitive = report.kind.as_str(),
            name = %report.name,
            owner = %owner,
            fencing_token = token.value(),
            reason = report.reason.as_str(),
        );
    }
}
