//! The PostgreSQL writer without batching (`postgres_batch_connections = 0`): each operation
//! runs on a pooled connection of its own, within the caller's deadlines ([`Pooled`]). The
//! batcher runs everything but acquires, releases and renews this way too.

use std::sync::Arc;

use std::time::Duration;

use async_trait::async_trait;
use lock_domain::{
    Applied, Claim, Grant, Holding, LeaseOp, LeaseOutcome, LeaseTerms, ListQuery, Lock, Place,
    RepositoryError, ResourceName, SemaphorePage, Tenant,
};

use super::{undo_unheard, Writer};
use crate::error::from_query;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::pooled::Pooled;
use crate::postgres::{reads, writes};
use crate::row::{ListedRow, LockRow};
use crate::semaphores::{self, PermitError, PostgresHolders};
use crate::sessions::{self, SessionRows, SessionWrites};
use crate::shared_locks::{self, PostgresShared};

/// Runs every operation on a pooled connection.
pub(crate) struct PostgresDirect {
    pooled: Pooled,
}

impl PostgresDirect {
    pub(crate) fn new(pooled: Pooled) -> Self {
        Self { pooled }
    }

    pub(crate) fn pooled(&self) -> &Pooled {
        &self.pooled
    }

    /// Runs `op` through the holders of its place, in a transaction of its own; a grant whose
    /// caller has gone is undone. An operation under a session is decided on the session in the
    /// same transaction: its row kept from keepalives and ends (`FOR SHARE`) meanwhile (see
    /// `sessions.rs`).
    pub(crate) async fn through_holders(
        &self,
        tenant: Tenant,
        op: LeaseOp,
    ) -> Result<LeaseOutcome, RepositoryError> {
        use diesel::Connection;
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.pooled
            .run_undoable(
                move |conn, _| {
                    let conn = conn.postgres()?;
                    Ok(conn.transaction(|c| -> Result<LeaseOutcome, PermitError> {
                        Ok(sessions::under_session(
                            c,
                            &tenant,
                            op,
                            crate::lease_statements::now_postgres,
                            |c, op| Ok(holders_in_transaction(c, &tenant, op)?),
                        )?)
                    })?)
                },
                // A grant that committed after its caller heard 503 or went away.
                move |conn, answer| {
                    let Ok(c) = conn.postgres() else { return };
                    undo_unheard(&*events, &undo_tenant, &answer, |undo| {
                        Ok(holders_postgres(c, &undo_tenant, undo)?)
                    });
                },
            )
            .await
    }

    /// `first`, then `then` (each an acquire or a release of a lock: [`together`]), in one
    /// transaction with one commit: each decided as [`Writer::apply`] decides it, `then` seeing
    /// what `first` did. When either fails, the other is made alone ([`in_one_transaction`]).
    /// A grant of `then` whose caller has gone by the time it would be answered is undone.
    pub(crate) async fn apply_together(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        let both = self
            .pooled
            .run_undoable(
                move |conn, _| Ok(in_one_transaction(conn.postgres()?, &tenant, first, then)),
                // A grant that committed after its caller heard 503 or went away.
                move |conn, (_, then): (Applied, Applied)| {
                    let (Ok(answer), Ok(c)) = (then, conn.postgres()) else {
                        return;
                    };
                    undo_unheard(&*events, &undo_tenant, &answer, |undo| {
                        Ok(holders_postgres(c, &undo_tenant, undo)?)
                    });
                },
            )
            .await;
        match both {
            Ok(both) => both,
            Err(error) => both_failed(error),
        }
    }

