//! Semaphore permits in the `semaphore_holders` table (migration `semaphores`), on both backends.
//!
//! Every operation of one semaphore runs alone: on SQLite inside the group-commit writer's
//! IMMEDIATE transaction (which holds the database's write lock), on PostgreSQL in a transaction
//! that first takes an advisory lock on the semaphore's (tenant, name). Under that lock the
//! operation reads every row of the semaphore and applies the domain's decision
//! (`decide_permits`, `decide_release_among`): the rule "the permits of the live holders
//! never add up to more than the limit" has no SQL copy. The statements (`semaphores/table.rs`)
//! are written once for both backends; what differs (the lock, the clock, the token source) is
//! behind [`HolderTable`].

mod rows;
mod table;

use lock_domain::{
    decide_permits, decide_release_among, holding_places, HistoryEvent, LeaseValue, ListQuery,
    Owner, Permit, PermitDecision, PermitReleaseResult, PermitRenewResult, PermitRequest,
    ReleaseResult, RepositoryError, ResourceName, SemaphoreAcquireOutcome, SemaphorePage,
    SemaphoreState, Tenant, Ttl,
};

use crate::error::from_query;

pub(crate) use rows::HolderRow;
use rows::{at, leases, page, permit};
pub(crate) use table::{sweep_postgres, sweep_sqlite, PostgresHolders, SqliteHolders};

/// One semaphore operation, as the repository hands it to its writer.
#[derive(Debug, Clone)]
pub(crate) enum PermitOp {
    Acquire {
        name: ResourceName,
        request: PermitRequest,
    },
    Status {
        name: ResourceName,
    },
    Release {
        name: ResourceName,
        owner: Owner,
    },
    Renew {
        name: ResourceName,
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    },
    /// Ends every grant of the semaphore (an admin's force-release), with `reason`.
    ForceRelease {
        name: ResourceName,
        reason: lock_domain::ForceReason,
    },
    Undo {
        grant: Permit,
    },
    List {
        query: ListQuery,
    },
    /// Ends the owner's run-out grant with that token once its lock-delay is over (an observer
    /// saw it end): its row goes, and the history's triggers record it as expired.
    RecordExpiry {
        name: ResourceName,
        owner: Owner,
        fencing_token: lock_domain::FencingToken,
    },
}

/// What a [`PermitOp`] came to.
#[derive(Debug, Clone)]
pub(crate) enum PermitAnswer {
    Acquired(SemaphoreAcquireOutcome),
    Status(Option<SemaphoreState>),
    Released(PermitReleaseResult),
    Renewed(PermitRenewResult),
    ForceReleased(Vec<Permit>),
    Undone(bool),
    Listed(SemaphorePage),
    ExpiryRecorded(bool),
}

/// The statements a semaphore operation runs, on one connection inside one transaction.
pub(crate) trait HolderTable {
    /// Serialises this transaction with every other writer of `(tenant, name)` until it ends.
    fn lock_semaphore(&mut self, tenant: &Tenant, name: &ResourceName) -> diesel::QueryResult<()>;
    /// The clock the leases are decided with, in Unix milliseconds.
    fn now_ms(&mut self) -> diesel::QueryResult<i64>;
    /// A fencing token larger than every one issued before, for locks and semaphores alike.
    fn next_token(&mut self) -> diesel::QueryResult<i64>;
    /// What the ending of a live lease is until said otherwise, for the history (see
    /// `history::SayEnding`).
    fn say_ending(
        &mut self,
        ending: Option<HistoryEvent>,
        reason: Option<&str>,
    ) -> diesel::QueryResult<()>;
    fn holders(
        &mut self,
        tenant: &Tenant,
        name: &ResourceName,
    ) -> diesel::QueryResult<Vec<HolderRow>>;
    /// Deletes the semaphore's rows that ended at `now_ms` and whose lock-delay is over, and
    /// the ended row of `owner` (whose new grant replaces it).
    fn delete_ended(
        &mut self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &str,
        now_ms: i64,
    ) -> diesel::QueryResult<usize>;
    fn insert(&mut self, tenant: &Tenant, row: &HolderRow) -> diesel::QueryResult<usize>;

    /// Takes the semaphore's lock, then reads the clock and every row of it: what each
    /// operation starts with. A backend may do it in one round trip.
    fn lock_and_read(
        &mut self,
        tenant: &Tenant,
        name: &ResourceName,
    ) -> diesel::QueryResult<(i64, Vec<HolderRow>)> {
        self.lock_semaphore(tenant, name)?;
        let now_ms = self.now_ms()?;
        Ok((now_ms, self.holders(tenant, name)?))
    }

