//! The shared-lock port: the operations of a store that the exclusive lock of v1 does not need.
//! A port of its own, beside [`crate::LockRepository`], so that the exclusive operations and
//! their statements stay as they were: a shared hold shows to them as a live lock of
//! [`crate::Owner::shared_holders`] (see `shared.rs`).

use async_trait::async_trait;

use crate::{
    Hold, LeaseValue, Lock, Owner, ReleaseResult, RenewResult, RepositoryError, ResourceName,
    SharedAcquireOutcome, Tenant, Ttl,
};

/// The shared-lock operations of a store, on the same locks as its [`crate::LockRepository`]
/// (lock `x` here is lock `x` there). Every implementation MUST be linearizable per lock across
/// every process that shares the storage, together with the exclusive operations: at every
/// instant a lock has either no live holder, one exclusive holder, or any number of shared
/// holders, never an exclusive holder beside another.
///
/// The decisions are the domain's (`decide_shared_acquire`, `holder_role`, `shared_row`); an
/// implementation applies them to the lock's row and every shared lease it keeps, under the
/// lock that serialises the row's writers, and rewrites the row with [`crate::shared_row`] in the
/// same transaction as any change to the shared leases.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SharedLockRepository: Send + Sync {
    /// Acquires a shared lease on `resource` for `owner` for `ttl`, with `value` stored with it
    /// (a re-grant replaces the value only when `value` is `Some`).
    ///
    /// MUST return `Held` (changing nothing) when another owner holds the live lock exclusively,
    /// and `ModeMismatch` (changing nothing) when `owner` does. Otherwise MUST return `Granted`:
    /// a re-grant from `now` of the owner's live shared lease (same token), or a new lease with
    /// `acquired_at = now`, `expires_at = now + ttl` and a fencing token larger than every token
    /// issued before by the store.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then no grant was made.
    async fn acquire_shared(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<SharedAcquireOutcome, RepositoryError>;

    /// How `resource` is held now (one consistent read of the row and the leases), or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn hold(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<Hold>, RepositoryError>;

    /// Ends `owner`'s live lease on `resource`, whichever its mode: `Released` with its token,
    /// `Forbidden` (changing nothing) when others hold the lock and `owner` holds no live lease
    /// there, `NotFound` when no one holds it.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was released.
    async fn release_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
    ) -> Result<ReleaseResult, RepositoryError>;

    /// Sets the end of `owner`'s live lease on `resource`, whichever its mode, to `now + ttl`
    /// (which may be sooner than before) and, when `value` is `Some`, replaces its value: `Renewed` with the lease (its mode, start and token
    /// unchanged), or `Forbidden` / `NotFound` as [`Self::release_held`].
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was renewed.
    async fn renew_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<RenewResult, RepositoryError>;

    /// Replaces the value of `owner`'s live lease on `resource`, whichever its mode, and nothing
    /// else: its start, end and fencing token stay as they are (an election's proclaim). `Renewed`
    /// with the lease as it is now, or `Forbidden` / `NotFound` (changing nothing) as
    /// [`Self::release_held`].
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was changed.
    async fn set_value_held(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        value: LeaseValue,
    ) -> Result<RenewResult, RepositoryError>;

    /// Undoes a shared grant nobody will use: ends `grant.owner`'s shared lease on
    /// `grant.resource` only if it is still exactly that new grant (as
    /// [`crate::LockRepository::undo_grant`] for exclusive grants). MUST return `true` when it
    /// ended it, `false` (changing nothing) otherwise.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was undone.
    async fn undo_shared_grant(&self, tenant: Tenant, grant: Lock)
        -> Result<bool, RepositoryError>;

    /// Records in the history, now, the expiry of the shared lease `owner` holds on `resource`
    /// with `fencing_token`, if that lease is still there and has run out (an observer saw it
    /// end): the lease is ended (its row goes, as the lock's next grant or a sweep would end
    /// it), recorded as expired once. Shared leases have no lock-delay, and the lock's other
    /// holders keep theirs. Returns whether it recorded (`false`: no such lease, still live, or
    /// recorded already).
    ///
    /// The default records nothing and returns `false`: for stores that keep no history.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was recorded.
    async fn record_shared_expiry(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        owner: Owner,
        fencing_token: crate::FencingToken,
    ) -> Result<bool, RepositoryError> {
        let _ = (tenant, resource, owner, fencing_token);
        Ok(false)
    }
}
