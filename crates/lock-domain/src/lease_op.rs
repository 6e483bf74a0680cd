//! The one operation on leases that every primitive's use cases send to a store ([`LeaseOp`]),
//! and what it came to ([`LeaseOutcome`]). Every primitive is a use of leases on a [`Place`]: a
//! lock (one exclusive holder, or readers; an election is a lock in its tenant's election
//! namespace) or a semaphore (weighted permits out of a limit). A refusal says why
//! ([`Refusal`]), from the decision that made it, so that no caller reads again to explain it.

use chrono::{DateTime, Utc};

use crate::{
    Capacity, FencingToken, ForceReason, Lease, LeaseKind, LeaseValue, Lock, LockDelay, LockMode,
    LockSet, Owner, Permit, ResourceName, Session, SessionId, Ttl, Weight,
};

/// Where leases are kept. A lock and a semaphore of the same name are unrelated.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Place {
    /// A lock: one exclusive holder, or any number of shared holders (readers).
    Lock(ResourceName),
    /// A semaphore: holders of permits that add up to at most their limit.
    Semaphore(ResourceName),
}

impl Place {
    pub fn name(&self) -> &ResourceName {
        match self {
            Place::Lock(name) | Place::Semaphore(name) => name,
        }
    }

    /// The kind of leases kept here, as the history names them (an election's place is a lock).
    pub fn kind(&self) -> LeaseKind {
        match self {
            Place::Lock(_) => LeaseKind::Lock,
            Place::Semaphore(_) => LeaseKind::Semaphore,
        }
    }
}

/// What a holder asks of a place: its weight out of the place's capacity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Claim {
    /// The whole lock.
    Exclusive,
    /// A reader of the lock: readers coexist, an exclusive holder excludes them all.
    Shared,
    /// `permits` of a semaphore whose holders all acquire against `limit`.
    Permits { permits: Weight, limit: Capacity },
}

impl Claim {
    /// The claim of a lock in `mode`.
    pub fn of_mode(mode: LockMode) -> Self {
        match mode {
            LockMode::Exclusive => Claim::Exclusive,
            LockMode::Shared => Claim::Shared,
        }
    }

    /// How much of the place's capacity the claim takes, and that capacity.
    pub fn weight_of(self) -> (Weight, Capacity) {
        match self {
            Claim::Exclusive => (Weight::EXCLUSIVE, Capacity::LOCK),
            Claim::Shared => (Weight::SHARED, Capacity::LOCK),
            Claim::Permits { permits, limit } => (permits, limit),
        }
    }
}

/// The terms of a lease that every acquire takes, whatever it acquires: who holds it, for how
/// long, the value kept with it, and how long its place stays kept from others after it runs out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseTerms {
    pub owner: Owner,
    pub ttl: Ttl,
    /// Stored with the lease; on a re-grant, `None` keeps the value the lease had.
    pub value: Option<LeaseValue>,
    /// Once the lease ends by expiry (not by a release, an undo or a force), its place stays
    /// taken for other owners until `expires_at + lock_delay`. A reader takes none.
    pub lock_delay: LockDelay,
}

impl LeaseTerms {
    /// The terms of a lease of `owner` for `ttl` with `value` and no lock-delay.
    pub fn new(owner: Owner, ttl: Ttl, value: Option<LeaseValue>) -> Self {
        Self {
            owner,
            ttl,
            value,
            lock_delay: LockDelay::NONE,
        }
    }

    /// These terms with `lock_delay`.
    pub fn with_lock_delay(self, lock_delay: LockDelay) -> Self {
        Self { lock_delay, ..self }
    }
}

/// The lease a release ended, as the store knew it when it ended it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndedLease {
    pub fencing_token: FencingToken,
    /// When it was granted (or last re-granted), by the store's clock: what a hold's time is
    /// measured from. `None` from a store that did not say (a test double's `ReleaseResult`).
    pub acquired_at: Option<DateTime<Utc>>,
    /// Whether it was a reader's lease of a lock.
    pub shared: bool,
}