    /// A new grant: deletes the semaphore's rows ended at `now_ms`, draws the next fencing token
    /// and inserts `row` with it; returns the token. A backend may do it in one round trip.
    fn grant(&mut self, tenant: &Tenant, row: &HolderRow, now_ms: i64) -> diesel::QueryResult<i64> {
        let name = ResourceName::parse(row.name.clone())
            .map_err(|e| diesel::result::Error::QueryBuilderError(e.to_string().into()))?;
        self.delete_ended(tenant, &name, &row.owner, now_ms)?;
        let token = self.next_token()?;
        self.insert(
            tenant,
            &HolderRow {
                fencing_token: token,
                ..row.clone()
            },
        )?;
        Ok(token)
    }
    fn regrant(
        &mut self,
        tenant: &Tenant,
        row: &HolderRow,
        value: Option<&str>,
    ) -> diesel::QueryResult<usize>;
    fn renew(
        &mut self,
        tenant: &Tenant,
        row: &HolderRow,
        value: Option<&str>,
    ) -> diesel::QueryResult<usize>;
    /// Deletes every row of the semaphore.
    fn delete_all(&mut self, tenant: &Tenant, name: &ResourceName) -> diesel::QueryResult<usize>;
    fn delete_owner(
        &mut self,
        tenant: &Tenant,
        name: &ResourceName,
        owner: &Owner,
    ) -> diesel::QueryResult<usize>;
    /// The live rows of the semaphores of the page `query` at `now_ms`: at most `limit + 1`
    /// names, every live row of each, in name then token order.
    fn list(
        &mut self,
        tenant: &Tenant,
        query: &ListQuery,
        now_ms: i64,
    ) -> diesel::QueryResult<Vec<HolderRow>>;
}

/// Why an operation failed: a statement, or a row the domain would not accept.
#[derive(Debug)]
pub(crate) enum PermitError {
    Query(diesel::result::Error),
    Repository(RepositoryError),
}

impl From<diesel::result::Error> for PermitError {
    fn from(error: diesel::result::Error) -> Self {
        Self::Query(error)
    }
}

impl From<RepositoryError> for PermitError {
    fn from(error: RepositoryError) -> Self {
        Self::Repository(error)
    }
}

impl From<PermitError> for RepositoryError {
    fn from(error: PermitError) -> Self {
        match error {
            PermitError::Query(error) => from_query(error),
            PermitError::Repository(error) => error,
        }
    }
}

/// Runs `op` for `tenant` on `table`.
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn run(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    op: PermitOp,
) -> Result<PermitAnswer, PermitError> {
    Ok(match op {
        PermitOp::Acquire { name, request } => {
            PermitAnswer::Acquired(acquire(table, tenant, name, request)?)
        }
        PermitOp::Status { name } => {
            let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
            let leases = leases(rows)?;
            PermitAnswer::Status(SemaphoreState::of_leases(name, &leases, at(now_ms)?))
        }
        PermitOp::Release { name, owner } => {
            let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
            let leases = leases(rows)?;
            PermitAnswer::Released(match decide_release_among(&leases, &owner, at(now_ms)?) {
                ReleaseResult::Released(token) => {
                    table.delete_owner(tenant, &name, &owner)?;
                    PermitReleaseResult::Released(token)
                }
                ReleaseResult::NotFound | ReleaseResult::Forbidden => PermitReleaseResult::NotFound,
            })
        }
        PermitOp::Renew {
            name,
            owner,
            ttl,
            value,
        } => PermitAnswer::Renewed(renew(table, tenant, name, owner, ttl, value)?),
        PermitOp::ForceRelease { name, reason } => {
            let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
            let now = at(now_ms)?;
            let mut ended = Vec::with_capacity(rows.len());
            for row in rows {
                let grant = permit(row)?;
                if grant.lease.is_live_at(now) {
                    ended.push(grant);
                }
            }
            table.say_ending(Some(HistoryEvent::ForceReleased), Some(reason.as_str()))?;
            table.delete_all(tenant, &name)?;
            table.say_ending(None, None)?;
            PermitAnswer::ForceReleased(ended)
        }
        PermitOp::Undo { grant } => {
            table.say_ending(Some(HistoryEvent::Undone), None)?;
            let undone = undo(table, tenant, grant)?;
            table.say_ending(None, None)?;
            PermitAnswer::Undone(undone)
        }
        PermitOp::RecordExpiry {
            name,
            owner,
            fencing_token,
        } => {
            let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
            let now = at(now_ms)?;
            let mut over = false;
            for row in rows {
                let delay_ms = row.lock_delay_ms;
                let grant = permit(row)?;
                over |= grant.lease.owner == owner
                    && grant.lease.fencing_token == fencing_token
                    && lock_domain::place_is_free(&grant.lease, delay_ms, now);
            }
            if over {
                table.delete_owner(tenant, &name, &owner)?;
            }
            PermitAnswer::ExpiryRecorded(over)
        }
        PermitOp::List { query } => {
            let now_ms = table.now_ms()?;
            let rows = table.list(tenant, &query, now_ms)?;
            PermitAnswer::Listed(page(rows, &query, at(now_ms)?)?)
        }
    })
}