    /// A session operation in a transaction of its own.
    async fn in_session_transaction<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut PostgresSessions<'_>) -> Result<T, RepositoryError> + Send + 'static,
    ) -> Result<T, RepositoryError> {
        use diesel::Connection;
        self.pooled
            .run(move |conn, _| {
                let conn = conn.postgres()?;
                Ok(conn.transaction(|conn| -> Result<T, PermitError> {
                    Ok(work(&mut PostgresSessions { conn })?)
                })?)
            })
            .await
    }

    /// The exclusive acquire by the lock statement, alone on a pooled connection.
    async fn acquire_row(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        terms: LeaseTerms,
    ) -> Result<AcquireRow, RepositoryError> {
        let undo_tenant = tenant.clone();
        let events = Arc::clone(self.pooled.events());
        self.pooled
            .run_undoable(
                move |conn, _| {
                    writes::acquire(
                        conn.postgres()?,
                        &tenant,
                        &resource,
                        &terms.owner,
                        terms.ttl,
                        terms.value,
                        terms.lock_delay,
                    )
                    .map_err(from_query)
                },
                // A grant that committed after its caller heard 503 (a commit is not covered
                // by `statement_timeout`) or went away.
                move |conn, row| {
                    let (AcquireRow::Granted(row), Ok(c)) = (row, conn.postgres()) else {
                        return;
                    };
                    super::undo_unheard_grant(&*events, &undo_tenant, row, |lock| {
                        writes::undo_grant(c, &undo_tenant, lock)
                    });
                },
            )
            .await
    }

    /// How a lock is held: its live exclusive row as the status read sees it, else (readers, or
    /// no live lease: then its lock-delay) read by its holders under the row lock.
    pub(crate) async fn look_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        through_holders: impl std::future::Future<Output = Result<LeaseOutcome, RepositoryError>>,
    ) -> Result<LeaseOutcome, RepositoryError> {
        if let Some(row) = self.status(tenant, resource).await? {
            let lock = Lock::try_from(row)?;
            // Readers, and a session's hold (whose end is its session's), are looked at
            // through the holders.
            if !lock.owner.is_shared_holders() && lock.owner.session().is_none() {
                return Ok(LeaseOutcome::Looked(Holding {
                    holders: vec![Grant::of_lock(lock)],
                    delayed_until: None,
                }));
            }
        }
        through_holders.await
    }
}

/// An exclusive acquire by the lock statement (`statement`, alone or in a batch), and when it
/// refused without saying why, the same acquire through the lock's holders (`holders`), decided
/// again under the row's lock with the readers in view: a refusal there says why, at the instant
/// it refused; and the lock may have been freed in between, so that it grants.
pub(crate) async fn acquire_exclusive<S, H>(
    statement: S,
    holders: impl FnOnce() -> H,
) -> Result<LeaseOutcome, RepositoryError>
where
    S: std::future::Future<Output = Result<AcquireRow, RepositoryError>>,
    H: std::future::Future<Output = Result<LeaseOutcome, RepositoryError>>,
{
    match acquired(statement.await?)? {
        Some(answered) => Ok(answered),
        None => holders().await,
    }
}

/// An exclusive acquire's outcome from the lock statement's row; `None` when it refused without
/// saying why (then the lock's holders decide).
fn acquired(row: AcquireRow) -> Result<Option<LeaseOutcome>, RepositoryError> {
    Ok(match row {
        AcquireRow::Granted(row) => {
            Some(LeaseOutcome::Granted(Grant::of_lock(Lock::try_from(row)?)))
        }
        AcquireRow::Refused(Some(refusal)) => Some(LeaseOutcome::Refused(refusal)),
        AcquireRow::Refused(None) => None,
    })
}

/// A lock's release or renew by the lock statement (`statement`), and when it finds another
/// owner, by the lock's holders (`holders`), which decide among both modes.
pub(crate) async fn release_or_renew<S, H>(
    statement: S,
    holders: impl FnOnce() -> H,
) -> Result<LeaseOutcome, RepositoryError>
where
    S: std::future::Future<Output = Result<LeaseOutcome, RepositoryError>>,
    H: std::future::Future<Output = Result<LeaseOutcome, RepositoryError>>,
{
    match statement.await? {
        LeaseOutcome::Forbidden => holders().await,
        answered => Ok(answered),
    }
}

/// A release's outcome from the lock statement's row.
pub(crate) fn released(row: ReleaseRow) -> Result<LeaseOutcome, RepositoryError> {
    Ok(match row {
        ReleaseRow::Released(row) => LeaseOutcome::Released(crate::outcome::ended_lock(row)?),
        ReleaseRow::NotFound => LeaseOutcome::NotFound,
        ReleaseRow::Forbidden => LeaseOutcome::Forbidden,
    })
}

