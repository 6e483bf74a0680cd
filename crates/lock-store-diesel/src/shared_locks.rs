//! Shared (read/write) locks in the `shared_holders` table (migration `shared_locks`), on both
//! backends.
//!
//! A lock's `distributed_locks` row stands for its shared holders while any is live (the
//! domain's `shared.rs`): the exclusive statements of v1 are unchanged and see a shared hold as
//! another owner's live lock. Every operation here runs alone against every other write of the
//! lock, exclusive ones included: on SQLite inside the group-commit writer's IMMEDIATE
//! transaction, on PostgreSQL in a transaction that first locks the lock's row (`FOR UPDATE`,
//! which the exclusive statements take too). Under that lock it reads the row and every shared
//! lease, applies the domain's decisions (`decide_claim`, `holder_role`) and rewrites the
//! row from the leases ([`lock_domain::shared_row`]): neither rule has an SQL copy.

mod expiry;
mod force;
pub(crate) mod multi;
mod table;

use chrono::{DateTime, Utc};
use lock_domain::{
    decide_claim, decide_shared_undo, hold_of, holder_role, shared_lease, shared_lock, shared_row,
    Claim, ClaimDecision, EndedLease, FencingToken, Grant, HistoryEvent, Hold, HolderRole, Holding,
    Lease, LeaseOp, LeaseOutcome, LeaseTerms, LeaseValue, Lock, LockMode, LockStep,
    MultiAcquireOutcome, Owner, Place, Refusal, RenewResult, RepositoryError, ResourceName, Tenant,
    Ttl,
};

use crate::semaphores::PermitError;

pub(crate) use table::{
    sweep_postgres, sweep_sqlite, DelayedRow, PostgresShared, SharedRow, SqliteShared,
};

/// The statements a shared-lock operation runs, on one connection inside one transaction.
pub(crate) trait SharedTable {
    /// What the ending of a live lease is until said otherwise, for the history (see
    /// `history::SayEnding`).
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> diesel::QueryResult<()>;

    /// The sessions of the holds this table meets (see `sessions.rs`).
    fn session_rows(&mut self) -> &mut dyn crate::sessions::SessionRows;
    /// Takes the write lock of the lock's row until the transaction ends (on PostgreSQL, when
    /// `create`, first inserting an ended row if there is none, so that there is a row to lock),
    /// then reads the clock, the row and every shared lease of the lock.
    fn lock_and_read(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        create: bool,
    ) -> diesel::QueryResult<(i64, Option<DelayedRow>, Vec<SharedRow>)>;
    /// A fencing token larger than every one issued before, for every primitive.
    fn next_token(&mut self) -> diesel::QueryResult<i64>;
    /// Ends the lock's row as a release does (SQLite deletes it, PostgreSQL marks it ended).
    fn end_row(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        now_ms: i64,
    ) -> diesel::QueryResult<usize>;
    /// Writes the lock's row as `row` says (inserted, or replacing what was there), marked as a
    /// re-grant to the owner that held it when `regranted`, keeping its place for
    /// `lock_delay_ms` once it runs out.
    fn write_row(
        &mut self,
        tenant: &Tenant,
        row: &Lock,
        regranted: bool,
        lock_delay_ms: i64,
    ) -> diesel::QueryResult<usize>;
    /// Ends the exclusive grant `grant` if it is still exactly that new grant (the backend's
    /// undo statement of v1).
    fn undo_exclusive(&mut self, tenant: &Tenant, grant: &Lock) -> diesel::QueryResult<bool>;
    /// The clock the leases are decided with, in Unix milliseconds (on PostgreSQL read now,
    /// after every lock this transaction took).
    fn now_ms(&mut self) -> diesel::QueryResult<i64>;
    /// Moves the end of an exclusive lease, and replaces its value when `value` is `Some`.
    fn renew_row(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        expires_at_ms: i64,
        value: Option<&LeaseValue>,
    ) -> diesel::QueryResult<usize>;
    /// Inserts or replaces `row`, the lease of `row.owner`.
    fn put_lease(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        row: &SharedRow,
    ) -> diesel::QueryResult<usize>;
    /// Deletes the lease of `owner`, or every lease of the lock when `owner` is `None`.
    fn delete_leases(
        &mut self,
        tenant: &Tenant,
        resource: &ResourceName,
        owner: Option<&Owner>,
    ) -> diesel::QueryResult<usize>;
}