impl EndedLease {
    /// The ended `lease`, a reader's when `shared`.
    pub fn of(lease: &Lease, shared: bool) -> Self {
        Self {
            fencing_token: lease.fencing_token,
            acquired_at: Some(lease.acquired_at),
            shared,
        }
    }
}

/// A lease held on a place: a lock's exclusive holder or reader, a semaphore's grant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    pub place: Place,
    pub lease: Lease,
}

impl Grant {
    /// The mode of a lock's lease (a semaphore's grant is neither: `None`).
    pub fn mode(&self) -> Option<LockMode> {
        match self.place {
            Place::Lock(_) if self.lease.weight == Weight::SHARED => Some(LockMode::Shared),
            Place::Lock(_) => Some(LockMode::Exclusive),
            Place::Semaphore(_) => None,
        }
    }

    /// A lock's lease as its holder sees it (a semaphore's grant as if it were an exclusive lock
    /// of the same name: callers ask for the view of their own primitive).
    pub fn into_lock(self) -> Lock {
        let mode = self.mode().unwrap_or_default();
        let Grant { place, lease } = self;
        let resource = match place {
            Place::Lock(name) | Place::Semaphore(name) => name,
        };
        Lock {
            resource,
            owner: lease.owner,
            acquired_at: lease.acquired_at,
            expires_at: lease.expires_at,
            fencing_token: lease.fencing_token,
            mode,
            value: lease.value,
        }
    }

    /// A semaphore's grant as its holder sees it.
    pub fn into_permit(self) -> Permit {
        let Grant { place, lease } = self;
        let name = match place {
            Place::Lock(name) | Place::Semaphore(name) => name,
        };
        Permit { name, lease }
    }

    /// The lease of a lock in its mode.
    pub fn of_lock(lock: Lock) -> Self {
        let weight = match lock.mode {
            LockMode::Exclusive => Weight::EXCLUSIVE,
            LockMode::Shared => Weight::SHARED,
        };
        Grant {
            place: Place::Lock(lock.resource),
            lease: Lease {
                owner: lock.owner,
                weight,
                capacity: Capacity::LOCK,
                acquired_at: lock.acquired_at,
                expires_at: lock.expires_at,
                fencing_token: lock.fencing_token,
                value: lock.value,
            },
        }
    }

    /// A semaphore's grant.
    pub fn of_permit(permit: Permit) -> Self {
        Grant {
            place: Place::Semaphore(permit.name),
            lease: permit.lease,
        }
    }
}

/// One operation on the leases of a tenant. Each is linearizable per place (a set: per lock,
/// and all of its locks at one instant) across every process that shares the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOp {
    /// Acquires `claim` of `place` on `terms`: a new grant with a new, larger fencing token, a
    /// re-grant from now of the owner's live lease of the same claim (token kept), or a refusal
    /// that changes nothing.
    Acquire {
        place: Place,
        claim: Claim,
        terms: LeaseTerms,
    },
    /// Every lock of the set, each in its mode, or none: one all-or-nothing step.
    AcquireAll(LockSet),
    /// Ends `owner`'s live lease on `place`.
    Release { place: Place, owner: Owner },
    /// Moves the end of `owner`'s live lease on `place` to now + `ttl` (sooner, too), replacing
    /// its value when `value` is `Some`.
    Renew {
        place: Place,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    },
    /// Replaces the value of `owner`'s live lease on `place`, and nothing else (a proclaim).
    SetValue {
        place: Place,
        owner: Owner,
        value: LeaseValue,
    },
    /// Ends `grant` only if it is still exactly that new grant (its requester will never hear of
    /// it): never a later re-grant, renewal or another lease.
    Undo(Grant),
    /// Records, once, the expiry of `owner`'s run-out lease with `fencing_token` on `place` (an
    /// observer saw it end), changing nothing the decisions see.
    RecordExpiry {
        place: Place,
        owner: Owner,
        fencing_token: FencingToken,
    },
    /// Ends every live lease of `place` and any lock-delay, recorded with `reason` (an admin's).
    ForceRelease { place: Place, reason: ForceReason },
    /// How `place` is held now, in one consistent read.
    Look(Place),
}

