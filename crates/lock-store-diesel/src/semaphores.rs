//! Semaphore permits in the `semaphore_holders` table (migration `semaphores`), on both backends.
//!
//! Every operation of one semaphore runs alone: on SQLite inside the group-commit writer's
//! IMMEDIATE transaction (which holds the database's write lock), on PostgreSQL in a transaction
//! that first takes an advisory lock on the semaphore's (tenant, name). Under that lock the
//! operation reads every row of the semaphore and applies the domain's decision
//! (`decide_claim`, `decide_release_among`): the rule "the permits of the live holders
//! never add up to more than the limit" has no SQL copy. The statements (`semaphores/table.rs`)
//! are written once for both backends; what differs (the lock, the clock, the token source) is
//! behind [`HolderTable`].

mod rows;
mod table;

use chrono::TimeDelta;
use lock_domain::{
    decide_claim, decide_release_among, live_grants, Claim, ClaimDecision, EndedLease, Grant,
    HistoryEvent, Holding, Lease, LeaseOp, LeaseOutcome, LeaseTerms, LeaseValue, ListQuery, Owner,
    Permit, Place, Refusal, ReleaseResult, RepositoryError, ResourceName, SemaphorePage, Tenant,
    Ttl,
};

use crate::error::from_query;

pub(crate) use rows::HolderRow;
use rows::{at, leases, page, permit};
pub(crate) use table::{sweep_postgres, sweep_sqlite, PostgresHolders, SqliteHolders};

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
    /// The sessions of the holds this table meets (see `sessions.rs`).
    fn session_rows(&mut self) -> &mut dyn crate::sessions::SessionRows;

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

/// Takes the semaphore's lock and reads the clock and every row, each row with its real end (a
/// hold under a session ends with its session: see `sessions.rs`).
fn read(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    name: &ResourceName,
) -> diesel::QueryResult<(i64, Vec<HolderRow>)> {
    let (now_ms, mut rows) = table.lock_and_read(tenant, name)?;
    resolve(table, tenant, &mut rows)?;
    Ok((now_ms, rows))
}

/// Gives each of `rows` its real end.
fn resolve(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    rows: &mut [HolderRow],
) -> diesel::QueryResult<()> {
    let mut ends = crate::sessions::SessionEnds::default();
    for row in rows {
        row.expires_at_ms =
            ends.end_of(table.session_rows(), tenant, &row.owner, row.expires_at_ms)?;
    }
    Ok(())
}

