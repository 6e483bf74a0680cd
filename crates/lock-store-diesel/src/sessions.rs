//! Sessions in the `sessions` and `session_holds` tables (migration `sessions`), on both
//! backends.
//!
//! A hold under a session is an ordinary lease row whose owner is the session's holder
//! (`Owner::session_holder`). While it is written its `expires_at_ms` is
//! [`Session::HELD_WHILE_LIVE_MS`] ([`stored_end`]): every statement that decides by the row alone
//! (the exclusive lock statements, the sweeps) takes it as live, and sends a refusal through the
//! holders' paths, which read the row's real end from its session ([`SessionEnds`]). So a
//! keepalive writes the session's row alone, and a session that runs out ends every hold at that
//! instant without a write. Closing or forcing a session releases each hold in the session's
//! transaction; the sweeper ends the holds of a session that ran out (recorded `expired`) once its
//! lock-delay is over.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use diesel::pg::PgConnection;
use diesel::sqlite::SqliteConnection;
use diesel::{OptionalExtension, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{
    Grant, LeaseOp, LeaseOutcome, ListedSession, LockDelay, Owner, Place, RepositoryError,
    ResourceName, Session, SessionHold, SessionId, SessionOp, SessionOutcome, SessionPage,
    SessionQuery, Tenant, Ttl,
};

use crate::prepared::{portable_statement, Param, Prepared};
use crate::row::CountRow;

/// The end a hold's row has while its session lives.
pub(crate) const HELD: i64 = Session::HELD_WHILE_LIVE_MS;

/// The end to write in the row of `owner`'s lease that ends at `end_ms`: a session's holder's
/// row always says "while the session lives".
pub(crate) fn stored_end(owner: &str, end_ms: i64) -> i64 {
    if is_session_holder(owner) {
        HELD
    } else {
        end_ms
    }
}

/// Whether `owner` (as stored) is a session's holder.
pub(crate) fn is_session_holder(owner: &str) -> bool {
    owner.starts_with('\u{2}')
}

/// The session id of a stored session holder.
fn session_of(owner: &str) -> Option<&str> {
    owner.get(1..1 + SessionId::LEN)
}

const SESSION: &str = "\
SELECT id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms
FROM sessions WHERE tenant = $1 AND id = $2";

/// PostgreSQL: [`SESSION`], kept from a keepalive or an end until the transaction ends (they
/// take the row `FOR UPDATE`): an acquire under the session is decided on the session's end.
const POSTGRES_SESSION_SHARED: &str = "\
SELECT id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms
FROM sessions WHERE tenant = $1 AND id = $2 FOR SHARE";

const INSERT_SESSION: &str = "\
INSERT INTO sessions (tenant, id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms)
VALUES ($1, $2, $3, $4, $5, $6, $7)";

/// PostgreSQL: [`SESSION`], locked until the transaction ends (an end, which deletes it).
const POSTGRES_SESSION_LOCKED: &str = "\
SELECT id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms
FROM sessions WHERE tenant = $1 AND id = $2 FOR UPDATE";

/// A keepalive, in one statement: if the session is live at `$4`, its TTL becomes `$3` (kept
/// when 0) and its end now plus its TTL.
const KEEP_ALIVE: &str = "\
UPDATE sessions SET ttl_ms = CASE WHEN $3 > 0 THEN $3 ELSE ttl_ms END,
                    expires_at_ms = $4 + CASE WHEN $3 > 0 THEN $3 ELSE ttl_ms END
WHERE tenant = $1 AND id = $2 AND expires_at_ms > $4
RETURNING id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms";

const DELETE_SESSION: &str = "DELETE FROM sessions WHERE tenant = $1 AND id = $2";

const NOTE_HOLD: &str = "\
INSERT INTO session_holds (tenant, session_id, kind, name) VALUES ($1, $2, $3, $4)
ON CONFLICT (tenant, session_id, kind, name) DO NOTHING";

const HOLD_PLACES: &str = "\
SELECT kind, name FROM session_holds WHERE tenant = $1 AND session_id = $2
ORDER BY kind, name";

const DELETE_HOLD_PLACES: &str = "DELETE FROM session_holds WHERE tenant = $1 AND session_id = $2";

/// The live sessions of tenant `$1` whose ids start with `$2` (ids are URL-safe base64: `$3`
/// is the prefix's upper bound, or none when empty), after `$4`, live at `$5`, `$6` rows.
const LIST_BOUNDED: &str = "\
SELECT id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms
FROM sessions
WHERE tenant = $1 AND id >= $2 AND id < $3 AND id > $4 AND expires_at_ms > $5
ORDER BY id LIMIT $6";

const LIST_UNBOUNDED: &str = "\
SELECT id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms
FROM sessions
WHERE tenant = $1 AND id >= $2 AND id > $4 AND expires_at_ms > $5
ORDER BY id LIMIT $6";

const COUNT_LIVE: &str =
    "SELECT COUNT(*) AS count FROM sessions WHERE tenant = $1 AND expires_at_ms > $2";

/// Every tenant's live sessions, counted on the expiry index.
const COUNT_ALL_LIVE: &str = "SELECT COUNT(*) AS count FROM sessions WHERE expires_at_ms > $1";

/// Sessions that ran out at or before `$1` together with their lock-delay, oldest first.
const RUN_OUT: &str = "\
SELECT tenant, id FROM sessions WHERE expires_at_ms + lock_delay_ms <= $1
ORDER BY expires_at_ms LIMIT $2";

/// The rows of a run-out session's holder (`$3`) at one place (`$1`, `$2`), deleted by the
/// sweeper once the session's lock-delay is over.
const END_LOCK_HOLD: &str =
    "DELETE FROM distributed_locks WHERE tenant = $1 AND resource = $2 AND owner = $3";
const END_READER_HOLD: &str =
    "DELETE FROM shared_holders WHERE tenant = $1 AND resource = $2 AND owner = $3";
const END_PERMIT_HOLD: &str =
    "DELETE FROM semaphore_holders WHERE tenant = $1 AND name = $2 AND owner = $3";

/// A `sessions` row.
#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct SessionRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub owner: String,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub ttl_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub lock_delay_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub created_at_ms: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub expires_at_ms: i64,
}

