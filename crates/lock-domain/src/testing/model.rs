//! A model of the lock rules, written apart from them, and a checker that runs a sequence of
//! operations against the model and a [`LockRepository`] side by side.
//!
//! The model is deliberately naive (a map and a counter in milliseconds) and shares no code with
//! `rules.rs`, so a property test that generates sequences of [`Op`]s can catch a rule, an adapter
//! or the reference repository drifting from the documented contract. The strategies that generate
//! the sequences live in the test files, so that this crate does not depend on a property-testing
//! library.

use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::testing::ManualClock;
use crate::{
    AcquireOutcome, Clock, FencingToken, Lock, LockRepository, Owner, ReleaseResult, RenewResult,
    ResourceName, Tenant, Ttl, DEFAULT_MAX_TTL_SECONDS,
};

/// The resources the operations touch: literal data that differs only in case, and a name that
/// would break a query built by string pasting.
pub const RESOURCES: [&str; 3] = ["payment:42", "Payment:42", "x'; DROP TABLE t; -- %_"];

/// The owners the operations act as; two differ only in case.
pub const OWNERS: [&str; 3] = ["alice", "Alice", "bob"];

/// The longest lease an operation asks for, in seconds.
pub const MAX_TTL_SECONDS: u32 = 5;

/// One step of a generated sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Acquire {
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    },
    Release {
        resource: &'static str,
        owner: &'static str,
    },
    Renew {
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    },
    Status {
        resource: &'static str,
    },
    /// Moves the clock forward by this many milliseconds.
    Advance {
        millis: u64,
    },
}

/// A lock as the model keeps it: epoch milliseconds and the model's own token numbering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLock {
    pub owner: &'static str,
    pub acquired_ms: i64,
    pub expires_ms: i64,
    pub token: u64,
}

/// What the model says a release answers (with the model's token of the ended lock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRelease {
    Released(u64),
    NotFound,
    Forbidden,
}

/// What the model says an acquire answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelAcquire {
    /// A new grant: the token is larger than every token issued before for the resource.
    GrantedNew(ModelLock),
    /// The live owner acquired again: re-granted from now, same token.
    GrantedSameToken(ModelLock),
    Held,
}

/// The rules, restated as plainly as possible: a map from resource to lock and a token counter.
/// A lock is live while `now_ms < expires_ms`.
#[derive(Debug, Clone, Default)]
pub struct Model {
    now_ms: i64,
    locks: HashMap<&'static str, ModelLock>,
    last_token: u64,
}