fn acquire(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    name: ResourceName,
    request: PermitRequest,
) -> Result<SemaphoreAcquireOutcome, PermitError> {
    let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
    let delays: Vec<i64> = rows.iter().map(|row| row.lock_delay_ms).collect();
    let held = leases(rows.clone())?;
    // Grants of others that ran out keep their permits during their lock-delay.
    let places = holding_places(held.into_iter().zip(delays), &request.owner, at(now_ms)?);
    let decision = decide_permits(&places, &request, at(now_ms)?);
    let expires_at_ms = now_ms + i64::from(request.ttl.seconds()) * 1_000;
    let value = request.value.as_ref().map(LeaseValue::as_str);
    let row = match decision {
        PermitDecision::Refused(outcome) => return Ok(outcome),
        PermitDecision::Regrant(token) => {
            let own = rows
                .into_iter()
                .find(|row| row.fencing_token == token.value())
                .ok_or_else(|| RepositoryError::internal("the re-granted lease is gone"))?;
            let row = HolderRow {
                acquired_at_ms: now_ms,
                expires_at_ms,
                regranted: 1,
                value: value.map(str::to_owned).or(own.value.clone()),
                lock_delay_ms: request.lock_delay.millis(),
                ..own
            };
            table.regrant(tenant, &row, value)?;
            row
        }
        PermitDecision::GrantNew => {
            let mut row = HolderRow {
                name: name.as_str().to_owned(),
                owner: request.owner.as_str().to_owned(),
                permits: i64::from(request.permits.get()),
                semaphore_limit: i64::from(request.limit.get()),
                acquired_at_ms: now_ms,
                expires_at_ms,
                fencing_token: 0,
                regranted: 0,
                value: value.map(str::to_owned),
                lock_delay_ms: request.lock_delay.millis(),
            };
            row.fencing_token = table.grant(tenant, &row, now_ms)?;
            row
        }
    };
    Ok(SemaphoreAcquireOutcome::Granted(permit(row)?))
}

fn renew(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    name: ResourceName,
    owner: Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
) -> Result<PermitRenewResult, PermitError> {
    let (now_ms, rows) = table.lock_and_read(tenant, &name)?;
    let live_own = rows
        .into_iter()
        .find(|row| row.owner == owner.as_str() && row.expires_at_ms > now_ms);
    let Some(own) = live_own else {
        return Ok(PermitRenewResult::NotFound);
    };
    let value = value.as_ref().map(LeaseValue::as_str);
    let row = HolderRow {
        expires_at_ms: now_ms + i64::from(ttl.seconds()) * 1_000,
        value: value.map(str::to_owned).or(own.value.clone()),
        ..own
    };
    table.renew(tenant, &row, value)?;
    Ok(PermitRenewResult::Renewed(permit(row)?))
}

/// Ends `grant` only if it is still exactly that new grant, live.
fn undo(table: &mut dyn HolderTable, tenant: &Tenant, grant: Permit) -> Result<bool, PermitError> {
    let (now_ms, rows) = table.lock_and_read(tenant, &grant.name)?;
    let lease = &grant.lease;
    let exact = rows.into_iter().any(|row| {
        row.owner == lease.owner.as_str()
            && row.fencing_token == lease.fencing_token.value()
            && row.acquired_at_ms == lease.acquired_at.timestamp_millis()
            && row.expires_at_ms == lease.expires_at.timestamp_millis()
            && row.expires_at_ms > now_ms
            && row.regranted == 0
    });
    if exact {
        table.delete_owner(tenant, &grant.name, &lease.owner)?;
    }
    Ok(exact)
}