#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct PlaceRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub kind: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub name: String,
}

#[derive(Debug, Clone, QueryableByName)]
pub(crate) struct RunOutRow {
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub tenant: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    pub id: String,
}

fn corrupt(what: String) -> RepositoryError {
    RepositoryError::internal(format!("corrupt session row: {what}"))
}

fn at(ms: i64) -> Result<DateTime<Utc>, RepositoryError> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| corrupt(format!("time {ms}")))
}

impl SessionRow {
    /// Whether the session is live at `now_ms`: [`Session::is_live_at`] on the row, as the SQL
    /// statements write it (`expires_at_ms > now`).
    pub(crate) fn lives_at(&self, now_ms: i64) -> bool {
        self.expires_at_ms > now_ms
    }

    pub(crate) fn session(&self) -> Result<Session, RepositoryError> {
        Ok(Session {
            id: SessionId::parse(&self.id).map_err(|e| corrupt(format!("id {e}")))?,
            owner: Owner::parse(&self.owner).map_err(|e| corrupt(format!("owner {e}")))?,
            ttl: Ttl::parse(self.ttl_ms / 1_000, u32::MAX)
                .map_err(|e| corrupt(format!("ttl {e}")))?,
            lock_delay: LockDelay::parse(self.lock_delay_ms / 1_000)
                .map_err(|e| corrupt(format!("lock-delay {e}")))?,
            created_at: at(self.created_at_ms)?,
            expires_at: at(self.expires_at_ms)?,
        })
    }
}

