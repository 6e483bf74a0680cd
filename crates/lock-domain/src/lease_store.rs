//! The lease port ([`LeaseStore`]): the one seam through which the use cases of every primitive
//! change and read leases, whatever the database.

use async_trait::async_trait;

use crate::{
    Grant, Holding, LeaseOp, LeaseOutcome, ListPage, ListQuery, Place, Refusal, ReleaseResult,
    RepositoryError, SemaphorePage, Tenant,
};

/// What [`LeaseStore::apply`] answers for one operation: its outcome, or why storage failed.
pub type Applied = Result<LeaseOutcome, RepositoryError>;

/// Where leases live. Every implementation MUST be linearizable per place across every process
/// that shares the storage: each operation takes effect atomically at one instant between its
/// call and its return, and at every instant
/// - a lock has no live holder, one exclusive holder, or any number of readers, never an
///   exclusive holder beside another holder;
/// - the permits of a semaphore's live holders add up to at most the limit they all acquired
///   against.
///
/// "Live" means `now < expires_at`, with `now` taken from the implementation's clock. The same
/// name in two tenants is two independent places; a lock and a semaphore of one name are
/// unrelated. Fencing tokens come from one counter for every place: each new grant's token is
/// larger than every token the store issued before.
///
/// The decisions are the domain's (`decide_claim`, `decide_release_among`, ... in
/// `decisions.rs`); an implementation applies them to every lease of the place under a lock that
/// serialises the place's writers, or compiles them into SQL that decides the same way (the
/// contract suite, `testing::contract`, checks every store against the same cases).
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait LeaseStore: Send + Sync {
    /// Applies `op` to `tenant`'s leases. The outcome of each operation, and what it changed:
    ///
    /// - `Acquire`: MUST return `Granted` with `acquired_at = now`, `expires_at = now + ttl`, the
    ///   value given and a new token when the claim fits among the live holders and no place is
    ///   kept by another owner's lock-delay; `Granted` with the token kept (re-granted from now,
    ///   the value replaced only when given, the lock-delay replaced) when the owner holds a live
    ///   lease of the same claim; else `Refused` with the reason the decision saw (`Held` with
    ///   the holders that kept the caller out, `Delayed`, `ModeMismatch`, `LimitMismatch`,
    ///   `PermitsMismatch`), changing nothing.
    /// - `AcquireAll`: `GrantedAll` (each lock decided as its own acquire, all at one `now`,
    ///   taken in [`crate::LockSet::in_key_order`]) or `Refused(SetUnavailable)` naming every
    ///   lock that could not be granted, changing nothing.
    /// - `Release`: `Released` with the token of the owner's ended lease; `Forbidden` when others
    ///   hold the lock and the owner does not; `NotFound` when no live lease is there (for a
    ///   semaphore, also when only others hold permits). A release frees the place at once (no
    ///   lock-delay).
    /// - `Renew`, `SetValue`: `Renewed` with the lease as it is now (start and token kept),
    ///   `Forbidden` / `NotFound` as a release.
    /// - `Undo`: `Undone(true)` only after ending the grant, when it is live and still exactly
    ///   that new grant (same owner, token, start and end, and not a re-grant).
    /// - `RecordExpiry`: `ExpiryRecorded(true)` when it recorded the run-out lease's expiry in
    ///   the history, once; the default stores no history and answer `false`.
    /// - `ForceRelease`: `ForceReleased` with every lease it ended (none: nothing was held), each
    ///   recorded `force-released` with the reason; any lock-delay ends with them.
    /// - `Look`: `Looked`, one consistent read.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was changed (or, for a write whose
    /// commit was under way, it may have been: see `RepositoryError::Unavailable`).
    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError>;

    /// Applies `first`, then `then`, to `tenant`'s leases: each with exactly the meaning of
    /// [`Self::apply`] and an outcome of its own (one may fail while the other succeeds), `then`
    /// taking effect after `first`. An implementation MAY make both take effect at one instant,
    /// in one transaction with one durable commit: a lock released and granted to the next in
    /// line then changes hands in one commit's time, and nobody sees it free between. The
    /// default applies them one after the other.
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        let first = self.apply(tenant.clone(), first).await;
        (first, self.apply(tenant, then).await)
    }

    /// Whether [`Self::apply_then`] makes both operations take effect at one instant (one
    /// transaction, one commit). Only then does a caller that needs the first outcome alone
    /// (a release, to answer its request) gain by waiting for the second with it; else the
    /// second only delays the first's answer. `false` by default.
    fn applies_together(&self) -> bool {
        false
    }

    /// How each of `places` is held, in order: one answer per entry, with exactly the meaning of
    /// `apply(tenant, Look(place))` for it, each read at some instant during the call (not one
    /// snapshot of all). For pollers that look at many places at once; an implementation SHOULD
    /// read them in one round trip.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn look_many(
        &self,
        places: Vec<(Tenant, Place)>,
    ) -> Result<Vec<Holding>, RepositoryError> {
        let mut found = Vec::with_capacity(places.len());
        for (tenant, place) in places {
            found.push(self.apply(tenant, LeaseOp::Look(place)).await?.looked()?);
        }
        Ok(found)
    }

    /// Lists `tenant`'s live locks whose names start with `query.prefix` (literally, bytewise)
    /// and are bytewise greater than `query.after`, in bytewise name order, at most
    /// `query.limit` locks; a lock held by readers shows each reader (in token order), counted
    /// once. `has_more` tells whether more matched. Each lease comes with what remains of it on
    /// the implementation's clock.
    ///
    /// Implementations MUST answer from an ordered index over `(tenant, name)`, reading no more
    /// than the page (plus one row, plus ended rows not yet swept in the range), so that a page
    /// costs the same with a million locks as with ten. Pages are not a snapshot.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn list_locks(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<ListPage, RepositoryError>;

    /// Lists `tenant`'s semaphores that have a live holder, as [`Self::list_locks`] lists
    /// locks, each with its live holders.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError>;
}

