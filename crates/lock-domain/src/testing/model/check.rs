//! The checker: runs a sequence of [`Op`]s against the model and a [`crate::LeaseStore`] side by side
//! and reports the first answer on which they disagree.

use crate::testing::calls::LeaseCalls;
use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};

use super::coverage::Coverage;
use super::naive::{Model, ModelAcquire, ModelLock, ModelRelease};
use super::tokens::TokenRelations;
use super::Op;
use crate::testing::ManualClock;
use crate::{
    AcquireOutcome, Clock, Lock, Owner, ReleaseResult, RenewResult, ResourceName, Tenant, Ttl,
    DEFAULT_MAX_TTL_SECONDS,
};

/// Where a repository and the model first disagreed (or the repository failed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divergence {
    /// The index of the operation in the sequence.
    pub step: usize,
    pub op: Op,
    pub detail: String,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {} {:?}: {}", self.step, self.op, self.detail)
    }
}

impl std::error::Error for Divergence {}

/// Runs `ops` against the model and `repo` side by side, starting both at `clock`'s current time
/// (the clock `repo` decides with). `repo` must start empty.
///
/// Returns what the run covered.
///
/// # Errors
/// The first [`Divergence`]: an answer that differs from the model's (outcome, owner,
/// `acquired_at`, `expires_at`, or token relation), or a repository error.
pub async fn check_against_model(
    repo: &dyn crate::LeaseStore,
    clock: &ManualClock,
    ops: &[Op],
) -> Result<Coverage, Divergence> {
    let mut model = Model::starting_at(clock.now().timestamp_millis());
    let mut tokens = TokenRelations::default();
    let mut coverage = Coverage::default();
    for (step, &op) in ops.iter().enumerate() {
        apply(repo, clock, &mut model, &mut tokens, &mut coverage, op)
            .await
            .map_err(|detail| Divergence { step, op, detail })?;
        coverage.ops += 1;
    }
    Ok(coverage)
}

async fn apply(
    repo: &dyn crate::LeaseStore,
    clock: &ManualClock,
    model: &mut Model,
    tokens: &mut TokenRelations,
    coverage: &mut Coverage,
    op: Op,
) -> Result<(), String> {
    let failed = |error: crate::RepositoryError| format!("the repository failed: {error:?}");
    if let Some(resource) = op.resource() {
        if model.at_expiry_boundary(resource) {
            coverage.at_expiry_boundary += 1;
        }
    }
    match op {
        Op::Advance { millis } => {
            model.advance(millis);
            clock.advance(Duration::from_millis(millis));
        }
        Op::Acquire {
            resource,
            owner,
            ttl_seconds,
        } => {
            let had_expired_lock = model.has_ended_lease(resource);
            let want = model.acquire(resource, owner, ttl_seconds);
            let got = repo
                .acquire(
                    Tenant::default_tenant(),
                    name(resource),
                    who(owner),
                    ttl(ttl_seconds),
                    None,
                )
                .await
                .map_err(failed)?;
            match (&want, got) {
                (ModelAcquire::Held, AcquireOutcome::Held) => coverage.held += 1,
                (ModelAcquire::GrantedNew(want), AcquireOutcome::Granted(lock)) => {
                    same_lock(resource, want, &lock)?;
                    tokens.new_grant(resource, want.token, lock.fencing_token)?;
                    coverage.new_grants += 1;
                    if had_expired_lock {
                        coverage.takeovers_after_expiry += 1;
                    }
                }
                (ModelAcquire::GrantedSameToken(want), AcquireOutcome::Granted(lock)) => {
                    same_lock(resource, want, &lock)?;
                    tokens.same(want.token, lock.fencing_token)?;
                    coverage.same_token_grants += 1;
                }
                (want, got) => return Err(format!("expected {want:?}, got {got:?}")),
            }
        }
        Op::Release { resource, owner } => {
            let want = model.release(resource, owner);
            let got = repo
                .release(Tenant::default_tenant(), name(resource), who(owner))
                .await
                .map_err(failed)?;
            match (want, got) {
                (ModelRelease::Released(token), ReleaseResult::Released(got_token)) => {
                    tokens.same(token, got_token)?;
                    coverage.released += 1;
                }
                (ModelRelease::Forbidden, ReleaseResult::Forbidden) => coverage.forbidden += 1,
                (ModelRelease::NotFound, ReleaseResult::NotFound) => coverage.not_found += 1,
                (want, got) => return Err(format!("expected {want:?}, got {got:?}")),
            }
        }
        Op::Renew {
            resource,
            owner,
            ttl_seconds,
        } => {
            let want = model.renew(resource, owner, ttl_seconds);
            let got = repo
                .renew(
                    Tenant::default_tenant(),
                    name(resource),
                    who(owner),
                    ttl(ttl_seconds),
                    None,
                )
                .await
                .map_err(failed)?;
            match (&want, got) {
                (Ok(want), RenewResult::Renewed(lock)) => {
                    same_lock(resource, want, &lock)?;
                    tokens.same(want.token, lock.fencing_token)?;
                    coverage.renewed += 1;
                }
                (Err(ReleaseResult::NotFound), RenewResult::NotFound) => coverage.not_found += 1,
                (Err(ReleaseResult::Forbidden), RenewResult::Forbidden) => coverage.forbidden += 1,
                (want, got) => return Err(format!("expected {want:?}, got {got:?}")),
            }
        }
        Op::Status { resource } => {
            let want = model.live(resource);
            let got = repo
                .status(Tenant::default_tenant(), name(resource))
                .await
                .map_err(failed)?;
            match (want, got) {
                (None, None) => coverage.status_none += 1,
                (Some(want), Some(lock)) => {
                    same_lock(resource, want, &lock)?;
                    tokens.same(want.token, lock.fencing_token)?;
                    coverage.status_live += 1;
                }
                (want, got) => return Err(format!("expected {want:?}, got {got:?}")),
            }
        }
    }
    Ok(())
}

/// Compares everything but the token, whose value is the repository's own.
fn same_lock(resource: &str, want: &ModelLock, got: &Lock) -> Result<(), String> {
    let matches = got.resource.as_str() == resource
        && got.owner.as_str() == want.owner
        && Some(got.acquired_at) == at(want.acquired_ms)
        && Some(got.expires_at) == at(want.expires_ms);
    if matches {
        Ok(())
    } else {
        Err(format!(
            "expected {want:?} on {resource:?} (acquired_at {:?}, expires_at {:?}), got {got:?}",
            at(want.acquired_ms),
            at(want.expires_ms)
        ))
    }
}

fn at(ms: i64) -> Option<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms)
}

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).expect("the model's resources are valid")
}

fn who(raw: &str) -> Owner {
    Owner::parse(raw).expect("the model's owners are valid")
}

fn ttl(seconds: u32) -> Ttl {
    Ttl::parse(i64::from(seconds), DEFAULT_MAX_TTL_SECONDS).expect("the model's TTLs are valid")
}