/// The statements on sessions, on one connection inside the caller's transaction.
pub(crate) trait SessionRows {
    /// Session `id` of `tenant`, live or not; on PostgreSQL kept from keepalives and ends until
    /// the transaction ends.
    fn session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Option<SessionRow>>;
    /// [`Self::session`], kept from every other writer of it until the transaction ends.
    fn lock_session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Option<SessionRow>>;
    fn insert_session(&mut self, tenant: &Tenant, row: &SessionRow) -> QueryResult<usize>;
    /// Moves live session `id`'s end to now + its TTL, first setting the TTL to `ttl_ms`
    /// (kept when 0); `None` when it is not live.
    fn keep_alive(
        &mut self,
        tenant: &Tenant,
        id: &str,
        ttl_ms: i64,
        now_ms: i64,
    ) -> QueryResult<Option<SessionRow>>;
    fn delete_session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<usize>;
    /// Notes that session `id` of `tenant` took `hold` (of its kind, at its place's name).
    fn note_hold(&mut self, tenant: &Tenant, id: &str, hold: &SessionHold) -> QueryResult<usize>;
    fn hold_places(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Vec<PlaceRow>>;
    fn delete_hold_places(&mut self, tenant: &Tenant, id: &str) -> QueryResult<usize>;
    fn list_sessions(
        &mut self,
        tenant: &Tenant,
        query: &SessionQuery,
        now_ms: i64,
    ) -> QueryResult<Vec<SessionRow>>;
    fn count_live(&mut self, tenant: &Tenant, now_ms: i64) -> QueryResult<i64>;
    fn count_all_live(&mut self, now_ms: i64) -> QueryResult<i64>;
    fn run_out(&mut self, cutoff_ms: i64, batch: i64) -> QueryResult<Vec<RunOutRow>>;
    /// Deletes the rows of `holder` at `place`.
    fn end_holds_at(&mut self, tenant: &str, place: &PlaceRow, holder: &str) -> QueryResult<usize>;
}

macro_rules! session_statements {
    ($session_sql:expr, $locked_sql:expr) => {
        fn session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Option<SessionRow>> {
            if let Some(row) = <Self as KeptRows>::kept(tenant, id) {
                return Ok(Some(row));
            }
            let row = portable_statement!(
                $session_sql,
                vec![Param::Text(tenant.as_str()), Param::Text(id)],
            )
            .get_result::<SessionRow>(self)
            .optional()?;
            if let Some(row) = &row {
                <Self as KeptRows>::read(tenant, id, row);
            }
            Ok(row)
        }

        fn lock_session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Option<SessionRow>> {
            portable_statement!(
                $locked_sql,
                vec![Param::Text(tenant.as_str()), Param::Text(id)],
            )
            .get_result::<SessionRow>(self)
            .optional()
        }

        fn insert_session(&mut self, tenant: &Tenant, row: &SessionRow) -> QueryResult<usize> {
            <Self as KeptRows>::written(tenant, &row.id);
            portable_statement!(
                INSERT_SESSION,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(&row.id),
                    Param::Text(&row.owner),
                    Param::BigInt(row.ttl_ms),
                    Param::BigInt(row.lock_delay_ms),
                    Param::BigInt(row.created_at_ms),
                    Param::BigInt(row.expires_at_ms),
                ],
            )
            .execute(self)
        }

        fn keep_alive(
            &mut self,
            tenant: &Tenant,
            id: &str,
            ttl_ms: i64,
            now_ms: i64,
        ) -> QueryResult<Option<SessionRow>> {
            <Self as KeptRows>::written(tenant, id);
            portable_statement!(
                KEEP_ALIVE,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(id),
                    Param::BigInt(ttl_ms),
                    Param::BigInt(now_ms),
                ],
            )
            .get_result::<SessionRow>(self)
            .optional()
        }

        fn delete_session(&mut self, tenant: &Tenant, id: &str) -> QueryResult<usize> {
            <Self as KeptRows>::written(tenant, id);
            portable_statement!(
                DELETE_SESSION,
                vec![Param::Text(tenant.as_str()), Param::Text(id)],
            )
            .execute(self)
        }

        fn hold_places(&mut self, tenant: &Tenant, id: &str) -> QueryResult<Vec<PlaceRow>> {
            portable_statement!(
                HOLD_PLACES,
                vec![Param::Text(tenant.as_str()), Param::Text(id)],
            )
            .load(self)
        }

        fn delete_hold_places(&mut self, tenant: &Tenant, id: &str) -> QueryResult<usize> {
            portable_statement!(
                DELETE_HOLD_PLACES,
                vec![Param::Text(tenant.as_str()), Param::Text(id)],
            )
            .execute(self)
        }