impl Model {
    /// A model whose clock reads `now_ms` (epoch milliseconds).
    pub fn starting_at(now_ms: i64) -> Self {
        Self {
            now_ms,
            ..Self::default()
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    pub fn advance(&mut self, millis: u64) {
        self.now_ms += i64::try_from(millis).expect("test advances fit an i64");
    }

    /// The live lock on `resource`, if any.
    pub fn live(&self, resource: &str) -> Option<&ModelLock> {
        self.locks
            .get(resource)
            .filter(|lock| self.now_ms < lock.expires_ms)
    }

    /// Whether `resource` has a lock (live or not) whose lease ends exactly now.
    pub fn at_expiry_boundary(&self, resource: &str) -> bool {
        self.locks
            .get(resource)
            .is_some_and(|lock| lock.expires_ms == self.now_ms)
    }

    pub fn acquire(
        &mut self,
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    ) -> ModelAcquire {
        let expires_ms = self.now_ms + i64::from(ttl_seconds) * 1_000;
        let kept_token = match self.live(resource) {
            Some(lock) if lock.owner != owner => return ModelAcquire::Held,
            Some(lock) => Some(lock.token),
            None => None,
        };
        let token = kept_token.unwrap_or_else(|| {
            self.last_token += 1;
            self.last_token
        });
        let lock = ModelLock {
            owner,
            acquired_ms: self.now_ms,
            expires_ms,
            token,
        };
        self.locks.insert(resource, lock.clone());
        match kept_token {
            Some(_) => ModelAcquire::GrantedSameToken(lock),
            None => ModelAcquire::GrantedNew(lock),
        }
    }

    pub fn release(&mut self, resource: &str, owner: &str) -> ModelRelease {
        match self.live(resource) {
            None => ModelRelease::NotFound,
            Some(lock) if lock.owner != owner => ModelRelease::Forbidden,
            Some(lock) => {
                let token = lock.token;
                self.locks.remove(resource);
                ModelRelease::Released(token)
            }
        }
    }

    /// `Ok` with the renewed lock, or the refusal (`NotFound` or `Forbidden`).
    pub fn renew(
        &mut self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
    ) -> Result<ModelLock, ReleaseResult> {
        let now_ms = self.now_ms;
        match self.live(resource) {
            None => Err(ReleaseResult::NotFound),
            Some(lock) if lock.owner != owner => Err(ReleaseResult::Forbidden),
            Some(_) => {
                let lock = self.locks.get_mut(resource).expect("a live lock exists");
                lock.expires_ms = now_ms + i64::from(ttl_seconds) * 1_000;
                Ok(lock.clone())
            }
        }
    }
}

/// How much of the interesting ground a run covered: lets a test prove its generator reaches the
/// expiry boundary, takeovers and refusals rather than trusting it does.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Coverage {
    pub ops: usize,
    pub new_grants: usize,
    pub same_token_grants: usize,
    /// New grants over a lock that had expired (not released).
    pub takeovers_after_expiry: usize,
    pub held: usize,
    pub released: usize,
    pub renewed: usize,
    pub forbidden: usize,
    pub not_found: usize,
    pub status_live: usize,
    pub status_none: usize,
    /// Operations on a resource whose lease ended exactly at that instant.
    pub at_expiry_boundary: usize,
}

impl std::ops::AddAssign for Coverage {
    fn add_assign(&mut self, other: Self) {
        self.ops += other.ops;
        self.new_grants += other.new_grants;
        self.same_token_grants += other.same_token_grants;
        self.takeovers_after_expiry += other.takeovers_after_expiry;
        self.held += other.held;
        self.released += other.released;
        self.renewed += other.renewed;
        self.forbidden += other.forbidden;
        self.not_found += other.not_found;
        self.status_live += other.status_live;
        self.status_none += other.status_none;
        self.at_expiry_boundary += other.at_expiry_boundary;
    }
}

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

/// The repository's tokens may be numbered differently from the model's: what must agree is
/// whether a grant kept the token or took a new one larger than any before on the resource.
#[derive(Debug, Default)]
struct TokenRelations {
    repository_token_of: HashMap<u64, FencingToken>,
    highest_for: HashMap<&'static str, FencingToken>,
}

impl TokenRelations {
    fn new_grant(
        &mut self,
        resource: &'static str,
        model_token: u64,
        got: FencingToken,
    ) -> Result<(), String> {
        if let Some(highest) = self.highest_for.get(resource) {
            if got <= *highest {
                return Err(format!(
                    "a new grant must carry a token larger than every earlier one on {resource:?} \
                     (highest {highest}), got {got}"
                ));
            }
        }
        self.highest_for.insert(resource, got);
        self.repository_token_of.insert(model_token, got);
        Ok(())
    }

    fn same(&self, model_token: u64, got: FencingToken) -> Result<(), String> {
        match self.repository_token_of.get(&model_token) {
            Some(&want) if want == got => Ok(()),
            Some(want) => Err(format!("expected the kept token {want}, got {got}")),
            None => Err(format!("the model's token {model_token} was never granted")),
        }
    }
}

/// Runs `ops` against the model and `repo` side by side, starting both at `clock`'s current time
/// (the clock `repo` decides with). `repo` must start empty.
///
/// Returns what the run covered.
///
/// # Errors
/// The first [`Divergence`]: an answer that differs from the model's (outcome, owner,
/// `acquired_at`, `expires_at`, or token relation), or a repository error.
pub async fn check_against_model(
    repo: &dyn LockRepository,
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
    repo: &dyn LockRepository,
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
            let had_expired_lock =
                model.locks.contains_key(resource) && model.live(resource).is_none();
            let want = model.acquire(resource, owner, ttl_seconds);
            let got = repo
                .acquire(
                    Tenant::default_tenant(),
                    name(resource),
                    who(owner),
                    ttl(ttl_seconds),
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

impl Op {
    fn resource(self) -> Option<&'static str> {
        match self {
            Op::Acquire { resource, .. }
            | Op::Release { resource, .. }
            | Op::Renew { resource, .. }
            | Op::Status { resource } => Some(resource),
            Op::Advance { .. } => None,
        }
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