/// A renew or value change the store did not make: nobody holds the place, or others do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotHeld {
    /// Others hold the place; the caller holds no live lease there.
    Forbidden,
    /// No live lease of the caller's is there.
    NotFound,
}

/// The outcome of each operation in its own type. A store that answers an operation with an
/// outcome it cannot have is broken: that is an internal error, never a guess.
impl LeaseOutcome {
    fn out_of_turn(self, operation: &str) -> RepositoryError {
        RepositoryError::internal(format!("the store answered {} to {operation}", self.name()))
    }

    /// An `Acquire`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome an acquire cannot have.
    pub fn acquired(self) -> Result<Result<Grant, Refusal>, RepositoryError> {
        match self {
            LeaseOutcome::Granted(grant) => Ok(Ok(grant)),
            LeaseOutcome::Refused(refusal) => Ok(Err(refusal)),
            other => Err(other.out_of_turn("an acquire")),
        }
    }

    /// An `AcquireAll`'s outcome: the grants in request order, or the locks not granted.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a set's acquire cannot have.
    pub fn acquired_all(self) -> Result<Result<Vec<Grant>, Refusal>, RepositoryError> {
        match self {
            LeaseOutcome::GrantedAll(grants) => Ok(Ok(grants)),
            LeaseOutcome::Refused(refusal) => Ok(Err(refusal)),
            other => Err(other.out_of_turn("a set's acquire")),
        }
    }

    /// A `Release`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a release cannot have.
    pub fn released(self) -> Result<ReleaseResult, RepositoryError> {
        Ok(self.released_lease()?.0)
    }

    /// A `Release`'s outcome, and the lease it ended (when it ended one).
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a release cannot have.
    pub fn released_lease(
        self,
    ) -> Result<(ReleaseResult, Option<crate::EndedLease>), RepositoryError> {
        match self {
            LeaseOutcome::Released(ended) => {
                Ok((ReleaseResult::Released(ended.fencing_token), Some(ended)))
            }
            LeaseOutcome::Forbidden => Ok((ReleaseResult::Forbidden, None)),
            LeaseOutcome::NotFound => Ok((ReleaseResult::NotFound, None)),
            other => Err(other.out_of_turn("a release")),
        }
    }

    /// A `Renew`'s or a `SetValue`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a renew cannot have.
    pub fn renewed(self) -> Result<Result<Grant, NotHeld>, RepositoryError> {
        match self {
            LeaseOutcome::Renewed(grant) => Ok(Ok(grant)),
            LeaseOutcome::Forbidden => Ok(Err(NotHeld::Forbidden)),
            LeaseOutcome::NotFound => Ok(Err(NotHeld::NotFound)),
            other => Err(other.out_of_turn("a renew")),
        }
    }

    /// A lock's `Renew` or `SetValue` outcome, as its holder hears it.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a renew cannot have.
    pub fn renewed_lock(self) -> Result<crate::RenewResult, RepositoryError> {
        Ok(match self.renewed()? {
            Ok(grant) => crate::RenewResult::Renewed(grant.into_lock()),
            Err(NotHeld::Forbidden) => crate::RenewResult::Forbidden,
            Err(NotHeld::NotFound) => crate::RenewResult::NotFound,
        })
    }

    /// A semaphore's `Renew` outcome, as its holder hears it (others' grants are no conflict).
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a renew cannot have.
    pub fn renewed_permit(self) -> Result<crate::PermitRenewResult, RepositoryError> {
        Ok(match self.renewed()? {
            Ok(grant) => crate::PermitRenewResult::Renewed(grant.into_permit()),
            Err(_) => crate::PermitRenewResult::NotFound,
        })
    }

    /// A semaphore's `Release` outcome, as its holder hears it.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a release cannot have.
    pub fn released_permit(self) -> Result<crate::PermitReleaseResult, RepositoryError> {
        Ok(match self.released()? {
            ReleaseResult::Released(token) => crate::PermitReleaseResult::Released(token),
            ReleaseResult::NotFound | ReleaseResult::Forbidden => {
                crate::PermitReleaseResult::NotFound
            }
        })
    }

    /// An `Undo`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome an undo cannot have.
    pub fn undone(self) -> Result<bool, RepositoryError> {
        match self {
            LeaseOutcome::Undone(undone) => Ok(undone),
            other => Err(other.out_of_turn("an undo")),
        }
    }

    /// A `RecordExpiry`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a recorded expiry cannot have.
    pub fn expiry_recorded(self) -> Result<bool, RepositoryError> {
        match self {
            LeaseOutcome::ExpiryRecorded(recorded) => Ok(recorded),
            other => Err(other.out_of_turn("a recorded expiry")),
        }
    }

    /// A `ForceRelease`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a force-release cannot have.
    pub fn force_released(self) -> Result<Vec<Grant>, RepositoryError> {
        match self {
            LeaseOutcome::ForceReleased(ended) => Ok(ended),
            other => Err(other.out_of_turn("a force-release")),
        }
    }

    /// A `Look`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a look cannot have.
    pub fn looked(self) -> Result<Holding, RepositoryError> {
        match self {
            LeaseOutcome::Looked(holding) => Ok(holding),
            other => Err(other.out_of_turn("a look")),
        }
    }
}