        fn list_sessions(
            &mut self,
            tenant: &Tenant,
            query: &SessionQuery,
            now_ms: i64,
        ) -> QueryResult<Vec<SessionRow>> {
            let upper = query.prefix.upper_bound();
            let (sql, upper) = match &upper {
                Some(upper) => (LIST_BOUNDED, upper.as_str()),
                None => (LIST_UNBOUNDED, ""),
            };
            Prepared::portable(
                sql,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(query.prefix.as_str()),
                    Param::Text(upper),
                    Param::Text(query.after.as_ref().map_or("", |a| a.as_str())),
                    Param::BigInt(now_ms),
                    Param::BigInt(query.limit.get() as i64 + 1),
                ],
            )
            .load(self)
        }

        fn count_live(&mut self, tenant: &Tenant, now_ms: i64) -> QueryResult<i64> {
            portable_statement!(
                COUNT_LIVE,
                vec![Param::Text(tenant.as_str()), Param::BigInt(now_ms)],
            )
            .get_result::<CountRow>(self)
            .map(|row| row.count)
        }

        fn count_all_live(&mut self, now_ms: i64) -> QueryResult<i64> {
            portable_statement!(COUNT_ALL_LIVE, vec![Param::BigInt(now_ms)])
                .get_result::<CountRow>(self)
                .map(|row| row.count)
        }

        fn run_out(&mut self, cutoff_ms: i64, batch: i64) -> QueryResult<Vec<RunOutRow>> {
            portable_statement!(
                RUN_OUT,
                vec![Param::BigInt(cutoff_ms), Param::BigInt(batch)],
            )
            .load(self)
        }

        fn end_holds_at(
            &mut self,
            tenant: &str,
            place: &PlaceRow,
            holder: &str,
        ) -> QueryResult<usize> {
            let params = || {
                vec![
                    Param::Text(tenant),
                    Param::Text(&place.name),
                    Param::Text(holder),
                ]
            };
            if place.kind != "semaphore" {
                Ok(
                    portable_statement!(END_READER_HOLD, params()).execute(&mut *self)?
                        + portable_statement!(END_LOCK_HOLD, params()).execute(&mut *self)?,
                )
            } else {
                portable_statement!(END_PERMIT_HOLD, params()).execute(self)
            }
        }
    };
}

/// Session rows a connection's thread keeps from its earlier reads. Every write of a
/// `sessions` row goes through [`SessionRows`] and tells [`KeptRows::written`] first.
trait KeptRows {
    /// Session `id`'s row as kept, if it is.
    fn kept(_tenant: &Tenant, _id: &str) -> Option<SessionRow> {
        None
    }
    /// The transaction under way read `row`.
    fn read(_tenant: &Tenant, _id: &str, _row: &SessionRow) {}
    /// The transaction under way is about to write session `id`'s row.
    fn written(_tenant: &Tenant, _id: &str) {}
}

/// SQLite: the writer's thread keeps the rows its committed transactions read
/// (`writer::read_sessions`); other threads keep none.
impl KeptRows for SqliteConnection {
    fn kept(tenant: &Tenant, id: &str) -> Option<SessionRow> {
        crate::writer::read_sessions::get(tenant.as_str(), id)
    }

    fn read(tenant: &Tenant, id: &str, row: &SessionRow) {
        crate::writer::read_sessions::read(tenant.as_str(), id, row);
    }

    fn written(tenant: &Tenant, id: &str) {
        crate::writer::read_sessions::forget(tenant.as_str(), id);
    }
}

/// PostgreSQL: every read goes to the database (and takes the row `FOR SHARE`).
impl KeptRows for PgConnection {}

/// SQLite: the writer's transaction holds the write lock; nothing else writes meanwhile.
impl SessionRows for SqliteConnection {
    session_statements!(SESSION, SESSION);

    /// Written only when the writer does not know it committed already
    /// (`writer::noted_holds`).
    fn note_hold(&mut self, tenant: &Tenant, id: &str, hold: &SessionHold) -> QueryResult<usize> {
        let (kind, name) = (hold.kind.as_str(), hold.grant.place.name().as_str());
        if !crate::writer::noted_holds::needs_note(tenant.as_str(), id, kind, name) {
            return Ok(0);
        }
        note_hold(self, tenant, id, kind, name)
    }
}

impl SessionRows for PgConnection {
    session_statements!(POSTGRES_SESSION_SHARED, POSTGRES_SESSION_LOCKED);

    fn note_hold(&mut self, tenant: &Tenant, id: &str, hold: &SessionHold) -> QueryResult<usize> {
        let (kind, name) = (hold.kind.as_str(), hold.grant.place.name().as_str());
        note_hold(self, tenant, id, kind, name)
    }
}