/// A renew's outcome from the lock statement's row.
pub(crate) fn renewed(row: RenewRow) -> Result<LeaseOutcome, RepositoryError> {
    Ok(match row {
        RenewRow::Renewed(row) => LeaseOutcome::Renewed(Grant::of_lock(Lock::try_from(row)?)),
        RenewRow::NotFound => LeaseOutcome::NotFound,
        RenewRow::Forbidden => LeaseOutcome::Forbidden,
    })
}

#[async_trait]
impl Writer for PostgresDirect {
    /// A lock's release and the next grant in one transaction ([`Self::apply_together`]).
    fn applies_together(&self) -> bool {
        true
    }

    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        apply_then(self, self, tenant, first, then).await
    }

    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        if op.session().is_some() {
            // Never by a lock statement: a session's hold is written by the holders' path.
            return self.through_holders(tenant, op).await;
        }
        match op {
            LeaseOp::Acquire {
                place: Place::Lock(resource),
                claim: Claim::Exclusive,
                terms,
            } => {
                let statement = self.acquire_row(tenant.clone(), resource.clone(), terms.clone());
                let op = LeaseOp::Acquire {
                    place: Place::Lock(resource),
                    claim: Claim::Exclusive,
                    terms,
                };
                acquire_exclusive(statement, || self.through_holders(tenant, op)).await
            }
            LeaseOp::Release {
                place: Place::Lock(resource),
                owner,
            } => {
                let (t, r, o) = (tenant.clone(), resource.clone(), owner.clone());
                let statement = async {
                    released(
                        self.pooled
                            .run(move |conn, _| writes::release(conn.postgres()?, &t, &r, &o))
                            .await?,
                    )
                };
                let op = LeaseOp::Release {
                    place: Place::Lock(resource),
                    owner,
                };
                release_or_renew(statement, || self.through_holders(tenant, op)).await
            }
            LeaseOp::Renew {
                place: Place::Lock(resource),
                owner,
                ttl,
                value,
            } => {
                let (t, r, o, v) = (
                    tenant.clone(),
                    resource.clone(),
                    owner.clone(),
                    value.clone(),
                );
                let statement = async {
                    renewed(
                        self.pooled
                            .run(move |conn, _| writes::renew(conn.postgres()?, &t, &r, &o, ttl, v))
                            .await?,
                    )
                };
                let op = LeaseOp::Renew {
                    place: Place::Lock(resource),
                    owner,
                    ttl,
                    value,
                };
                release_or_renew(statement, || self.through_holders(tenant, op)).await
            }
            LeaseOp::RecordExpiry {
                place: Place::Lock(resource),
                owner,
                fencing_token,
            } => {
                let (t, r, o) = (tenant.clone(), resource.clone(), owner.clone());
                let exclusive = self
                    .pooled
                    .run(move |conn, _| {
                        crate::history::expiry::record_postgres(
                            conn.postgres()?,
                            t.as_str(),
                            r.as_str(),
                            o.as_str(),
                            fencing_token.value(),
                        )
                        .map_err(from_query)
                    })
                    .await?;
                if exclusive {
                    return Ok(LeaseOutcome::ExpiryRecorded(true));
                }
                let op = LeaseOp::RecordExpiry {
                    place: Place::Lock(resource),
                    owner,
                    fencing_token,
                };
                self.through_holders(tenant, op).await
            }
            LeaseOp::Look(Place::Lock(resource)) => {
                let op = LeaseOp::Look(Place::Lock(resource.clone()));
                let holders = self.through_holders(tenant.clone(), op);
                self.look_lock(tenant, resource, holders).await
            }
            op => self.through_holders(tenant, op).await,
        }
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                reads::status(conn.postgres()?, &tenant, &resource).map_err(from_query)
            })
            .await
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        self.pooled
            .run(move |conn, _| reads::list(conn.postgres()?, &tenant, &query))
            .await
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                use diesel::Connection;
                Ok(conn.postgres()?.transaction(|conn| {
                    semaphores::list(&mut PostgresHolders { conn }, &tenant, &query)
                })?)
            })
            .await
    }

    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                writes::sweep(conn.postgres()?, grace_ms, batch, from).map_err(from_query)
            })
            .await
    }

    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                semaphores::sweep_postgres(conn.postgres()?, grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }

    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.pooled
            .run(move |conn, _| {
                shared_locks::sweep_postgres(conn.postgres()?, grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }

    async fn apply_session(
        &self,
        tenant: Tenant,
        op: lock_domain::SessionOp,
    ) -> Result<lock_domain::SessionOutcome, RepositoryError> {
        self.in_session_transaction(move |writes| sessions::apply(writes, &tenant, op))
            .await
    }

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: lock_domain::SessionQuery,
    ) -> Result<lock_domain::SessionPage, RepositoryError> {
        self.in_session_transaction(move |writes| sessions::list(writes, &tenant, &query))
            .await
    }

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        self.in_session_transaction(move |writes| {
            let now_ms = writes.now_ms().map_err(from_query)?;
            let live = writes
                .rows()
                .count_live(&tenant, now_ms)
                .map_err(from_query)?;
            Ok(live.max(0) as u64)
        })
        .await
    }

    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<lock_domain::ExpiredHold>, RepositoryError> {
        self.pooled
            .run(move |conn, _| crate::expired_holds::take_postgres(conn.postgres()?, limit))
            .await
    }

    async fn count_live_sessions(&self) -> Result<u64, RepositoryError> {
        self.in_session_transaction(move |writes| {
            let now_ms = writes.now_ms().map_err(from_query)?;
            let live = writes.rows().count_all_live(now_ms).map_err(from_query)?;
            Ok(live.max(0) as u64)
        })
        .await
    }

    async fn sweep_sessions(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        let ended = self
            .in_session_transaction(move |writes| {
                let cutoff_ms = writes.now_ms().map_err(from_query)? - grace_ms;
                sessions::sweep(writes, cutoff_ms, i64::from(batch))
            })
            .await?;
        if ended > 0 {
            self.pooled.events().sessions_expired(ended);
        }
        Ok(ended)
    }

    async fn prune_history(
        &self,
        before: chrono::DateTime<chrono::Utc>,
        batch: u32,
        settled: i64,
    ) -> Result<usize, RepositoryError> {
        self.pooled
            .run(move |conn, _| {
                crate::history::prune_postgres(conn.postgres()?, before, batch, settled)
                    .map_err(from_query)
            })
            .await
    }
}

