//! The semaphore port: how the service stores semaphore permits, whatever the database. A port of
//! its own, beside [`crate::LockRepository`], so a store or a test double implements what it has,
//! and so the locks' table and statements pay nothing for semaphores.

use async_trait::async_trait;

use crate::{
    FencingToken, LeaseValue, ListQuery, Owner, Permit, PermitReleaseResult, PermitRenewResult,
    PermitRequest, RepositoryError, ResourceName, SemaphoreAcquireOutcome, SemaphorePage,
    SemaphoreState, Tenant, Ttl,
};

/// The permit operations of a store. A semaphore is identified by its tenant and its name, in a
/// namespace of its own (lock `x` and semaphore `x` are unrelated). Every implementation MUST be
/// linearizable per semaphore across every process that shares the storage: at every instant the
/// permits of the live holders add up to at most the limit they acquired against.
///
/// "Live" means `now < expires_at`, with `now` taken from the implementation's clock. The
/// decisions are the domain's (`decide_acquire_among` and its siblings); an implementation
/// applies them to every lease it has for the semaphore, under a lock that serialises the
/// semaphore's writers.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SemaphoreRepository: Send + Sync {
    /// Acquires `request.permits` of `name` for `request.owner`.
    ///
    /// MUST return, changing nothing: `LimitMismatch` when a live holder acquired against another
    /// limit; `PermitsMismatch` when the owner holds a live grant of other permits;
    /// `Unavailable` when fewer than `request.permits` are free, where the permits of another
    /// owner's grant that ran out less than its lock-delay ago count as taken
    /// ([`crate::holding_places`]). Otherwise MUST return `Granted`:
    /// a re-grant from `now` of the owner's live grant (same token, value replaced only when
    /// `request.value` is `Some`), or a new grant with `acquired_at = now`,
    /// `expires_at = now + ttl` and a fencing token larger than every token issued before by
    /// the store.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then no grant was made.
    async fn acquire_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        request: PermitRequest,
    ) -> Result<SemaphoreAcquireOutcome, RepositoryError>;

    /// When the first permits of `name` kept by grants that ran out (in their lock-delay) are
    /// available again: the earliest end of such a delay, or `None` when no grant is in one.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn permits_available_at(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, RepositoryError>;

    /// The live holders of `name`, or `None` when no grant is live.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn semaphore(
        &self,
        tenant: Tenant,
        name: ResourceName,
    ) -> Result<Option<SemaphoreState>, RepositoryError>;

    /// Ends `owner`'s live grant on `name`: `Released` with its token, or `NotFound` (changing
    /// nothing) when the owner holds no live grant there.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was released.
    async fn release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
    ) -> Result<PermitReleaseResult, RepositoryError>;

    /// Sets the end of `owner`'s live grant on `name` to `now + ttl` (which may be sooner than
    /// before) and, when `value` is `Some`, replaces its value: `Renewed`, or `NotFound`
    /// (changing nothing) when the owner holds no live grant there.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was renewed.
    async fn renew_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    ) -> Result<PermitRenewResult, RepositoryError>;

    /// Undoes a grant nobody will use (its requester hung up): ends the live grant of
    /// `grant.lease.owner` on `grant.name` only if it is still exactly that new grant (same
    /// token, `acquired_at` and `expires_at`, and not a re-grant of a lease the owner already
    /// held). MUST return `true` when it ended it, `false` (changing nothing) otherwise.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was undone.
    async fn undo_permit_grant(
        &self,
        tenant: Tenant,
        grant: Permit,
    ) -> Result<bool, RepositoryError>;

    /// Lists `tenant`'s semaphores that have a live holder, whose names start with
    /// `query.prefix` and are bytewise greater than `query.after`, in bytewise name order, at
    /// most `query.limit` of them, each with its live holders.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError>;

    /// Records in the history, now, the expiry of the grant `owner` holds on `name` with
    /// `fencing_token`, if that grant is still there, has run out and its lock-delay is over (an
    /// observer saw it end): the grant is ended (its row goes, as the next grant or a sweep would
    /// end it), recorded as expired once. A grant still in its lock-delay keeps its permits taken
    /// and is left as it is: its expiry is recorded when the delay is over, by the next grant or
    /// a sweep. Changes nothing the decisions count: the grant had run out and held nothing
    /// (its delay over). Returns whether it recorded (`false`: no such grant, still live, in its
    /// lock-delay, or recorded already).
    ///
    /// The default records nothing and returns `false`: for stores that keep no history.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was recorded.
    async fn record_permit_expiry(
        &self,
        tenant: Tenant,
        name: ResourceName,
        owner: Owner,
        fencing_token: FencingToken,
    ) -> Result<bool, RepositoryError> {
        let _ = (tenant, name, owner, fencing_token);
        Ok(false)
    }
}