/// Notes that session `id` of `tenant` holds `kind` at `name` (kept when noted already).
fn note_hold<C>(
    conn: &mut C,
    tenant: &Tenant,
    id: &str,
    kind: &str,
    name: &str,
) -> QueryResult<usize>
where
    C: diesel::Connection,
    for<'a> Prepared<'a>: diesel::query_dsl::methods::ExecuteDsl<C>,
{
    Prepared::portable(
        NOTE_HOLD,
        vec![
            Param::Text(tenant.as_str()),
            Param::Text(id),
            Param::Text(kind),
            Param::Text(name),
        ],
    )
    .execute(conn)
}

/// The real ends of the sessions whose holds a read met, read once each.
#[derive(Default)]
pub(crate) struct SessionEnds {
    ends: HashMap<String, i64>,
}

impl SessionEnds {
    /// The real end of a lease whose row says `owner` and `stored_end_ms`: a session's hold ends
    /// with its session (at 0, long ago, when the session is gone).
    pub(crate) fn end_of(
        &mut self,
        rows: &mut dyn SessionRows,
        tenant: &Tenant,
        owner: &str,
        stored_end_ms: i64,
    ) -> QueryResult<i64> {
        if stored_end_ms != HELD || !is_session_holder(owner) {
            return Ok(stored_end_ms);
        }
        let Some(id) = session_of(owner) else {
            return Ok(0);
        };
        if let Some(end) = self.ends.get(id) {
            return Ok(*end);
        }
        let end = rows
            .session(&lock_domain::sessions_tenant(tenant), id)?
            .map_or(0, |session| session.expires_at_ms);
        self.ends.insert(id.to_owned(), end);
        Ok(end)
    }
}

/// Deletes the rows of the holders among `run_out` (holds of sessions that ran out, whose rows
/// still say "while the session lives") at `place` of `tenant`, so that an ending written next
/// (an admin's force-release) records only the live leases as it says; the caller has said
/// `expired` for these. `kind` is `lock` (the exclusive row and readers) or `semaphore`.
pub(crate) fn end_run_out_holds(
    rows: &mut dyn SessionRows,
    tenant: &Tenant,
    kind: &str,
    name: &str,
    run_out: &[&str],
) -> QueryResult<()> {
    let place = PlaceRow {
        kind: kind.to_owned(),
        name: name.to_owned(),
    };
    for holder in run_out {
        rows.end_holds_at(tenant.as_str(), &place, holder)?;
    }
    Ok(())
}

/// What a session operation runs beside the session's rows: each hold's release, by the
/// holders' path of its place, in the same transaction.
pub(crate) trait SessionWrites {
    fn rows(&mut self) -> &mut dyn SessionRows;
    fn now_ms(&mut self) -> QueryResult<i64>;
    /// What the ending of a live lease is until said otherwise (see `history::SayEnding`).
    fn say_ending(
        &mut self,
        ending: Option<lock_domain::HistoryEvent>,
        reason: Option<&str>,
    ) -> QueryResult<()>;
    /// Runs `op` on `tenant`'s leases through the holders of its place.
    fn run(&mut self, tenant: &Tenant, op: LeaseOp) -> Result<LeaseOutcome, RepositoryError>;
}

/// Where session `tenant`'s hold noted in `row` is: its place, and the tenant it is stored in.
fn hold_place(tenant: &Tenant, row: PlaceRow) -> Result<(Tenant, Place), RepositoryError> {
    let name = ResourceName::parse(row.name).map_err(|e| corrupt(format!("name {e}")))?;
    Ok(match row.kind.as_str() {
        "lock" => (tenant.clone(), Place::Lock(name)),
        "election" => (tenant.elections(), Place::Lock(name)),
        _ => (tenant.clone(), Place::Semaphore(name)),
    })
}

/// The live holds of `session`: each place it took a hold of, looked at now.
fn holds(
    writes: &mut dyn SessionWrites,
    tenant: &Tenant,
    session: &Session,
) -> Result<Vec<SessionHold>, RepositoryError> {
    let holder = session.holder();
    let places = writes
        .rows()
        .hold_places(tenant, session.id.as_str())
        .map_err(crate::error::from_query)?;
    let mut holds = Vec::new();
    for row in places {
        let (stored, place) = hold_place(tenant, row)?;
        let holding = writes.run(&stored, LeaseOp::Look(place))?.looked()?;
        holds.extend(
            holding
                .holders
                .into_iter()
                .filter(|grant| grant.lease.owner == holder)
                .map(|grant| SessionHold::of(&stored, grant)),
        );
    }
    holds.sort_by(|a, b| (a.kind, &a.grant.place).cmp(&(b.kind, &b.grant.place)));
    Ok(holds)
}