/// Runs `op`, an operation on a semaphore, for `tenant` on `table`.
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn run(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, PermitError> {
    let place = op.place();
    let name = place.name().clone();
    Ok(match op {
        LeaseOp::Acquire {
            claim: claim @ Claim::Permits { .. },
            terms,
            ..
        } => match acquire(table, tenant, &place, claim, terms)? {
            Ok(permit) => LeaseOutcome::Granted(Grant::of_permit(permit)),
            Err(refusal) => LeaseOutcome::Refused(refusal),
        },
        LeaseOp::Look(_) => {
            let (now_ms, rows) = read(table, tenant, &name)?;
            let now = at(now_ms)?;
            let kept = kept_leases(rows)?;
            let delayed_until = kept
                .iter()
                .filter(|(lease, _)| !lease.is_live_at(now))
                .map(|(lease, delay_ms)| lease.expires_at + TimeDelta::milliseconds(*delay_ms))
                .filter(|until| now < *until)
                .min();
            LeaseOutcome::Looked(Holding {
                holders: live_grants(&place, &kept, now),
                delayed_until,
            })
        }
        LeaseOp::Release { owner, .. } => {
            let (now_ms, rows) = read(table, tenant, &name)?;
            let leases = leases(rows)?;
            match decide_release_among(&leases, &owner, at(now_ms)?) {
                ReleaseResult::Released(token) => {
                    table.delete_owner(tenant, &name, &owner)?;
                    match leases.iter().find(|lease| lease.fencing_token == token) {
                        Some(lease) => LeaseOutcome::Released(EndedLease::of(lease, false)),
                        None => ReleaseResult::Released(token).into(),
                    }
                }
                ReleaseResult::NotFound | ReleaseResult::Forbidden => LeaseOutcome::NotFound,
            }
        }
        LeaseOp::Renew {
            owner, ttl, value, ..
        } => renew(table, tenant, &name, &owner, Some(ttl), value)?,
        LeaseOp::SetValue { owner, value, .. } => {
            renew(table, tenant, &name, &owner, None, Some(value))?
        }
        LeaseOp::ForceRelease { reason, .. } => {
            let (now_ms, rows) = read(table, tenant, &name)?;
            let now = at(now_ms)?;
            let mut ended = Vec::with_capacity(rows.len());
            let mut run_out = Vec::new();
            for row in rows {
                let grant = permit(row)?;
                if grant.lease.is_live_at(now) {
                    ended.push(Grant::of_permit(grant));
                } else if grant.lease.owner.session().is_some() {
                    run_out.push(grant.lease.owner);
                }
            }
            // A grant of a session that ran out is over, though its row still says "while the
            // session lives": it ends as expired, not force-released.
            if !run_out.is_empty() {
                table.say_ending(Some(HistoryEvent::Expired), None)?;
                let holders: Vec<&str> = run_out.iter().map(|owner| owner.as_str()).collect();
                crate::sessions::end_run_out_holds(
                    table.session_rows(),
                    tenant,
                    "semaphore",
                    name.as_str(),
                    &holders,
                )?;
            }
            table.say_ending(Some(HistoryEvent::ForceReleased), Some(reason.as_str()))?;
            table.delete_all(tenant, &name)?;
            table.say_ending(None, None)?;
            LeaseOutcome::ForceReleased(ended)
        }
        LeaseOp::Undo(grant) => {
            table.say_ending(Some(HistoryEvent::Undone), None)?;
            let undone = undo(table, tenant, grant.into_permit())?;
            table.say_ending(None, None)?;
            LeaseOutcome::Undone(undone)
        }
        LeaseOp::RecordExpiry {
            owner,
            fencing_token,
            ..
        } => {
            let (now_ms, rows) = read(table, tenant, &name)?;
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
            LeaseOutcome::ExpiryRecorded(over)
        }
        LeaseOp::Acquire { claim, .. } => {
            return Err(RepositoryError::internal(format!(
                "a semaphore takes permits, not a {claim:?} acquire"
            ))
            .into())
        }
        LeaseOp::AcquireAll(_) => {
            return Err(RepositoryError::internal("a set is of locks, not semaphores").into())
        }
    })
}

/// A page of `tenant`'s semaphores with live holders.
///
/// # Errors
/// [`PermitError`] when a statement fails or a row is corrupt.
pub(crate) fn list(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    query: &ListQuery,
) -> Result<SemaphorePage, PermitError> {
    let now_ms = table.now_ms()?;
    let mut rows = table.list(tenant, query, now_ms)?;
    // A hold of a session that ran out is listed by its row, not by its session: drop it.
    resolve(table, tenant, &mut rows)?;
    rows.retain(|row| row.expires_at_ms > now_ms);
    page(rows, query, at(now_ms)?)
}

/// Every grant of the semaphore with its lock-delay (ms), as the one decision takes them.
fn kept_leases(rows: Vec<HolderRow>) -> Result<Vec<(Lease, i64)>, RepositoryError> {
    rows.into_iter()
        .map(|row| {
            let delay_ms = row.lock_delay_ms;
            Ok((rows::lease(row)?, delay_ms))
        })
        .collect()
}

fn acquire(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    place: &Place,
    claim: Claim,
    terms: LeaseTerms,
) -> Result<Result<Permit, Refusal>, PermitError> {
    let name = place.name();
    let (now_ms, rows) = read(table, tenant, name)?;
    let kept = kept_leases(rows.clone())?;
    let (permits, limit) = claim.weight_of();
    let expires_at_ms = now_ms + i64::from(terms.ttl.seconds()) * 1_000;
    let value = terms.value.as_ref().map(LeaseValue::as_str);
    let row = match decide_claim(place, &kept, &terms.owner, claim, at(now_ms)?) {
        ClaimDecision::Refused(refusal) => return Ok(Err(refusal)),
        ClaimDecision::Extend(token) => {
            let own = rows
                .into_iter()
                .find(|row| row.fencing_token == token.value())
                .ok_or_else(|| RepositoryError::internal("the re-granted lease is gone"))?;
            let row = HolderRow {
                acquired_at_ms: now_ms,
                expires_at_ms,
                regranted: 1,
                value: value.map(str::to_owned).or(own.value.clone()),
                lock_delay_ms: terms.lock_delay.millis(),
                ..own
            };
            table.regrant(tenant, &row, value)?;
            row
        }
        ClaimDecision::GrantNew => {
            let mut row = HolderRow {
                name: name.as_str().to_owned(),
                owner: terms.owner.as_str().to_owned(),
                permits: i64::from(permits.get()),
                semaphore_limit: i64::from(limit.get()),
                acquired_at_ms: now_ms,
                expires_at_ms,
                fencing_token: 0,
                regranted: 0,
                value: value.map(str::to_owned),
                lock_delay_ms: terms.lock_delay.millis(),
            };
            row.fencing_token = table.grant(tenant, &row, now_ms)?;
            row
        }
    };
    Ok(Ok(permit(row)?))
}

/// Moves the end of `owner`'s live grant to now + `ttl` (kept when `None`: a value's change
/// alone), replacing its value when `value` is `Some`.
fn renew(
    table: &mut dyn HolderTable,
    tenant: &Tenant,
    name: &ResourceName,
    owner: &Owner,
    ttl: Option<Ttl>,
    value: Option<LeaseValue>,
) -> Result<LeaseOutcome, PermitError> {
    let (now_ms, rows) = read(table, tenant, name)?;
    let live_own = rows
        .into_iter()
        .find(|row| row.owner == owner.as_str() && row.expires_at_ms > now_ms);
    let Some(own) = live_own else {
        return Ok(LeaseOutcome::NotFound);
    };
    let value = value.as_ref().map(LeaseValue::as_str);
    let row = HolderRow {
        expires_at_ms: ttl.map_or(own.expires_at_ms, |ttl| {
            now_ms + i64::from(ttl.seconds()) * 1_000
        }),
        value: value.map(str::to_owned).or(own.value.clone()),
        ..own
    };
    table.renew(tenant, &row, value)?;
    Ok(LeaseOutcome::Renewed(Grant::of_permit(permit(row)?)))
}

/// An instant of the table, to the millisecond it stores.
fn at_ms(ms: i64) -> chrono::DateTime<chrono::Utc> {
    chrono::DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// Ends `grant` only if it is still exactly that new grant, live.
fn undo(table: &mut dyn HolderTable, tenant: &Tenant, grant: Permit) -> Result<bool, PermitError> {
    let (now_ms, rows) = read(table, tenant, &grant.name)?;
    let lease = &grant.lease;
    let exact = rows.into_iter().any(|row| {
        row.owner == lease.owner.as_str()
            && row.fencing_token == lease.fencing_token.value()
            && row.acquired_at_ms == lease.acquired_at.timestamp_millis()
            && lock_domain::same_end(
                &lease.owner,
                at_ms(row.expires_at_ms),
                at_ms(lease.expires_at.timestamp_millis()),
            )
            && row.expires_at_ms > now_ms
            && row.regranted == 0
    });
    if exact {
        table.delete_owner(tenant, &grant.name, &lease.owner)?;
    }
    Ok(exact)
}