impl LeaseOp {
    /// The session a client's operation is made under, if any: a store reads that session in
    /// the operation's transaction before it applies the operation ([`Self::with_session`]). An
    /// undo or an expiry record names a lease the store made, whose holder is whole already:
    /// `None` (an expiry of a session's hold is recorded whether the session lives or not).
    pub fn session(&self) -> Option<SessionId> {
        match self {
            LeaseOp::Acquire { terms, .. } => terms.owner.session(),
            LeaseOp::AcquireAll(set) => set.owner().session(),
            LeaseOp::Release { owner, .. }
            | LeaseOp::Renew { owner, .. }
            | LeaseOp::SetValue { owner, .. } => owner.session(),
            LeaseOp::Undo(_)
            | LeaseOp::RecordExpiry { .. }
            | LeaseOp::ForceRelease { .. }
            | LeaseOp::Look(_) => None,
        }
    }

    /// The operation as the live `session` applies it: its holder is the session's
    /// ([`Session::holder`]), and an acquire's lock-delay is the session's. The end of a grant
    /// under a session is the session's end, whatever the terms' TTL (the store sets it).
    pub fn under_session(self, session: &Session) -> Self {
        let holder = session.holder();
        match self {
            LeaseOp::Acquire {
                place,
                claim,
                terms,
            } => LeaseOp::Acquire {
                place,
                claim,
                terms: LeaseTerms {
                    owner: holder,
                    ttl: session.ttl,
                    value: terms.value,
                    lock_delay: session.lock_delay,
                },
            },
            LeaseOp::AcquireAll(set) => LeaseOp::AcquireAll(set.under_session(session)),
            LeaseOp::Release { place, .. } => LeaseOp::Release {
                place,
                owner: holder,
            },
            LeaseOp::Renew {
                place, ttl, value, ..
            } => LeaseOp::Renew {
                place,
                owner: holder,
                ttl,
                value,
            },
            LeaseOp::SetValue { place, value, .. } => LeaseOp::SetValue {
                place,
                owner: holder,
                value,
            },
            op => op,
        }
    }

    /// How a store applies a client's operation under session [`Self::session`], given that
    /// session as the store read it in the operation's transaction (`None`: no such session of
    /// the tenant): the operation to apply ([`Self::under_session`]), or the answer, changing
    /// nothing. When the session is not live at `now`, an acquire is refused
    /// ([`Refusal::SessionNotFound`]) and a release, renew or value change finds no lease of its
    /// holder (`NotFound`: every hold ended with the session). A renew of a live session's hold
    /// is `Forbidden`: its end is the session's, moved by a keepalive.
    ///
    /// # Errors
    /// The answer, when the operation is not to be applied.
    pub fn with_session(
        self,
        session: Option<&Session>,
        now: DateTime<Utc>,
    ) -> Result<Self, LeaseOutcome> {
        match session {
            Some(session) if session.is_live_at(now) => match self {
                LeaseOp::Renew { .. } => Err(LeaseOutcome::Forbidden),
                op => Ok(op.under_session(session)),
            },
            _ => Err(match self {
                LeaseOp::Acquire { .. } | LeaseOp::AcquireAll(_) => {
                    LeaseOutcome::Refused(Refusal::SessionNotFound)
                }
                _ => LeaseOutcome::NotFound,
            }),
        }
    }