/// Whether `first` then `then` can be made in one transaction by
/// [`PostgresDirect::apply_together`]: each is an acquire or a release of a lock (a lock's
/// release and the grant to the next in line).
fn together(first: &LeaseOp, then: &LeaseOp) -> bool {
    [first, then].iter().all(|op| {
        matches!(
            op,
            LeaseOp::Acquire {
                place: Place::Lock(_),
                ..
            } | LeaseOp::Release {
                place: Place::Lock(_),
                ..
            }
        )
    })
}

/// A PostgreSQL writer's `apply_then`: a lock's release and acquire by `direct` in one
/// transaction ([`PostgresDirect::apply_together`]), anything else one after the other by
/// `writer`.
pub(crate) async fn apply_then<W: Writer + ?Sized>(
    writer: &W,
    direct: &PostgresDirect,
    tenant: Tenant,
    first: LeaseOp,
    then: LeaseOp,
) -> (Applied, Applied) {
    if together(&first, &then) {
        direct.apply_together(tenant, first, then).await
    } else {
        super::in_turn(writer, tenant, first, then).await
    }
}

/// [`PostgresDirect::apply_together`]'s transaction: the outcome of each operation. When one
/// fails, nothing of the other is kept: it is made again alone (no savepoint between the two,
/// which would cost two more round trips on every hand-over). A failed commit fails both.
fn in_one_transaction(
    conn: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    first: LeaseOp,
    then: LeaseOp,
) -> (Applied, Applied) {
    use diesel::Connection;
    let both = conn.transaction(|c| -> Result<_, Failed> {
        let made = decide_in_transaction(c, tenant, first.clone()).map_err(Failed::First)?;
        let then = decide_in_transaction(c, tenant, then.clone()).map_err(Failed::Then)?;
        Ok((made, then))
    });
    let alone = |conn: &mut diesel::pg::PgConnection, op: LeaseOp| {
        conn.transaction(|c| -> Result<LeaseOutcome, PermitError> {
            Ok(decide_in_transaction(c, tenant, op)?)
        })
        .map_err(RepositoryError::from)
    };
    match both {
        Ok((first, then)) => (Ok(first), Ok(then)),
        Err(Failed::First(error)) => (Err(error), alone(conn, then)),
        Err(Failed::Then(error)) => (alone(conn, first), Err(error)),
        Err(Failed::Transaction(error)) => both_failed(from_query(error)),
    }
}

