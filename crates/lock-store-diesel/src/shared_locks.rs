//! Shared (read/write) locks in the `shared_holders` table (migration `shared_locks`), on both
//! backends.
//!
//! A lock's `distributed_locks` row stands for its shared holders while any is live (the
//! domain's `shared.rs`): the exclusive statements of v1 are unchanged and see a shared hold as
//! another owner's live lock. Every operation here runs alone against every other write of the
//! lock, exclusive ones included: on SQLite inside the group-commit writer's IMMEDIATE
//! transaction, on PostgreSQL in a transaction that first locks the lock's row (`FOR UPDATE`,
//! which the exclusive statements take too). Under that lock it reads the row and every shared
//! lease, applies the domain's decision (`decide_shared_acquire`, `holder_role`) and rewrites the
//! row from the leases ([`lock_domain::shared_row`]): neither rule has an SQL copy.

mod expiry;
mod force;
mod multi;
mod table;

use chrono::{DateTime, Utc};
use lock_domain::{
    decide_shared_acquire, decide_shared_undo, hold_of, holder_role, shared_lease, shared_lock,
    shared_row, FencingToken, HistoryEvent, Hold, HolderRole, Lease, LeaseValue, Lock, LockMode,
    LockStep, Owner, ReleaseResult, RenewResult, RepositoryError, ResourceName,
    SharedAcquireDecision, SharedAcquireOutcome, Tenant, Ttl,
};

use crate::semaphores::PermitError;

pub(crate) use multi::acquire_all;
pub(crate) use table::{
    sweep_postgres, sweep_sqlite, DelayedRow, PostgresShared, SharedRow, SqliteShared,
};

/// One shared-lock operation, as the repository hands it to its writer.
#[derive(Debug, Clone)]
pub(crate) enum SharedOp {
    Acquire {
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    },
    Hold {
        resource: ResourceName,
    },
    Release {
        resource: ResourceName,
        owner: Owner,
    },
    Renew {
        resource: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    },
    /// Replaces the value of the owner's live lease, and nothing else.
    SetValue {
        resource: ResourceName,
        owner: Owner,
        value: LeaseValue,
    },
    /// Ends every live lease of the lock (an admin's force-release), with `reason`.
    ForceRelease {
        resource: ResourceName,
        reason: lock_domain::ForceReason,
    },
    Undo {
        grant: Lock,
    },
    /// Ends the owner's run-out lease with that token (an observer saw it end).
    RecordExpiry {
        resource: ResourceName,
        owner: Owner,
        fencing_token: lock_domain::FencingToken,
    },
}

/// What a [`SharedOp`] came to.
#[derive(Debug, Clone)]
pub(crate) enum SharedAnswer {
    Acquired(SharedAcquireOutcome),
    Hold(Option<Hold>),
    Released(ReleaseResult),
    Renewed(RenewResult),
    ForceReleased(Vec<Lock>),
    Undone(bool),
    ExpiryRecorded(bool),
}