    /// The place the operation is about (a set: its first lock in request order).
    pub fn place(&self) -> Place {
        match self {
            LeaseOp::Acquire { place, .. }
            | LeaseOp::Release { place, .. }
            | LeaseOp::Renew { place, .. }
            | LeaseOp::SetValue { place, .. }
            | LeaseOp::RecordExpiry { place, .. }
            | LeaseOp::ForceRelease { place, .. }
            | LeaseOp::Look(place) => place.clone(),
            LeaseOp::Undo(grant) => grant.place.clone(),
            LeaseOp::AcquireAll(set) => Place::Lock(set.locks()[0].0.clone()),
        }
    }
}

/// Why an acquire changed nothing: what the decision saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Live leases of others keep the caller out: `holders` (a lock's exclusive holder or its
    /// readers, a semaphore's live holders, in token order, each with its end) leave `available`
    /// of the capacity free. A semaphore's permits kept by grants that ran out and are in their
    /// lock-delay count as taken; `delayed_until` is when the first of those are free again.
    /// `holders` may be empty only then (the permits are all kept by lock-delays), or when the
    /// store could not read who holds the place at the instant it decided (it never guesses).
    Held {
        holders: Vec<Grant>,
        available: u64,
        delayed_until: Option<DateTime<Utc>>,
    },
    /// No live lease of another owner holds the lock, but one ran out less than its lock-delay
    /// ago and keeps its place until `until`.
    Delayed { until: DateTime<Utc> },
    /// The caller holds the lock in this other mode (no upgrade or downgrade in place).
    ModeMismatch(LockMode),
    /// The semaphore's holders (live, or kept by a lock-delay) use this other limit.
    LimitMismatch(Capacity),
    /// The caller holds a live grant of these other permits.
    PermitsMismatch(Weight),
    /// These locks of a set (in request order) could not be granted now.
    SetUnavailable(Vec<ResourceName>),
    /// The acquire names a session ([`Owner::of_session`]) that is not live: it never was the
    /// tenant's, or it was closed, forced or ran out.
    SessionNotFound,
}

/// How a place is held at one instant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Holding {
    /// The live leases, in token order: a lock's exclusive holder or its readers, a semaphore's
    /// holders (all with the same limit, their capacity).
    pub holders: Vec<Grant>,
    /// A lock with no live lease: until when a lease that ran out keeps its place (its
    /// lock-delay). A semaphore: when the first permits kept by a lock-delay are free again.
    pub delayed_until: Option<DateTime<Utc>>,
}

impl Holding {
    /// Whether an acquire of `claim` on `place` by `owner` at `now` is sure to be refused while
    /// the place is held so: its live holders leave no room for the claim, or the caller holds
    /// it with another claim ([`crate::decide_claim`] over them). A place that only a lock-delay
    /// keeps is not sure to refuse: the delay may be of the caller's own lease, which keeps no
    /// place from it, and a look does not say whose it is.
    pub fn refuses(&self, place: &Place, owner: &Owner, claim: Claim, now: DateTime<Utc>) -> bool {
        let live: Vec<(Lease, i64)> = self
            .holders
            .iter()
            .map(|grant| (grant.lease.clone(), 0))
            .collect();
        matches!(
            crate::decide_claim(place, &live, owner, claim, now),
            crate::ClaimDecision::Refused(_)
        )
    }

    /// A lock's holders as a [`crate::Hold`]: one exclusive holder, readers (in token order), or
    /// (`None`) nobody.
    pub fn hold(&self) -> Option<crate::Hold> {
        let mut locks: Vec<Lock> = self.holders.iter().cloned().map(Grant::into_lock).collect();
        match locks.first().map(|lock| lock.mode) {
            None => None,
            Some(LockMode::Exclusive) => Some(crate::Hold::Exclusive(locks.remove(0))),
            Some(LockMode::Shared) => Some(crate::Hold::Shared(locks)),
        }
    }