/// `error` as the answer of both operations of a pair, each of the same kind (`RepositoryError`
/// is not `Clone`: the second carries the first's message chain).
fn both_failed(error: RepositoryError) -> (Applied, Applied) {
    let mut chain = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        chain = format!("{chain}: {cause}");
        source = cause.source();
    }
    let again = match &error {
        RepositoryError::Unavailable(_) => RepositoryError::unavailable(chain),
        RepositoryError::StorageFull(_) => RepositoryError::storage_full(chain),
        RepositoryError::Internal(_) => RepositoryError::internal(chain),
    };
    (Err(error), Err(again))
}

/// Why [`in_one_transaction`]'s transaction committed nothing.
enum Failed {
    First(RepositoryError),
    Then(RepositoryError),
    /// Its `BEGIN` or `COMMIT`.
    Transaction(diesel::result::Error),
}

impl From<diesel::result::Error> for Failed {
    fn from(error: diesel::result::Error) -> Self {
        Self::Transaction(error)
    }
}

/// `op` decided as [`PostgresDirect`]'s `apply` decides it, inside the caller's transaction:
/// an exclusive acquire or a release of a lock by the lock statement, and by the lock's holders
/// when the statement leaves it to them; anything else, and anything under a session, by the
/// holders.
fn decide_in_transaction(
    c: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, RepositoryError> {
    if op.session().is_some() {
        return sessions::under_session(
            c,
            tenant,
            op,
            crate::lease_statements::now_postgres,
            |c, op| Ok(holders_in_transaction(c, tenant, op)?),
        );
    }
    let decided = match &op {
        LeaseOp::Acquire {
            place: Place::Lock(resource),
            claim: Claim::Exclusive,
            terms,
        } => acquired(
            writes::acquire(
                c,
                tenant,
                resource,
                &terms.owner,
                terms.ttl,
                terms.value.clone(),
                terms.lock_delay,
            )
            .map_err(from_query)?,
        )?,
        LeaseOp::Release {
            place: Place::Lock(resource),
            owner,
        } => Some(released(writes::release(c, tenant, resource, owner)?)?)
            .filter(|answer| !matches!(answer, LeaseOutcome::Forbidden)),
        _ => None,
    };
    match decided {
        Some(answer) => Ok(answer),
        None => Ok(holders_in_transaction(c, tenant, op)?),
    }
}

/// Runs `op` through the holders of its place (`shared_locks` for a lock, `semaphores` for a
/// semaphore), in a transaction of its own.
pub(crate) fn holders_postgres(
    conn: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, PermitError> {
    use diesel::Connection;
    conn.transaction(|conn| holders_in_transaction(conn, tenant, op))
}

/// A session operation inside a PostgreSQL transaction.
pub(crate) struct PostgresSessions<'c> {
    conn: &'c mut diesel::pg::PgConnection,
}

impl SessionWrites for PostgresSessions<'_> {
    fn rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }

    fn now_ms(&mut self) -> diesel::QueryResult<i64> {
        crate::lease_statements::now_postgres(self.conn)
    }

    fn say_ending(
        &mut self,
        ending: Option<lock_domain::HistoryEvent>,
        reason: Option<&str>,
    ) -> diesel::QueryResult<()> {
        crate::history::SayEnding::say_ending(self.conn, ending, reason)
    }

    fn run(&mut self, tenant: &Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        Ok(holders_in_transaction(self.conn, tenant, op)?)
    }
}

/// [`holders_postgres`] inside the caller's transaction.
pub(crate) fn holders_in_transaction(
    conn: &mut diesel::pg::PgConnection,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, PermitError> {
    match op.place() {
        Place::Lock(_) => shared_locks::run(&mut PostgresShared { conn }, tenant, op),
        Place::Semaphore(_) => semaphores::run(&mut PostgresHolders { conn }, tenant, op),
    }
}