/// Runs `op`, an operation on a lock, through its holders: under the row's lock, with the row
/// and every reader read, decided by the domain. (An exclusive acquire has its own statement, the
/// fast path; it comes here when that statement refused without saying why, and is decided
/// again here, with the holders in view.)
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn run(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, PermitError> {
    let place = op.place();
    let resource = place.name().clone();
    Ok(match op {
        LeaseOp::Acquire {
            claim: Claim::Shared,
            terms,
            ..
        } => match acquire(
            table,
            tenant,
            &resource,
            terms.owner,
            terms.ttl,
            terms.value,
        )? {
            Ok(lock) => LeaseOutcome::Granted(Grant::of_lock(lock)),
            Err(refusal) => LeaseOutcome::Refused(refusal),
        },
        LeaseOp::AcquireAll(set) => match multi::acquire_all(table, tenant, &set)? {
            MultiAcquireOutcome::Granted(locks) => {
                LeaseOutcome::GrantedAll(locks.into_iter().map(Grant::of_lock).collect())
            }
            MultiAcquireOutcome::Unavailable(names) => {
                LeaseOutcome::Refused(Refusal::SetUnavailable(names))
            }
        },
        LeaseOp::Look(_) => {
            let read = Read::locked(table, tenant, &resource, false)?;
            LeaseOutcome::Looked(read.holding(&place)?)
        }
        LeaseOp::Release { owner, .. } => release(table, tenant, &resource, &owner)?,
        LeaseOp::Renew {
            owner, ttl, value, ..
        } => renew(table, tenant, &resource, &owner, ttl, value)?.into(),
        LeaseOp::SetValue { owner, value, .. } => {
            set_value(table, tenant, &resource, &owner, value)?.into()
        }
        LeaseOp::ForceRelease { reason, .. } => LeaseOutcome::ForceReleased(
            force::release(table, tenant, &resource, &reason)?
                .into_iter()
                .map(Grant::of_lock)
                .collect(),
        ),
        LeaseOp::Undo(grant) => {
            table.say_ending(Some(HistoryEvent::Undone), None)?;
            let undone = undo(table, tenant, grant.into_lock())?;
            table.say_ending(None, None)?;
            LeaseOutcome::Undone(undone)
        }
        LeaseOp::RecordExpiry {
            owner,
            fencing_token,
            ..
        } => LeaseOutcome::ExpiryRecorded(expiry::record(
            table,
            tenant,
            &resource,
            &owner,
            fencing_token,
        )?),
        LeaseOp::Acquire {
            claim: Claim::Exclusive,
            terms,
            ..
        } => {
            // The way round the lock statement: decided with the readers in view, so a refusal
            // says who holds the lock.
            let read = Read::locked(table, tenant, &resource, true)?;
            let kept = read.kept_leases()?;
            let step = match decide_claim(&place, &kept, &terms.owner, Claim::Exclusive, read.now) {
                ClaimDecision::Refused(refusal) => return Ok(LeaseOutcome::Refused(refusal)),
                ClaimDecision::Extend(token) => LockStep::Extend(token),
                ClaimDecision::GrantNew => LockStep::GrantNew,
            };
            let lock = grant_exclusive(table, tenant, &resource, &read, &terms, step)?;
            LeaseOutcome::Granted(Grant::of_lock(lock))
        }
        LeaseOp::Acquire { claim, .. } => {
            return Err(
                RepositoryError::internal(format!("a lock takes no {claim:?} acquire")).into(),
            )
        }
    })
}

/// What an operation read under the row's lock.
struct Read {
    now_ms: i64,
    now: DateTime<Utc>,
    row: Option<Lock>,
    /// The row's lock-delay, in ms.
    row_delay_ms: i64,
    rows: Vec<SharedRow>,
}

impl Read {
    fn locked(
        table: &mut dyn SharedTable,
        tenant: &Tenant,
        resource: &ResourceName,
        create: bool,
    ) -> Result<Self, PermitError> {
        let (now_ms, mut row, mut rows) = table.lock_and_read(tenant, resource, create)?;
        // Each lease with its real end: a hold under a session ends with its session.
        let mut ends = crate::sessions::SessionEnds::default();
        if let Some(row) = &mut row {
            let lock = &mut row.lock;
            lock.expires_at_ms = ends.end_of(
                table.session_rows(),
                tenant,
                &lock.owner,
                lock.expires_at_ms,
            )?;
        }
        for lease in &mut rows {
            lease.expires_at_ms = ends.end_of(
                table.session_rows(),
                tenant,
                &lease.owner,
                lease.expires_at_ms,
            )?;
        }
        let row_delay_ms = row.as_ref().map_or(0, |row| row.lock_delay_ms);
        Ok(Self {
            now_ms,
            now: at(now_ms)?,
            row: row.map(|row| Lock::try_from(row.lock)).transpose()?,
            row_delay_ms,
            rows,
        })
    }

    fn leases(&self) -> Result<Vec<Lease>, RepositoryError> {
        self.rows.iter().map(SharedRow::lease).collect()
    }

    /// Every lease of the lock with its lock-delay (ms), as the one decision takes them: the
    /// exclusive holder's row (not the row that stands for the readers), then each reader's.
    fn kept_leases(&self) -> Result<Vec<(Lease, i64)>, RepositoryError> {
        let exclusive = self
            .row
            .iter()
            .filter(|row| !row.owner.is_shared_holders())
            .map(|row| (Grant::of_lock(row.clone()).lease, self.row_delay_ms));
        let mut kept: Vec<(Lease, i64)> = exclusive.collect();
        for lease in self.leases()? {
            kept.push((lease, 0));
        }
        Ok(kept)
    }

    /// How the lock is held at the read's instant.
    fn holding(&self, place: &Place) -> Result<Holding, RepositoryError> {
        let holders: Vec<Grant> =
            match hold_of(place.name(), self.row.as_ref(), &self.leases()?, self.now) {
                None => Vec::new(),
                Some(Hold::Exclusive(lock)) => vec![Grant::of_lock(lock)],
                Some(Hold::Shared(readers)) => readers.into_iter().map(Grant::of_lock).collect(),
            };
        let delayed_until = match (&self.row, holders.is_empty()) {
            (Some(row), true) => lock_domain::delayed_until(
                row,
                self.row_delay_ms,
                &Owner::shared_holders(),
                self.now,
            ),
            _ => None,
        };
        Ok(Holding {
            holders,
            delayed_until,
        })
    }

    /// Rewrites the row to stand for `leases`, the lock's leases after the operation.
    fn rewrite(
        &self,
        table: &mut dyn SharedTable,
        tenant: &Tenant,
        resource: &ResourceName,
        leases: &[Lease],
    ) -> Result<(), PermitError> {
        // The leases that ran out end with any change of the lock, as the reference store drops
        // them: their expiry is recorded now, before a later grant of the lock, not at a sweep.
        // (A reader under a session that ran out is said to expire: its row still says "while
        // the session lives", which the history would otherwise take for a live lease ended.
        // Every caller has made its own ending's change before this.)
        for row in &self.rows {
            let ended = row.lease()?;
            let renewed = leases
                .iter()
                .any(|lease| lease.owner == ended.owner && lease.is_live_at(self.now));
            if !ended.is_live_at(self.now) && !renewed {
                let session = ended.owner.session().is_some();
                if session {
                    table.say_ending(Some(HistoryEvent::Expired), None)?;
                }
                table.delete_leases(tenant, resource, Some(&ended.owner))?;
                if session {
                    table.say_ending(None, None)?;
                }
            }
        }
        match shared_row(resource, leases, self.now) {
            Some(mut row) => {
                // The row stands for its readers until the last ends: while a reader's session
                // lives, that is "while the session lives" too.
                let session_reader = leases
                    .iter()
                    .any(|lease| lease.is_live_at(self.now) && lease.owner.session().is_some());
                if session_reader {
                    row.expires_at = at(crate::sessions::HELD)?;
                }
                table.write_row(tenant, &row, false, 0)?
            }
            None => table.end_row(tenant, resource, self.now_ms)?,
        };
        Ok(())
    }
}

fn acquire(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
) -> Result<Result<Lock, Refusal>, PermitError> {
    let read = Read::locked(table, tenant, resource, true)?;
    let place = Place::Lock(resource.clone());
    let step = match decide_claim(
        &place,
        &read.kept_leases()?,
        &owner,
        Claim::Shared,
        read.now,
    ) {
        ClaimDecision::Refused(refusal) => return Ok(Err(refusal)),
        ClaimDecision::Extend(token) => LockStep::Extend(token),
        ClaimDecision::GrantNew => LockStep::GrantNew,
    };
    let lock = grant_shared(table, tenant, resource, &read, &owner, ttl, value, step)?;
    Ok(Ok(lock))
}

/// Makes the shared grant `step` (decided on `read`, under the row's lock) for `owner`, and
/// rewrites the row to stand for the readers.
#[allow(clippy::too_many_arguments)] // one grant: where, what was read, who, how long, decided how
fn grant_shared(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    read: &Read,
    owner: &Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
    step: LockStep,
) -> Result<Lock, PermitError> {
    let rows = read.leases()?;
    let row_live = read
        .row
        .as_ref()
        .is_some_and(|row| row.is_live_at(read.now));
    let (token, regranted, value) = match step {
        LockStep::Extend(token) => {
            let kept = read
                .rows
                .iter()
                .find(|row| row.owner == owner.as_str())
                .and_then(|row| row.value.clone());
            (
                token.value(),
                1,
                value.map(|v| v.as_str().to_owned()).or(kept),
            )
        }
        LockStep::GrantNew => (table.next_token()?, 0, value.map(|v| v.as_str().to_owned())),
        LockStep::Refused => {
            return Err(RepositoryError::internal("a refused shared grant was made").into())
        }
    };
    // Once the row has ended, whatever leases remain ended with it.
    let mut leases: Vec<Lease> = if row_live { rows } else { Vec::new() };
    if !row_live && !read.rows.is_empty() {
        table.delete_leases(tenant, resource, None)?;
    }
    let expires_at_ms = read.now_ms + i64::from(ttl.seconds()) * 1_000;
    let granted = SharedRow {
        owner: owner.as_str().to_owned(),
        acquired_at_ms: read.now_ms,
        expires_at_ms,
        fencing_token: token,
        regranted,
        value,
    };
    table.put_lease(tenant, resource, &granted)?;
    let lease = granted.lease()?;
    leases.retain(|held| &held.owner != owner);
    leases.push(lease.clone());
    read.rewrite(table, tenant, resource, &leases)?;
    Ok(shared_lock(resource, &lease))
}

/// Makes the exclusive grant `step` (decided on `read`, under the row's lock, at its `now`) of
/// `terms`: the lock's row itself. When the row had ended, whatever readers it stood for ended
/// with it.
fn grant_exclusive(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    read: &Read,
    terms: &LeaseTerms,
    step: LockStep,
) -> Result<Lock, PermitError> {
    let (fencing_token, regranted, value) = match step {
        LockStep::Extend(token) => {
            let kept = read.row.as_ref().and_then(|row| row.value.clone());
            (token, true, terms.value.clone().or(kept))
        }
        LockStep::GrantNew => {
            if !read.rows.is_empty() {
                table.delete_leases(tenant, resource, None)?;
            }
            let token = table.next_token()?;
            let token = FencingToken::new(token)
                .map_err(|token| RepositoryError::internal(format!("corrupt token {token}")))?;
            (token, false, terms.value.clone())
        }
        LockStep::Refused => {
            return Err(RepositoryError::internal("a refused exclusive grant was made").into())
        }
    };
    let lock = Lock {
        resource: resource.clone(),
        owner: terms.owner.clone(),
        acquired_at: read.now,
        expires_at: at(read.now_ms + i64::from(terms.ttl.seconds()) * 1_000)?,
        fencing_token,
        mode: LockMode::Exclusive,
        value,
    };
    table.write_row(tenant, &lock, regranted, terms.lock_delay.millis())?;
    Ok(lock)
}

fn release(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<LeaseOutcome, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let mut leases = read.leases()?;
    let role = holder_role(read.row.as_ref(), &leases, owner, read.now);
    let ended = match role {
        HolderRole::Exclusive(fencing_token) => read.row.as_ref().map(|row| EndedLease {
            fencing_token,
            acquired_at: Some(row.acquired_at),
            shared: false,
        }),
        HolderRole::Shared(token) => leases
            .iter()
            .find(|lease| lease.fencing_token == token)
            .map(|lease| EndedLease::of(lease, true)),
        HolderRole::Forbidden | HolderRole::NotFound => None,
    };
    match role {
        HolderRole::Exclusive(_) => {
            table.end_row(tenant, resource, read.now_ms)?;
        }
        HolderRole::Shared(_) => {
            table.delete_leases(tenant, resource, Some(owner))?;
            leases.retain(|lease| &lease.owner != owner);
            read.rewrite(table, tenant, resource, &leases)?;
        }
        HolderRole::Forbidden | HolderRole::NotFound => {}
    }
    Ok(match ended {
        Some(ended) => LeaseOutcome::Released(ended),
        None => role.release_result().into(),
    })
}

fn renew(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
) -> Result<RenewResult, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let mut leases = read.leases()?;
    let expires_at_ms = read.now_ms + i64::from(ttl.seconds()) * 1_000;
    Ok(
        match holder_role(read.row.as_ref(), &leases, owner, read.now) {
            HolderRole::NotFound => RenewResult::NotFound,
            HolderRole::Forbidden => RenewResult::Forbidden,
            HolderRole::Exclusive(_) => {
                let row = read
                    .row
                    .clone()
                    .ok_or_else(|| RepositoryError::internal("the renewed lock is gone"))?;
                table.renew_row(tenant, resource, expires_at_ms, value.as_ref())?;
                RenewResult::Renewed(Lock {
                    expires_at: at(expires_at_ms)?,
                    value: value.or(row.value.clone()),
                    ..row
                })
            }
            HolderRole::Shared(_) => {
                let own = read
                    .rows
                    .iter()
                    .find(|row| row.owner == owner.as_str())
                    .ok_or_else(|| RepositoryError::internal("the renewed lease is gone"))?;
                let renewed = SharedRow {
                    expires_at_ms,
                    value: value.map(|v| v.as_str().to_owned()).or(own.value.clone()),
                    ..own.clone()
                };
                table.put_lease(tenant, resource, &renewed)?;
                let lease = renewed.lease()?;
                leases.retain(|held| &held.owner != owner);
                leases.push(lease.clone());
                read.rewrite(table, tenant, resource, &leases)?;
                RenewResult::Renewed(shared_lock(resource, &lease))
            }
        },
    )
}