    /// A lock held as one lease: its exclusive holder's, or for readers the one lease that
    /// stands for them all (from the earliest start to the latest end, with the largest token,
    /// owned by [`Owner::shared_holders`]). `None` when nobody holds it.
    pub fn one_lease(&self, resource: &ResourceName) -> Option<Lock> {
        match self.hold()? {
            crate::Hold::Exclusive(lock) => Some(lock),
            crate::Hold::Shared(readers) => {
                let leases: Vec<Lease> = readers
                    .into_iter()
                    .map(|lock| Grant::of_lock(lock).lease)
                    .collect();
                let earliest = leases.iter().map(|lease| lease.acquired_at).min()?;
                crate::shared_row(resource, &leases, earliest)
            }
        }
    }
}

/// What a [`LeaseOp`] came to. Each operation answers with its own variants:
///
/// | operation | outcomes |
/// |---|---|
/// | `Acquire` | `Granted`, `Refused` |
/// | `AcquireAll` | `GrantedAll` (in request order), `Refused(SetUnavailable)` |
/// | `Release` | `Released`, `Forbidden`, `NotFound` |
/// | `Renew`, `SetValue` | `Renewed`, `Forbidden`, `NotFound` |
/// | `Undo` | `Undone` |
/// | `RecordExpiry` | `ExpiryRecorded` |
/// | `ForceRelease` | `ForceReleased` |
/// | `Look` | `Looked` |
///
/// A semaphore's release and renew answer `NotFound` also when others hold permits: other
/// holders are no conflict there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaseOutcome {
    /// The caller holds this lease now (a new grant, or a re-grant of its live one).
    Granted(Grant),
    /// Every lock of a set, in request order.
    GrantedAll(Vec<Grant>),
    /// Nothing changed, and why.
    Refused(Refusal),
    /// The caller's live lease ended: which it was.
    Released(EndedLease),
    /// The caller's live lease as it is now.
    Renewed(Grant),
    /// Others hold the place; the caller holds no live lease there. Nothing changed.
    Forbidden,
    /// No live lease (of the caller's, for a semaphore) is there. Nothing changed.
    NotFound,
    /// Whether the grant was undone.
    Undone(bool),
    /// Whether the expiry was recorded (`false`: another lease is there, it is still live, or its
    /// place is still kept, or it was recorded already).
    ExpiryRecorded(bool),
    /// The leases ended, none when nothing was held.
    ForceReleased(Vec<Grant>),
    /// How the place is held.
    Looked(Holding),
}

impl LeaseOutcome {
    /// The name of the outcome, for an error that says a store answered out of turn.
    pub fn name(&self) -> &'static str {
        match self {
            LeaseOutcome::Granted(_) => "granted",
            LeaseOutcome::GrantedAll(_) => "granted all",
            LeaseOutcome::Refused(_) => "refused",
            LeaseOutcome::Released(_) => "released",
            LeaseOutcome::Renewed(_) => "renewed",
            LeaseOutcome::Forbidden => "forbidden",
            LeaseOutcome::NotFound => "not found",
            LeaseOutcome::Undone(_) => "undone",
            LeaseOutcome::ExpiryRecorded(_) => "expiry recorded",
            LeaseOutcome::ForceReleased(_) => "force-released",
            LeaseOutcome::Looked(_) => "looked",
        }
    }
}

impl From<crate::ReleaseResult> for LeaseOutcome {
    fn from(result: crate::ReleaseResult) -> Self {
        match result {
            crate::ReleaseResult::Released(token) => LeaseOutcome::Released(EndedLease {
                fencing_token: token,
                acquired_at: None,
                shared: false,
            }),
            crate::ReleaseResult::Forbidden => LeaseOutcome::Forbidden,
            crate::ReleaseResult::NotFound => LeaseOutcome::NotFound,
        }
    }
}

impl From<crate::RenewResult> for LeaseOutcome {
    fn from(result: crate::RenewResult) -> Self {
        match result {
            crate::RenewResult::Renewed(lock) => LeaseOutcome::Renewed(Grant::of_lock(lock)),
            crate::RenewResult::Forbidden => LeaseOutcome::Forbidden,
            crate::RenewResult::NotFound => LeaseOutcome::NotFound,
        }
    }
}