/// The statements a shared-lock operation runs, on one connection inside one transaction.
pub(crate) trait SharedTable {
    /// What the ending of a live lease is until said otherwise, for the history (see
    /// `history::SayEnding`).
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> diesel::QueryResult<()>;

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
    /// re-grant to the owner that held it when `regranted`.
    fn write_row(
        &mut self,
        tenant: &Tenant,
        row: &Lock,
        regranted: bool,
    ) -> diesel::QueryResult<usize>;
    /// Ends the exclusive grant `grant` if it is still exactly that new grant (the backend's
    /// undo statement of v1, `LockRepository::undo_grant`).
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

/// Runs `op` for `tenant` on `table`.
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn run(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    op: SharedOp,
) -> Result<SharedAnswer, PermitError> {
    Ok(match op {
        SharedOp::Acquire {
            resource,
            owner,
            ttl,
            value,
        } => SharedAnswer::Acquired(acquire(table, tenant, &resource, owner, ttl, value)?),
        SharedOp::Hold { resource } => {
            let read = Read::locked(table, tenant, &resource, false)?;
            SharedAnswer::Hold(hold_of(
                &resource,
                read.row.as_ref(),
                &read.leases()?,
                read.now,
            ))
        }
        SharedOp::Release { resource, owner } => {
            SharedAnswer::Released(release(table, tenant, &resource, &owner)?)
        }
        SharedOp::Renew {
            resource,
            owner,
            ttl,
            value,
        } => SharedAnswer::Renewed(renew(table, tenant, &resource, &owner, ttl, value)?),
        SharedOp::SetValue {
            resource,
            owner,
            value,
        } => SharedAnswer::Renewed(set_value(table, tenant, &resource, &owner, value)?),
        SharedOp::ForceRelease { resource, reason } => {
            SharedAnswer::ForceReleased(force::release(table, tenant, &resource, &reason)?)
        }
        SharedOp::Undo { grant } => {
            table.say_ending(Some(HistoryEvent::Undone), None)?;
            let undone = undo(table, tenant, grant)?;
            table.say_ending(None, None)?;
            SharedAnswer::Undone(undone)
        }
        SharedOp::RecordExpiry {
            resource,
            owner,
            fencing_token,
        } => SharedAnswer::ExpiryRecorded(expiry::record(
            table,
            tenant,
            &resource,
            &owner,
            fencing_token,
        )?),
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
        let (now_ms, row, rows) = table.lock_and_read(tenant, resource, create)?;
        let row_delay_ms = row.as_ref().map_or(0, |row| row.lock_delay_ms);
        Ok(Self {
            now_ms,
            now: at(now_ms)?,
            row: row.map(|row| Lock::try_from(row.lock)).transpose()?,
            row_delay_ms,
            rows,
        })
    }

    /// Whether the row's lease, ended by expiry, still keeps its place from `owner` (its
    /// lock-delay, the domain's `delayed_until`).
    fn delayed_for(&self, owner: &Owner) -> bool {
        self.row.as_ref().is_some_and(|row| {
            lock_domain::delayed_until(row, self.row_delay_ms, owner, self.now).is_some()
        })
    }

    fn leases(&self) -> Result<Vec<Lease>, RepositoryError> {
        self.rows.iter().map(SharedRow::lease).collect()
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
        for row in &self.rows {
            let ended = row.lease()?;
            let renewed = leases
                .iter()
                .any(|lease| lease.owner == ended.owner && lease.is_live_at(self.now));
            if !ended.is_live_at(self.now) && !renewed {
                table.delete_leases(tenant, resource, Some(&ended.owner))?;
            }
        }
        match shared_row(resource, leases, self.now) {
            Some(row) => table.write_row(tenant, &row, false)?,
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
) -> Result<SharedAcquireOutcome, PermitError> {
    let read = Read::locked(table, tenant, resource, true)?;
    if read.delayed_for(&owner) {
        return Ok(SharedAcquireOutcome::Held);
    }
    let decision = decide_shared_acquire(read.row.as_ref(), &read.leases()?, &owner, read.now);
    let step = match decision {
        SharedAcquireDecision::Held => return Ok(SharedAcquireOutcome::Held),
        SharedAcquireDecision::ModeMismatch => return Ok(SharedAcquireOutcome::ModeMismatch),
        SharedAcquireDecision::Extend(token) => LockStep::Extend(token),
        SharedAcquireDecision::GrantNew => LockStep::GrantNew,
    };
    let lock = grant_shared(table, tenant, resource, &read, &owner, ttl, value, step)?;
    Ok(SharedAcquireOutcome::Granted(lock))
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

fn release(
    table: &mut dyn SharedTable,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<ReleaseResult, PermitError> {
    let read = Read::locked(table, tenant, resource, false)?;
    let mut leases = read.leases()?;
    let role = holder_role(read.row.as_ref(), &leases, owner, read.now);
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
    Ok(role.release_result())
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
                let expires_at_ms = row.expires_at.timestamp_millis();
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
            Owner::parse(&self.owner).map_err(|e| corrupt(format!("owner {e}")))?,
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