/// Replaces the value of `owner`'s live lease: the row's for an exclusive holder (its end
/// rewritten as it was), the owner's shared lease (and the row standing for the readers) for a
/// shared one.
fn set_value(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    value: LeaseValue,
) -> Result<RenewResult, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let mut leases = read.leases()?;
    Ok(
        match holder_role(read.row.as_ref(), &leases, owner, read.now) {
            HolderRole::NotFound => RenewResult::NotFound,
            HolderRole::Forbidden => RenewResult::Forbidden,
            HolderRole::Exclusive(_) => {
                let row = read
                    .row
                    .clone()
                    .ok_or_else(|| RepositoryError::internal("the lock is gone"))?;
                let expires_at_ms = crate::sessions::stored_end(
                    row.owner.as_str(),
                    row.expires_at.timestamp_millis(),
                );
                table.renew_row(tenant, resource, expires_at_ms, Some(&value))?;
                RenewResult::Renewed(Lock {
                    value: Some(value),
                    ..row
                })
            }
            HolderRole::Shared(_) => {
                let own = read
                    .rows
                    .iter()
                    .find(|row| row.owner == owner.as_str())
                    .ok_or_else(|| RepositoryError::internal("the lease is gone"))?;
                let changed = SharedRow {
                    value: Some(value.as_str().to_owned()),
                    ..own.clone()
                };
                table.put_lease(tenant, resource, &changed)?;
                let lease = changed.lease()?;
                leases.retain(|held| &held.owner != owner);
                leases.push(lease.clone());
                read.rewrite(table, tenant, resource, &leases)?;
                RenewResult::Renewed(shared_lock(resource, &lease))
            }
        },
    )
}