/// Applies `op` to `tenant`'s sessions, in the caller's transaction.
///
/// # Errors
/// [`RepositoryError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn apply(
    writes: &mut dyn SessionWrites,
    tenant: &Tenant,
    op: SessionOp,
) -> Result<SessionOutcome, RepositoryError> {
    let q = crate::error::from_query;
    // An end locks the session's row first, and reads the clock after it (on PostgreSQL, the
    // server's, which a waiting lock must not make stale).
    let locked = match &op {
        SessionOp::End { id, .. } => {
            Some(writes.rows().lock_session(tenant, id.as_str()).map_err(q)?)
        }
        _ => None,
    };
    let now_ms = writes.now_ms().map_err(q)?;
    let live = |row: Option<SessionRow>| row.filter(|row| row.lives_at(now_ms));
    Ok(match op {
        SessionOp::Open {
            id,
            owner,
            ttl,
            lock_delay,
        } => {
            let ttl_ms = i64::from(ttl.seconds()) * 1_000;
            let row = SessionRow {
                owner: owner.map_or_else(|| id.as_str().to_owned(), Owner::into_string),
                id: id.as_str().to_owned(),
                ttl_ms,
                lock_delay_ms: lock_delay.millis(),
                created_at_ms: now_ms,
                expires_at_ms: now_ms + ttl_ms,
            };
            writes.rows().insert_session(tenant, &row).map_err(q)?;
            SessionOutcome::Opened(row.session()?)
        }
        SessionOp::KeepAlive { id, ttl } => {
            // One statement: a keepalive writes the session's row and nothing else.
            let ttl_ms = ttl.map_or(0, |ttl| i64::from(ttl.seconds()) * 1_000);
            match writes
                .rows()
                .keep_alive(tenant, id.as_str(), ttl_ms, now_ms)
                .map_err(q)?
            {
                Some(row) => SessionOutcome::Kept(row.session()?),
                None => SessionOutcome::NotFound,
            }
        }
        SessionOp::End { id, force } => {
            let Some(row) = live(locked.flatten()) else {
                return Ok(SessionOutcome::NotFound);
            };
            let session = row.session()?;
            let holds = holds(writes, tenant, &session)?;
            let holder = session.holder();
            if let Some(reason) = &force {
                // An admin's end: each hold is recorded force-released, with the reason.
                let ending = Some(lock_domain::HistoryEvent::ForceReleased);
                writes
                    .say_ending(ending, Some(reason.as_str()))
                    .map_err(q)?;
            }
            for hold in &holds {
                let op = LeaseOp::Release {
                    place: hold.grant.place.clone(),
                    owner: holder.clone(),
                };
                writes.run(&hold.stored_tenant(tenant), op)?;
            }
            if force.is_some() {
                writes.say_ending(None, None).map_err(q)?;
            }
            writes
                .rows()
                .delete_hold_places(tenant, id.as_str())
                .map_err(q)?;
            writes
                .rows()
                .delete_session(tenant, id.as_str())
                .map_err(q)?;
            SessionOutcome::Ended { session, holds }
        }
        SessionOp::Look(id) => match live(writes.rows().session(tenant, id.as_str()).map_err(q)?) {
            Some(row) => {
                let session = row.session()?;
                SessionOutcome::Looked {
                    holds: holds(writes, tenant, &session)?,
                    session,
                }
            }
            None => SessionOutcome::NotFound,
        },
    })
}

/// A page of `tenant`'s live sessions, each with its count of live holds.
///
/// # Errors
/// [`RepositoryError`] when a statement fails or a row is corrupt.
pub(crate) fn list(
    writes: &mut dyn SessionWrites,
    tenant: &Tenant,
    query: &SessionQuery,
) -> Result<SessionPage, RepositoryError> {
    let q = crate::error::from_query;
    let now_ms = writes.now_ms().map_err(q)?;
    let mut rows = writes
        .rows()
        .list_sessions(tenant, query, now_ms)
        .map_err(q)?;
    let has_more = rows.len() > query.limit.get();
    rows.truncate(query.limit.get());
    let mut sessions = Vec::with_capacity(rows.len());
    for row in rows {
        let session = row.session()?;
        sessions.push(ListedSession {
            holds: holds(writes, tenant, &session)?.len() as u64,
            session,
        });
    }
    Ok(SessionPage { sessions, has_more })
}

