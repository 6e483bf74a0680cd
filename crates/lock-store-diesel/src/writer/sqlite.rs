//! The writer of a SQLite store: every write goes through this process's group-commit writer
//! thread ([`GroupCommitWriter`]), and a read that meets an ended lease reads again inside it,
//! after every write in flight (see the `sqlite` statements).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use diesel::sqlite::SqliteConnection;
use lock_domain::{
    Applied, Claim, Clock, Grant, Holding, LeaseOp, LeaseOutcome, LeaseTerms, ListQuery, Lock,
    Place, RepositoryError, ResourceName, SemaphorePage, SessionOp, SessionOutcome, SessionPage,
    SessionQuery, Tenant,
};

use super::group_commit::{prepare, GroupCommitWriter, Prepared};
use super::wal_limit::WalLimit;
use super::{undo_unheard, Writer};
use crate::error::from_query;
use crate::outcome::{ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::pooled::Pooled;
use crate::row::{ListedRow, LockRow};
use crate::semaphores::{self, PermitError, SqliteHolders};
use crate::sessions::{self, under_session, SessionRows, SessionWrites};
use crate::shared_locks::{self, SqliteShared};
use crate::sqlite::{self, Outside};

/// The group-commit writer for the writes, the pool for the reads.
pub(crate) struct SqliteWriter {
    commits: GroupCommitWriter,
    pooled: Pooled,
}

impl SqliteWriter {
    /// The writer's job for `op`, not yet sent; a look at a lock is no job (`Err`, with what
    /// to look at).
    fn prepare(
        &self,
        tenant: Tenant,
        op: LeaseOp,
    ) -> Result<Prepared<LeaseOutcome>, (Tenant, ResourceName)> {
        Ok(match op {
            LeaseOp::Look(Place::Lock(resource)) => return Err((tenant, resource)),
            LeaseOp::Release {
                place: Place::Lock(_),
                ..
            }
            | LeaseOp::Renew {
                place: Place::Lock(_),
                ..
            } => prepare(
                move |c, now_ms| {
                    if let Some(released) = release_by_known_holder(c, now_ms, &tenant, &op)? {
                        return Ok(released);
                    }
                    under_session(
                        c,
                        &tenant,
                        op,
                        |_| Ok(now_ms),
                        |c, op| release_or_renew(c, now_ms, &tenant, op),
                    )
                },
                |_, _, _| true,
            ),
            LeaseOp::RecordExpiry {
                place: Place::Lock(resource),
                owner,
                fencing_token,
            } => {
                prepare(
                    move |c, now_ms| {
                        // The exclusive lease's expiry (its row ends in place); else a reader's.
                        let exclusive = crate::history::expiry::record_sqlite(
                            c,
                            tenant.as_str(),
                            resource.as_str(),
                            owner.as_str(),
                            fencing_token.value(),
                            now_ms,
                        )
                        .map_err(from_query)?;
                        if exclusive {
                            return Ok(LeaseOutcome::ExpiryRecorded(true));
                        }
                        let op = LeaseOp::RecordExpiry {
                            place: Place::Lock(resource),
                            owner,
                            fencing_token,
                        };
                        Ok(through_holders(c, now_ms, &tenant, op)?)
                    },
                    |_, _, _| true,
                )
            }
            op => {
                let undo_tenant = tenant.clone();
                let events = Arc::clone(self.pooled.events());
                prepare(
                    move |c, now_ms| {
                        under_session(
                            c,
                            &tenant,
                            op,
                            |_| Ok(now_ms),
                            |c, op| match op {
                                LeaseOp::Acquire {
                                    place: Place::Lock(resource),
                                    claim: Claim::Exclusive,
                                    terms,
                                } => acquire_exclusive(c, now_ms, &tenant, &resource, terms),
                                op => Ok(through_holders(c, now_ms, &tenant, op)?),
                            },
                        )
                        .inspect(|outcome| {
                            if let LeaseOutcome::Granted(grant) = outcome {
                                known_holders::keep(&tenant, &grant.lease.owner);
                            }
                        })
                    },
                    // Grants whose caller went away before they were answered.
                    move |c, now_ms, answer| {
                        undo_unheard(&*events, &undo_tenant, &answer, |undo| {
                            Ok(through_holders(c, now_ms, &undo_tenant, undo)?)
                        })
                    },
                )
            }
        })
    }

    /// Starts the writer thread on `conn`, the one connection of this process that writes.
    ///
    /// # Errors
    /// When the thread cannot be spawned.
    pub(crate) fn spawn(
        conn: SqliteConnection,
        pooled: Pooled,
        clock: Arc<dyn Clock>,
        max_batch: usize,
        record_history: bool,
        wal: Option<WalLimit>,
    ) -> std::io::Result<Self> {
        Ok(Self {
            commits: GroupCommitWriter::spawn(conn, clock, max_batch, record_history, wal)?,
            pooled,
        })
    }
}

/// Runs `op` through the holders of its place (`shared_locks` for a lock, `semaphores` for a
/// semaphore), in the writer's transaction.
fn through_holders(
    conn: &mut SqliteConnection,
    now_ms: i64,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, PermitError> {
    match op.place() {
        Place::Lock(_) => shared_locks::run(&mut SqliteShared { conn, now_ms }, tenant, op),
        Place::Semaphore(_) => semaphores::run(&mut SqliteHolders { conn, now_ms }, tenant, op),
    }
}

/// The exclusive acquire: the lock statement, and when it refuses, the same acquire decided
/// through the lock's holders in the same transaction (so at the same instant), which says why.
fn acquire_exclusive(
    conn: &mut SqliteConnection,
    now_ms: i64,
    tenant: &Tenant,
    resource: &ResourceName,
    terms: LeaseTerms,
) -> Result<LeaseOutcome, RepositoryError> {
    let granted = sqlite::acquire(
        conn,
        tenant,
        resource,
        &terms.owner,
        terms.ttl,
        terms.value.as_ref(),
        terms.lock_delay,
        now_ms,
    )
    .map_err(from_query)?;
    if let Some(row) = granted {
        return Ok(LeaseOutcome::Granted(Grant::of_lock(Lock::try_from(row)?)));
    }
    let op = LeaseOp::Acquire {
        place: Place::Lock(resource.clone()),
        claim: Claim::Exclusive,
        terms,
    };
    Ok(through_holders(conn, now_ms, tenant, op)?)
}

/// A release or renew of a lock: the lock statement for the exclusive holder; when it finds
/// another owner, the lock's holders decide among both modes, in the same transaction.
fn release_or_renew(
    conn: &mut SqliteConnection,
    now_ms: i64,
    tenant: &Tenant,
    op: LeaseOp,
) -> Result<LeaseOutcome, RepositoryError> {
    let forbidden = match &op {
        LeaseOp::Release {
            place: Place::Lock(resource),
            owner,
        } => match sqlite::release(conn, tenant, resource, owner, now_ms).map_err(from_query)? {
            ReleaseRow::Released(row) => {
                return Ok(LeaseOutcome::Released(crate::outcome::ended_lock(row)?))
            }
            ReleaseRow::NotFound => return Ok(LeaseOutcome::NotFound),
            ReleaseRow::Forbidden => true,
        },
        LeaseOp::Renew {
            place: Place::Lock(resource),
            owner,
            ttl,
            value,
        } => match sqlite::renew(conn, tenant, resource, owner, *ttl, value.as_ref(), now_ms)
            .map_err(from_query)?
        {
            RenewRow::Renewed(row) => {
                return Ok(LeaseOutcome::Renewed(Grant::of_lock(Lock::try_from(row)?)))
            }
            RenewRow::NotFound => return Ok(LeaseOutcome::NotFound),
            RenewRow::Forbidden => true,
        },
        _ => false,
    };
    debug_assert!(forbidden, "only a lock's release or renew comes here");
    Ok(through_holders(conn, now_ms, tenant, op)?)
}

#[async_trait]
impl Writer for SqliteWriter {
    fn subscribe_freed(&self) -> Option<Box<dyn lock_domain::FreedLocks>> {
        self.commits
            .subscribe_foreign()
            .map(|hints| Box::new(hints) as Box<dyn lock_domain::FreedLocks>)
    }

    async fn apply(&self, tenant: Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        match self.prepare(tenant, op) {
            Ok(job) => self.commits.submit_prepared(job).await,
            Err((tenant, resource)) => self.look_lock(tenant, resource).await,
        }
    }

    fn applies_together(&self) -> bool {
        true
    }

    /// Both in one batch of the group commit (one transaction, one commit) when both are
    /// writes; a look runs alone, in its turn.
    async fn apply_then(
        &self,
        tenant: Tenant,
        first: LeaseOp,
        then: LeaseOp,
    ) -> (Applied, Applied) {
        match (
            self.prepare(tenant.clone(), first),
            self.prepare(tenant.clone(), then),
        ) {
            (Ok(first), Ok(then)) => {
                let mut answers = self.commits.submit_together(vec![first, then]).await;
                let then = answers.pop().expect("two answers");
                (answers.pop().expect("two answers"), then)
            }
            (first, then) => {
                let first = match first {
                    Ok(job) => self.commits.submit_prepared(job).await,
                    Err((tenant, resource)) => self.look_lock(tenant, resource).await,
                };
                let then = match then {
                    Ok(job) => self.commits.submit_prepared(job).await,
                    Err((tenant, resource)) => self.look_lock(tenant, resource).await,
                };
                (first, then)
            }
        }
    }

    async fn status(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<Option<LockRow>, RepositoryError> {
        let (t, r) = (tenant.clone(), resource.clone());
        let outside = self
            .pooled
            .run(move |conn, now_ms| {
                sqlite::status_outside_writer(conn.sqlite()?, &t, &r, now_ms).map_err(from_query)
            })
            .await?;
        match outside {
            Outside::Answer(row) => Ok(row),
            Outside::AskTheWriter => {
                self.commits
                    .submit(move |c, now_ms| {
                        sqlite::status(c, &tenant, &resource, now_ms).map_err(from_query)
                    })
                    .await
            }
        }
    }

    async fn list(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<Vec<ListedRow>, RepositoryError> {
        let (t, q) = (tenant.clone(), query.clone());
        let outside = self
            .pooled
            .run(move |conn, now_ms| {
                sqlite::list_outside_writer(conn.sqlite()?, &t, &q, now_ms).map_err(from_query)
            })
            .await?;
        match outside {
            Outside::Answer(rows) => Ok(rows),
            Outside::AskTheWriter => {
                self.commits
                    .submit(move |c, now_ms| {
                        sqlite::list(c, &tenant, &query, now_ms).map_err(from_query)
                    })
                    .await
            }
        }
    }

    async fn list_semaphores(
        &self,
        tenant: Tenant,
        query: ListQuery,
    ) -> Result<SemaphorePage, RepositoryError> {
        self.commits
            .submit(move |conn, now_ms| {
                let mut table = SqliteHolders { conn, now_ms };
                Ok(semaphores::list(&mut table, &tenant, &query)?)
            })
            .await
    }

    /// SQLite takes the oldest ended rows on its expiry index: every step starts again, and the
    /// pass goes on while a step deletes a full batch.
    async fn sweep(
        &self,
        grace: Duration,
        batch: u32,
        from: SweepPosition,
    ) -> Result<Swept, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        let deleted = self
            .commits
            .submit(move |c, now_ms| {
                sqlite::sweep(c, now_ms - grace_ms, i64::from(batch)).map_err(from_query)
            })
            .await?;
        Ok(Swept {
            deleted,
            next: (deleted >= batch as usize).then_some(from),
        })
    }

    async fn sweep_permits(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.commits
            .submit(move |c, now_ms| {
                semaphores::sweep_sqlite(c, now_ms - grace_ms, i64::from(batch)).map_err(from_query)
            })
            .await
    }

    async fn sweep_shared(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        self.commits
            .submit(move |c, now_ms| {
                shared_locks::sweep_sqlite(c, now_ms - grace_ms, i64::from(batch))
                    .map_err(from_query)
            })
            .await
    }

    async fn apply_session(
        &self,
        tenant: Tenant,
        op: SessionOp,
    ) -> Result<SessionOutcome, RepositoryError> {
        self.commits
            .submit(move |conn, now_ms| {
                sessions::apply(&mut SqliteSessions { conn, now_ms }, &tenant, op)
            })
            .await
    }

    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError> {
        self.commits
            .submit(move |conn, now_ms| {
                sessions::list(&mut SqliteSessions { conn, now_ms }, &tenant, &query)
            })
            .await
    }

    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError> {
        self.pooled
            .run(move |conn, now_ms| {
                use crate::sessions::SessionRows;
                let live = conn
                    .sqlite()?
                    .count_live(&tenant, now_ms)
                    .map_err(from_query)?;
                Ok(live.max(0) as u64)
            })
            .await
    }

    /// A write: on the writer's connection, in its next batch.
    async fn take_expired_holds(
        &self,
        limit: u32,
    ) -> Result<Vec<lock_domain::ExpiredHold>, RepositoryError> {
        self.commits
            .submit(move |conn, _| crate::expired_holds::take_sqlite(conn, limit))
            .await
    }

    async fn count_live_sessions(&self) -> Result<u64, RepositoryError> {
        self.pooled
            .run(move |conn, now_ms| {
                let live = conn.sqlite()?.count_all_live(now_ms).map_err(from_query)?;
                Ok(live.max(0) as u64)
            })
            .await
    }

    async fn sweep_sessions(&self, grace: Duration, batch: u32) -> Result<usize, RepositoryError> {
        let grace_ms = grace.as_millis() as i64;
        let ended = self
            .commits
            .submit(move |conn, now_ms| {
                let cutoff_ms = now_ms - grace_ms;
                sessions::sweep(
                    &mut SqliteSessions { conn, now_ms },
                    cutoff_ms,
                    i64::from(batch),
                )
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
        _settled: i64,
    ) -> Result<usize, RepositoryError> {
        self.commits
            .submit(move |c, _| crate::history::prune_sqlite(c, before, batch).map_err(from_query))
            .await
    }
}

/// A lock's release under a session whose holder this writer knows (`known_holders`): the
/// release statement by that holder while the session is live, in one statement (the plain
/// release when the writer keeps the session's row and it is live). `None` when
/// the holder is not known or the statement ended nothing: the caller then decides the release
/// as any other under a session (on the session's row, then the lock's holders), in the same
/// transaction, which this changed nothing of.
fn release_by_known_holder(
    conn: &mut SqliteConnection,
    now_ms: i64,
    tenant: &Tenant,
    op: &LeaseOp,
) -> Result<Option<LeaseOutcome>, RepositoryError> {
    let LeaseOp::Release {
        place: Place::Lock(resource),
        owner,
    } = op
    else {
        return Ok(None);
    };
    let Some(id) = owner.session() else {
        return Ok(None);
    };
    let sessions_tenant = lock_domain::sessions_tenant(tenant);
    let Some(holder) = known_holders::get(&sessions_tenant, &id) else {
        return Ok(None);
    };
    // The session's row as this transaction would read it, when kept: the release then needs
    // no look at it.
    let released = match super::read_sessions::lives(sessions_tenant.as_str(), id.as_str(), now_ms)
    {
        Some(true) => sqlite::release_held(conn, tenant, resource, &holder, now_ms),
        Some(false) => return Ok(None),
        None => sqlite::release_under_session(
            conn,
            tenant,
            resource,
            &holder,
            &sessions_tenant,
            &id,
            now_ms,
        ),
    }
    .map_err(from_query)?;
    released
        .map(|row| Ok(LeaseOutcome::Released(crate::outcome::ended_lock(row)?)))
        .transpose()
}

/// The holders of the sessions this writer granted under: a session's holder (its id and
/// label) never changes while it lives, and whether it still lives is the statement's to
/// decide, so an entry is never out of date.
mod known_holders {
    use std::cell::RefCell;
    use std::collections::HashMap;

    use lock_domain::{Owner, SessionId, Tenant};

    /// The most holders kept; past it the map starts again.
    const MAX_KEPT: usize = 65_536;

    thread_local! {
        static KNOWN: RefCell<HashMap<(Tenant, SessionId), Owner>> = RefCell::default();
    }

    /// Keeps `holder` (granted a lease of `tenant`), if it is a session's.
    pub(super) fn keep(tenant: &Tenant, holder: &Owner) {
        let Some(id) = holder.session() else {
            return;
        };
        let key = (lock_domain::sessions_tenant(tenant), id);
        KNOWN.with(|known| {
            let mut known = known.borrow_mut();
            if known.contains_key(&key) {
                return;
            }
            if known.len() >= MAX_KEPT {
                known.clear();
            }
            known.insert(key, holder.clone());
        });
    }

    /// The holder of session `id` of `sessions_tenant`, if kept.
    pub(super) fn get(sessions_tenant: &Tenant, id: &SessionId) -> Option<Owner> {
        KNOWN.with(|known| {
            known
                .borrow()
                .get(&(sessions_tenant.clone(), id.clone()))
                .cloned()
        })
    }
}

/// A session operation inside the writer's transaction.
struct SqliteSessions<'c> {
    conn: &'c mut SqliteConnection,
    now_ms: i64,
}

impl SessionWrites for SqliteSessions<'_> {
    fn rows(&mut self) -> &mut dyn SessionRows {
        self.conn
    }

    fn now_ms(&mut self) -> diesel::QueryResult<i64> {
        Ok(self.now_ms)
    }

    fn say_ending(
        &mut self,
        ending: Option<lock_domain::HistoryEvent>,
        reason: Option<&str>,
    ) -> diesel::QueryResult<()> {
        crate::history::SayEnding::say_ending(self.conn, ending, reason)
    }

    fn run(&mut self, tenant: &Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError> {
        Ok(through_holders(self.conn, self.now_ms, tenant, op)?)
    }
}

impl SqliteWriter {
    /// How a lock is held: from the last committed state when its row is live and exclusive (or
    /// absent), else read by the writer with the lock's readers and its lock-delay, after every
    /// write in flight.
    async fn look_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
    ) -> Result<LeaseOutcome, RepositoryError> {
        let (t, r) = (tenant.clone(), resource.clone());
        let outside = self
            .pooled
            .run(move |conn, now_ms| {
                sqlite::status_outside_writer(conn.sqlite()?, &t, &r, now_ms).map_err(from_query)
            })
            .await?;
        match outside {
            // No row: nobody holds the lock, and no lock-delay keeps it.
            Outside::Answer(None) => return Ok(LeaseOutcome::Looked(Holding::default())),
            Outside::Answer(Some(row)) => {
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
            Outside::AskTheWriter => {}
        }
        let op = LeaseOp::Look(Place::Lock(resource));
        self.commits
            .submit(move |c, now_ms| Ok(through_holders(c, now_ms, &tenant, op)?))
            .await
    }
}