/// Ends `grant` only if it is still exactly that new grant, live (a shared one among the readers,
/// an exclusive one by the undo of v1).
fn undo(table: &mut dyn SharedTable, tenant: &Tenant, grant: Lock) -> Result<bool, PermitError> {
    if grant.mode == LockMode::Exclusive {
        return Ok(table.undo_exclusive(tenant, &grant)?);
    }
    let resource = grant.resource.clone();
    let read = Read::locked(table, tenant, &resource, false)?;
    let held_shared = read
        .row
        .as_ref()
        .is_some_and(|row| row.owner.is_shared_holders() && row.is_live_at(read.now));
    let own = read
        .rows
        .iter()
        .find(|row| row.owner == grant.owner.as_str());
    let current = own.map(SharedRow::lease).transpose()?;
    let regranted = own.is_some_and(|row| row.regranted == 1);
    let undone =
        held_shared && decide_shared_undo(&resource, current.as_ref(), regranted, &grant, read.now);
    if undone {
        table.delete_leases(tenant, &resource, Some(&grant.owner))?;
        let mut leases = read.leases()?;
        leases.retain(|lease| lease.owner != grant.owner);
        read.rewrite(table, tenant, &resource, &leases)?;
    }
    Ok(undone)
}

fn at(ms: i64) -> Result<DateTime<Utc>, RepositoryError> {
    DateTime::from_timestamp_millis(ms)
        .ok_or_else(|| RepositoryError::internal(format!("corrupt time {ms}")))
}

impl SharedRow {
    /// The row as the domain's lease.
    fn lease(&self) -> Result<Lease, RepositoryError> {
        let corrupt =
            |what: String| RepositoryError::internal(format!("corrupt shared lease: {what}"));
        Ok(shared_lease(
            Owner::from_stored(&self.owner).map_err(|e| corrupt(format!("owner {e}")))?,
            at(self.acquired_at_ms)?,
            at(self.expires_at_ms)?,
            FencingToken::new(self.fencing_token)
                .map_err(|token| corrupt(format!("token {token}")))?,
            self.value
                .clone()
                .map(LeaseValue::parse)
                .transpose()
                .map_err(|e| corrupt(format!("value {e}")))?,
        ))
    }
}