/// Applies `op`, a client's operation that may be made under a session, in the caller's
/// transaction: with no session, `apply(conn, op)`; else the session is read (on PostgreSQL kept
/// from keepalives and ends until the transaction ends) and the operation applied under it as
/// the domain says ([`LeaseOp::with_session`]), each grant noted as a hold of the session and
/// answered with the session's end.
///
/// # Errors
/// [`RepositoryError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn under_session<C: SessionRows>(
    conn: &mut C,
    tenant: &Tenant,
    op: LeaseOp,
    now_ms: impl FnOnce(&mut C) -> QueryResult<i64>,
    apply: impl FnOnce(&mut C, LeaseOp) -> Result<LeaseOutcome, RepositoryError>,
) -> Result<LeaseOutcome, RepositoryError> {
    let q = crate::error::from_query;
    let Some(id) = op.session() else {
        return apply(conn, op);
    };
    let sessions_tenant = lock_domain::sessions_tenant(tenant);
    let row = conn.session(&sessions_tenant, id.as_str()).map_err(q)?;
    let now_ms = now_ms(conn).map_err(q)?;
    let session = row.map(|row| row.session()).transpose()?;
    let op = match op.with_session(session.as_ref(), at(now_ms)?) {
        Ok(op) => op,
        Err(answer) => return Ok(answer),
    };
    let Some(session) = session else {
        return Err(RepositoryError::internal(
            "an operation under no session was applied",
        ));
    };
    let noted = |conn: &mut C, mut grant: Grant| -> Result<Grant, RepositoryError> {
        grant.lease.expires_at = session.expires_at;
        let hold = SessionHold::of(tenant, grant);
        conn.note_hold(&sessions_tenant, id.as_str(), &hold)
            .map_err(q)?;
        Ok(hold.grant)
    };
    Ok(match apply(conn, op)? {
        LeaseOutcome::Granted(grant) => LeaseOutcome::Granted(noted(conn, grant)?),
        LeaseOutcome::GrantedAll(grants) => LeaseOutcome::GrantedAll(
            grants
                .into_iter()
                .map(|grant| noted(conn, grant))
                .collect::<Result<_, _>>()?,
        ),
        LeaseOutcome::Renewed(mut grant) => {
            // A value's change: the hold still ends with its session.
            grant.lease.expires_at = session.expires_at;
            LeaseOutcome::Renewed(grant)
        }
        outcome => outcome,
    })
}

/// Ends up to `batch` sessions that ran out at or before `cutoff_ms` together with their
/// lock-delay: the rows of their holds (recorded `expired`: they ran out with their session),
/// then the session. Returns how many sessions it ended.
///
/// # Errors
/// [`RepositoryError`] when a statement fails or a row is corrupt; the caller rolls back.
pub(crate) fn sweep(
    writes: &mut dyn SessionWrites,
    cutoff_ms: i64,
    batch: i64,
) -> Result<usize, RepositoryError> {
    let q = crate::error::from_query;
    let run_out = writes.rows().run_out(cutoff_ms, batch).map_err(q)?;
    writes
        .say_ending(Some(lock_domain::HistoryEvent::Expired), None)
        .map_err(q)?;
    for session in &run_out {
        let tenant =
            Tenant::parse_stored(&session.tenant).map_err(|e| corrupt(format!("tenant {e}")))?;
        let Some(row) = writes
            .rows()
            .lock_session(&tenant, &session.id)
            .map_err(q)?
        else {
            continue;
        };
        if row.expires_at_ms + row.lock_delay_ms > cutoff_ms {
            continue; // kept alive since it was found
        }
        let holder = row.session()?.holder();
        for place in writes.rows().hold_places(&tenant, &session.id).map_err(q)? {
            let stored = match place.kind.as_str() {
                "election" => tenant.elections(),
                _ => tenant.clone(),
            };
            writes
                .rows()
                .end_holds_at(stored.as_str(), &place, holder.as_str())
                .map_err(q)?;
        }
        writes
            .rows()
            .delete_hold_places(&tenant, &session.id)
            .map_err(q)?;
        writes
            .rows()
            .delete_session(&tenant, &session.id)
            .map_err(q)?;
    }
    writes.say_ending(None, None).map_err(q)?;
    Ok(run_out.len())
}
