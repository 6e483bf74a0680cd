//! The writes on PostgreSQL: [`WRITE_BATCH`] for every acquire, release and renew (batched, or
//! alone as a batch of one), the undo of a grant nobody heard of, and the sweep. Each decides
//! against a "now" read after it holds the row's lock ([`clock_ms`]).
//!
//! There is no single-request statement: a request alone is a batch of one, so the rule is
//! written once in SQL, beside the domain's `decide_*` functions (docs/architecture.md).

use diesel::pg::PgConnection;
use diesel::sql_types::BigInt;
use diesel::{Connection, QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::{
    decide_release, decide_renew, HistoryEvent, LeaseKind, LeaseValue, Lock, LockDelay, Owner,
    Place, ReleaseResult, RenewDecision, RepositoryError, ResourceName, SessionHold, SessionId,
    Tenant, Ttl,
};

use super::reads;
use super::{KeptChanging, MAX_ATTEMPTS};
use crate::error::from_query;
use crate::history::SayEnding;
use crate::outcome::{AcquireRow, ReleaseRow, RenewRow, SweepPosition, Swept};
use crate::prepared::{statement, Param};
use crate::row::LockRow;
use crate::schema::distributed_locks;

/// Ends the grant `($3, $4, $5, $6)` (owner, token, acquired, expires) on `($1, $2)` if it is
/// still exactly that grant, live once its row is locked, and a new grant (a re-grant is left as
/// it is); marked as a release (see [`WRITE_BATCH`]).
const UNDO_GRANT: &str = concat!(
    lock_then_clock!("WHERE d.tenant = $1 AND d.resource = $2"),
    "UPDATE distributed_locks AS l ",
    end_lease!(),
    "
FROM n
WHERE l.tenant = $1 AND l.resource = $2 AND l.owner = $3 AND l.fencing_token = $4
  AND l.acquired_at_ms = $5 AND l.expires_at_ms = $6 AND l.expires_at_ms > n.ms
  AND NOT l.regranted"
);

/// The text of [`WRITE_BATCH`] (`yes, yes, yes`), or of one of its variants without the parts
/// for renews (`$renews`: `no`), for operations under a session (`$sessions`: `no`, and then
/// `$noting`: `no`), or for noting new holds under a session (`$noting`: `no`). A variant is the
/// full statement given what it leaves out empty: each part it drops writes and returns nothing
/// then (with no session, `s` is empty and every operation is under none; with no hold to note,
/// `noted` inserts nothing).
macro_rules! write_batch {
    ($renews:tt, $sessions:tt, $noting:tt) => {
        concat!(
            lock_then_clock!(
                part!(
                    $sessions,
                    "s AS MATERIALIZED (
    SELECT q.tenant, q.resource, s.expires_at_ms
    FROM sessions AS s
    JOIN (SELECT * FROM unnest($1::text[], $2::text[], $16::text[], $17::text[])
          UNION ALL SELECT * FROM unnest($5::text[], $6::text[], $19::text[], $20::text[]))
           AS q(tenant, resource, sessions_tenant, session)
      ON s.tenant = q.sessions_tenant AND s.id = q.session
    ORDER BY s.tenant COLLATE \"C\", s.id COLLATE \"C\" FOR SHARE OF s),
"
                ),
                concat!(
                    "JOIN (SELECT * FROM unnest($1::text[], $2::text[])
          UNION ALL SELECT * FROM unnest($5::text[], $6::text[])",
                    part!(
                        $renews,
                        "
          UNION ALL SELECT * FROM unnest($8::text[], $9::text[])"
                    ),
                    ") AS key(tenant, resource)
      ON d.tenant = key.tenant AND d.resource = key.resource",
                    part!(
                        $sessions,
                        "
    WHERE (SELECT count(*) FROM s) >= 0"
                    )
                )
            ),
            ",
acquired AS (
    INSERT INTO distributed_locks AS l (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token, value, lock_delay_ms)
    SELECT a.tenant, a.resource, a.owner, n.ms, ",
            part!(
                $sessions,
                "CASE WHEN a.session IS NULL THEN n.ms + a.ttl_ms ELSE $15::bigint END",
                "n.ms + a.ttl_ms"
            ),
            ",
           nextval('fencing_tokens'), a.value, a.delay_ms
    FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $12::text[], $14::bigint[]",
            part!($sessions, ", $16::text[], $17::text[]"),
            ")
           AS a(tenant, resource, owner, ttl_ms, value, delay_ms",
            part!($sessions, ", sessions_tenant, session"),
            "), n",
            part!(
                $sessions,
                "
    WHERE a.session IS NULL
       OR EXISTS (SELECT 1 FROM s WHERE s.tenant = a.tenant AND s.resource = a.resource AND s.expires_at_ms > n.ms)"
            ),
            "
    ORDER BY a.tenant COLLATE \"C\", a.resource COLLATE \"C\"
    ",
            acquire_on_conflict!(),
            "
    RETURNING l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value,
              l.xmax <> '0'::xid AS updated),",
            part!(
                $noting,
                "
noted AS (
    INSERT INTO session_holds (tenant, session_id, kind, name)
    SELECT h.sessions_tenant, h.session, h.kind, h.resource
    FROM unnest($1::text[], $2::text[], $16::text[], $17::text[], $18::text[])
           AS h(tenant, resource, sessions_tenant, session, kind)
    JOIN acquired AS g ON g.tenant = h.tenant AND g.resource = h.resource
    WHERE h.session IS NOT NULL AND h.kind IS NOT NULL
    ORDER BY h.sessions_tenant COLLATE \"C\", h.session COLLATE \"C\", h.kind, h.resource COLLATE \"C\"
    ON CONFLICT (tenant, session_id, kind, name) DO NOTHING),"
            ),
            "
released AS (
    UPDATE distributed_locks AS l ",
            end_lease!(),
            "
    FROM unnest($5::text[], $6::text[], $7::text[]",
            part!($sessions, ", $19::text[], $20::text[]"),
            ")
           AS r(tenant, resource, owner",
            part!($sessions, ", sessions_tenant, session"),
            "), n, k
    WHERE l.tenant = r.tenant AND l.resource = r.resource
      AND k.tenant = l.tenant AND k.resource = l.resource AND ",
            live_and_held_by!("r.owner"),
            part!(
                $sessions,
                "
      AND (r.session IS NULL
           OR EXISTS (SELECT 1 FROM s WHERE s.tenant = r.tenant AND s.resource = r.resource AND s.expires_at_ms > n.ms))"
            ),
            "
    RETURNING l.tenant, l.resource, l.owner, k.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value),",
            part!(
                $renews,
                concat!(
                    "
renewed AS (
    UPDATE distributed_locks AS l SET expires_at_ms = n.ms + r.ttl_ms, value = COALESCE(r.value, l.value)
    FROM unnest($8::text[], $9::text[], $10::text[], $11::bigint[], $13::text[]) AS r(tenant, resource, owner, ttl_ms, value), n
    WHERE l.tenant = r.tenant AND l.resource = r.resource AND ",
                    live_and_held_by!("r.owner"),
                    "
    RETURNING l.tenant, l.resource, l.owner, l.acquired_at_ms, l.expires_at_ms, l.fencing_token, l.value),"
                )
            ),
            "
",
            batch_records!($renews),
            "
SELECT g.tenant, g.resource, g.owner, g.acquired_at_ms, ",
            part!(
                $sessions,
                "COALESCE(e.expires_at_ms, g.expires_at_ms) AS expires_at_ms",
                "g.expires_at_ms"
            ),
            ",
       g.fencing_token, g.value
FROM acquired AS g",
            part!(
                $sessions,
                "
LEFT JOIN s AS e ON e.tenant = g.tenant AND e.resource = g.resource"
            ),
            "
UNION ALL SELECT * FROM released",
            part!($renews, " UNION ALL SELECT * FROM renewed")
        )
    };
}
/// Acquires ($1–$4: tenants, resources, owners, TTLs in ms; $12 their values, NULL for none; $14
/// their lock-delays in ms),
/// releases ($5–$7: tenants, resources, owners) and renews ($8–$11, as acquires; $13 their
/// values) of many requests as one statement, so one round trip and one commit. Per row:
/// - an acquire is the compare-and-set `INSERT … ON CONFLICT DO UPDATE … WHERE`: under READ
///   COMMITTED, `ON CONFLICT DO UPDATE` locks the conflicting row and evaluates the `WHERE` on
///   its newest version, so of two callers racing for one expired lock the second sees the
///   first's grant and gets no row back; a same-owner acquire keeps the token (and, unless given
///   a new one, the value) only of a lease that is live when the row is locked;
/// - an acquire or release under a session (`$16`, `$17`: the tenant of its sessions and its id,
///   `$19`, `$20` for releases; NULL under none) is made by the session's holder, and writes
///   only while that session is live at `n.ms`: `s` keeps every session of the batch from
///   keepalives and ends (`FOR SHARE`, which they take `FOR UPDATE`) before `k` locks any lock
///   row, in the order every writer takes sessions. It has a row per operation under a session
///   (the operation's lock, its session's end; a key is in a batch once), so that each
///   operation finds its session's end by its own key. Its grant's row ends with the session:
///   `$15` (`sessions::HELD`), as `sessions::stored_end` writes it, and the row returned says
///   the session's end (from `s`). Each hold granted is noted in `session_holds` (`noted`,
///   `$18`: its kind, NULL for a note the batcher knows committed), as
///   `sessions::under_session` notes one;
/// - a release ends the caller's live lease. The row stays (expired) so that the next grant
///   draws its token under the row lock; the sweeper deletes it later. `acquired_at_ms =
///   expires_at_ms` marks the lease as ended by release (a lease that runs out is at least a
///   second long), so that the expired-takeover trigger (migration 4) does not count the next
///   owner's grant; the row returned carries the lease's own `acquired_at_ms` (from `k`), from
///   which its hold is measured;
/// - a renew moves the end of the caller's live lease to its TTL from now, and replaces its value
///   when given one.
///
/// A key (tenant, resource) may appear only once in the whole batch: `ON CONFLICT
/// DO UPDATE` cannot touch a row twice, and the sub-statements share one snapshot, so none may
/// depend on another's effect. First `k` locks every existing row of the batch in key order
/// (so batches of two instances lock in the same order), then `n` reads the clock; releases and
/// renews decide against it, acquires of existing rows against a clock read once their row is
/// locked. A deadlock that happens anyway aborts the whole statement, which then changed
/// nothing. Writes the history records of its changes itself, in the same statement
/// ([`batch_records`]; an acquire's `updated` says whether it took over an existing row). Returns
/// the granted, released and renewed rows, each with its tenant.
pub const WRITE_BATCH: &str = Variant::Full.text();

/// [`WRITE_BATCH`] and its variants, each for the batches whose operations need no more than its
/// parts (see [`write_batch`]): with renews or not, with operations under a session (noting new
/// holds, or none) or none. PostgreSQL sets up the whole plan of a statement on every execution,
/// its empty parts too (a few microseconds each), so a batch runs as the smallest that makes all
/// of its operations ([`write_batch`]). They take the same parameters, and a variant leaves the
/// ones of its missing parts unread.
pub const WRITE_BATCHES: [&str; 6] = [
    Variant::Full.text(),
    Variant::RenewsUnderSessions.text(),
    Variant::Renews.text(),
    Variant::Noting.text(),
    Variant::UnderSessions.text(),
    Variant::Locks.text(),
];

/// A variant of the batch statement, by the parts it has: the one of [`WRITE_BATCHES`] a batch
/// runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Every part: [`WRITE_BATCH`].
    Full,
    /// Renews, and operations under a session with no new hold to note.
    RenewsUnderSessions,
    /// Renews, and no operation under a session.
    Renews,
    /// No renews; operations under a session, some of them noting a new hold.
    Noting,
    /// No renews; operations under a session, none of them noting a new hold.
    UnderSessions,
    /// Acquires and releases under no session.
    Locks,
}

impl Variant {
    /// Its text: `write_batch!` with the parts it has.
    pub(crate) const fn text(self) -> &'static str {
        match self {
            Self::Full => write_batch!(yes, yes, yes),
            Self::RenewsUnderSessions => write_batch!(yes, yes, no),
            Self::Renews => write_batch!(yes, no, no),
            Self::Noting => write_batch!(no, yes, yes),
            Self::UnderSessions => write_batch!(no, yes, no),
            Self::Locks => write_batch!(no, no, no),
        }
    }

    /// The smallest variant for a batch with renews or not (`renewing`), operations under a
    /// session or not (`under_sessions`), and new holds to note or not (`noting`, only under a
    /// session): the parts it leaves out would write and return nothing for that batch.
    fn smallest(renewing: bool, under_sessions: bool, noting: bool) -> Self {
        match (renewing, under_sessions, noting) {
            (true, _, true) => Self::Full,
            (true, true, false) => Self::RenewsUnderSessions,
            (true, false, false) => Self::Renews,
            (false, _, true) => Self::Noting,
            (false, true, false) => Self::UnderSessions,
            (false, false, false) => Self::Locks,
        }
    }
}

/// One step of a sweep pass: deletes up to `$2` rows whose lease ended more than `$1` ms ago
/// among the table pages `[$3, $4)` (a TID range scan: the expiry column has no index, so that
/// every write is a HOT update in place, migration 7), and returns how many it deleted with the
/// table's size in pages. Rows that a concurrent write holds locked are skipped, and locked rows
/// are re-checked against their newest version; the delete goes by the `ctid` of the version
/// locked, which a version committed after the statement's snapshot does not match (that row
/// waits for the next pass).
const SWEEP: &str = "\
WITH swept AS (
    DELETE FROM distributed_locks WHERE ctid = ANY (ARRAY(
        SELECT ctid FROM distributed_locks
        WHERE ctid >= ('(' || $3 || ',0)')::tid AND ctid < ('(' || $4 || ',0)')::tid
          AND expires_at_ms + lock_delay_ms <= FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT - $1
        LIMIT $2
        FOR UPDATE SKIP LOCKED))
    RETURNING 1)
SELECT (SELECT count(*) FROM swept) AS deleted,
       pg_relation_size('distributed_locks') / current_setting('block_size')::BIGINT AS pages";

/// Table pages one sweep step reads at most: 1 MiB at PostgreSQL's default 8 KiB pages.
const SWEEP_PAGES: u64 = 128;

/// One write, on the key it is made for.
#[derive(Debug, Clone)]
pub(crate) enum Operation {
    Acquire {
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
        lock_delay: LockDelay,
    },
    Release {
        owner: Owner,
    },
    Renew {
        owner: Owner,
        ttl: Ttl,
        value: Option<LeaseValue>,
    },
}

/// A row that [`WRITE_BATCH`] wrote, with its tenant (the key that tells whose write it was).
#[derive(Debug, QueryableByName)]
#[diesel(table_name = distributed_locks)]
pub(crate) struct BatchRow {
    pub tenant: String,
    #[diesel(embed)]
    pub lock: LockRow,
}

/// Runs `operations` as one statement ([`WRITE_BATCH`], or the smallest of its variants that
/// makes them all, [`WRITE_BATCHES`]): the rows it granted, released and renewed. Every key must
/// appear at most once. An acquire under a session marked noted (a committed statement noted its
/// hold already) is not noted again.
pub(crate) fn write_batch<'a>(
    conn: &mut PgConnection,
    operations: impl IntoIterator<Item = (&'a Tenant, &'a ResourceName, &'a Operation, Noted)>,
) -> QueryResult<Vec<BatchRow>> {
    write_batch_as(conn, operations, None)
}

/// [`write_batch`] as `variant` when given (a test's: it must have every part the operations
/// need), else as the smallest variant that makes them all.
fn write_batch_as<'a>(
    conn: &mut PgConnection,
    operations: impl IntoIterator<Item = (&'a Tenant, &'a ResourceName, &'a Operation, Noted)>,
    variant: Option<Variant>,
) -> QueryResult<Vec<BatchRow>> {
    let mut acquires = Columns::default();
    let mut releases = Columns::default();
    let mut renews = Columns::default();
    for (tenant, resource, operation, noted) in operations {
        match operation {
            Operation::Acquire {
                owner,
                ttl,
                value,
                lock_delay,
            } => {
                acquires.push(tenant, resource, owner, Some((*ttl, value.as_ref())));
                acquires.delays_ms.push(lock_delay.millis());
                let hold = SessionHoldAt::of(tenant, resource, owner);
                acquires
                    .sessions
                    .0
                    .push(hold.map(|hold| (hold, noted == Noted::No)));
            }
            Operation::Release { owner } => {
                releases.push(tenant, resource, owner, None);
                let hold = SessionHoldAt::of(tenant, resource, owner);
                releases.sessions.0.push(hold.map(|hold| (hold, false)));
            }
            Operation::Renew { owner, ttl, value } => {
                renews.push(tenant, resource, owner, Some((*ttl, value.as_ref())))
            }
        }
    }
    let (sessions_tenants, session_ids, kinds) = (
        acquires.sessions.tenants(),
        acquires.sessions.ids(),
        acquires.sessions.kinds(),
    );
    let (released_sessions_tenants, released_session_ids) =
        (releases.sessions.tenants(), releases.sessions.ids());
    let params = vec![
        Param::TextArray(&acquires.tenants),
        Param::TextArray(&acquires.resources),
        Param::TextArray(&acquires.owners),
        Param::BigIntArray(&acquires.ttls_ms),
        Param::TextArray(&releases.tenants),
        Param::TextArray(&releases.resources),
        Param::TextArray(&releases.owners),
        Param::TextArray(&renews.tenants),
        Param::TextArray(&renews.resources),
        Param::TextArray(&renews.owners),
        Param::BigIntArray(&renews.ttls_ms),
        Param::NullableTextArray(&acquires.values),
        Param::NullableTextArray(&renews.values),
        Param::BigIntArray(&acquires.delays_ms),
        Param::BigInt(crate::sessions::HELD),
        Param::NullableTextArray(&sessions_tenants),
        Param::NullableTextArray(&session_ids),
        Param::NullableTextArray(&kinds),
        Param::NullableTextArray(&released_sessions_tenants),
        Param::NullableTextArray(&released_session_ids),
    ];
    macro_rules! run {
        ($variant:expr) => {
            statement!($variant.text(), params).load::<BatchRow>(conn)
        };
    }
    let smallest = Variant::smallest(
        !renews.tenants.is_empty(),
        acquires.sessions.any() || releases.sessions.any(),
        kinds.iter().any(Option::is_some),
    );
    match variant.unwrap_or(smallest) {
        Variant::Full => run!(Variant::Full),
        Variant::RenewsUnderSessions => run!(Variant::RenewsUnderSessions),
        Variant::Renews => run!(Variant::Renews),
        Variant::Noting => run!(Variant::Noting),
        Variant::UnderSessions => run!(Variant::UnderSessions),
        Variant::Locks => run!(Variant::Locks),
    }
}

/// One kind of write of a batch, as the columns [`WRITE_BATCH`] takes (releases leave `ttls_ms`
/// and `values` empty).
#[derive(Default)]
struct Columns<'a> {
    tenants: Vec<&'a str>,
    resources: Vec<&'a str>,
    owners: Vec<&'a str>,
    ttls_ms: Vec<i64>,
    values: Vec<Option<&'a str>>,
    /// Acquires only: their lock-delays.
    delays_ms: Vec<i64>,
    /// Acquires and releases: the session each is made under, if any.
    sessions: Sessions,
}

/// Whether a committed statement noted the hold an acquire under a session would make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Noted {
    Yes,
    No,
}

/// The hold an operation by `owner` on a lock makes or ends, when `owner` is a session's
/// holder: the tenant of its sessions, the session, the kind of hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SessionHoldAt {
    pub sessions_tenant: Tenant,
    pub id: SessionId,
    pub kind: LeaseKind,
}

impl SessionHoldAt {
    /// The hold of `owner` on `tenant`'s lock `resource`; `None` when `owner` is no session's.
    pub(crate) fn of(tenant: &Tenant, resource: &ResourceName, owner: &Owner) -> Option<Self> {
        owner.session().map(|id| Self {
            sessions_tenant: lock_domain::sessions_tenant(tenant),
            id,
            kind: SessionHold::kind_at(tenant, &Place::Lock(resource.clone())),
        })
    }
}

/// The session each operation of one kind is made under (its holder is the session's), for
/// [`WRITE_BATCH`]'s `$16`–`$20`: the tenant of its sessions, its id, and the kind of hold it
/// takes when it is still to be noted; `None` for an operation under no session.
#[derive(Default)]
struct Sessions(Vec<Option<(SessionHoldAt, bool)>>);

impl Sessions {
    /// Whether any operation is under a session.
    fn any(&self) -> bool {
        self.0.iter().any(Option::is_some)
    }

    fn tenants(&self) -> Vec<Option<&str>> {
        self.0
            .iter()
            .map(|s| s.as_ref().map(|(hold, _)| hold.sessions_tenant.as_str()))
            .collect()
    }

    fn ids(&self) -> Vec<Option<&str>> {
        self.0
            .iter()
            .map(|s| s.as_ref().map(|(hold, _)| hold.id.as_str()))
            .collect()
    }

    /// The kind of each hold still to be noted.
    fn kinds(&self) -> Vec<Option<&str>> {
        self.0
            .iter()
            .map(|s| match s {
                Some((hold, true)) => Some(hold.kind.as_str()),
                _ => None,
            })
            .collect()
    }
}

impl<'a> Columns<'a> {
    fn push(
        &mut self,
        tenant: &'a Tenant,
        resource: &'a ResourceName,
        owner: &'a Owner,
        lease: Option<(Ttl, Option<&'a LeaseValue>)>,
    ) {
        self.tenants.push(tenant.as_str());
        self.resources.push(resource.as_str());
        self.owners.push(owner.as_str());
        if let Some((ttl, value)) = lease {
            self.ttls_ms.push(i64::from(ttl.seconds()) * 1_000);
            self.values.push(value.map(LeaseValue::as_str));
        }
    }
}

/// Runs `operation` alone, as [`WRITE_BATCH`] of one: the row it wrote, if any.
fn write_one(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    operation: &Operation,
) -> QueryResult<Option<LockRow>> {
    Ok(
        write_batch(conn, [(tenant, resource, operation, Noted::No)])?
            .pop()
            .map(|row| row.lock),
    )
}

/// One acquire, alone: the granted row, or `None` when another owner's lease is live.
pub(crate) fn acquire(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
    lock_delay: LockDelay,
) -> QueryResult<AcquireRow> {
    let acquire = Operation::Acquire {
        owner: owner.clone(),
        ttl,
        value,
        lock_delay,
    };
    write_one(conn, tenant, resource, &acquire).map(AcquireRow::from)
}

/// Whether the grant was still exactly as made, and is now ended.
pub(crate) fn undo_grant(
    conn: &mut PgConnection,
    tenant: &Tenant,
    grant: &Lock,
) -> QueryResult<bool> {
    // In a transaction (a savepoint inside one): what the history is told lasts until it ends.
    conn.transaction(|conn| {
        conn.with_ending(HistoryEvent::Undone, None, |conn| {
            statement!(
                UNDO_GRANT,
                vec![
                    Param::Text(tenant.as_str()),
                    Param::Text(grant.resource.as_str()),
                    Param::Text(grant.owner.as_str()),
                    Param::BigInt(grant.fencing_token.value()),
                    Param::BigInt(grant.acquired_at.timestamp_millis()),
                    Param::BigInt(crate::sessions::stored_end(
                        grant.owner.as_str(),
                        grant.expires_at.timestamp_millis(),
                    )),
                ],
            )
            .execute(conn)
            .map(|rows| rows > 0)
        })
    })
}

/// Why a release or renew wrote nothing, as the live lock read afterwards shows.
pub(crate) enum Miss {
    NotFound,
    Forbidden,
    /// The caller's own lock is live now (granted concurrently): run the write again.
    Retry,
}

/// Reads the live lock after `operation` (a release or renew) wrote nothing, waiting for a
/// writer in flight on it, and lets the domain decide the operation against it.
///
/// # Errors
/// When the read fails, the row is corrupt, or `operation` is an acquire (which never misses).
pub(crate) fn classify_miss(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    operation: &Operation,
) -> Result<Miss, RepositoryError> {
    let Some(seen) = reads::status_seen(conn, tenant, resource).map_err(from_query)? else {
        return Ok(Miss::NotFound);
    };
    let (live, now) = seen.into_domain()?;
    Ok(match operation {
        Operation::Release { owner } => match decide_release(Some(&live), owner, now) {
            ReleaseResult::Released(_) => Miss::Retry,
            ReleaseResult::NotFound => Miss::NotFound,
            ReleaseResult::Forbidden => Miss::Forbidden,
        },
        Operation::Renew { owner, .. } => match decide_renew(Some(&live), owner, now) {
            RenewDecision::Renew => Miss::Retry,
            RenewDecision::NotFound => Miss::NotFound,
            RenewDecision::Forbidden => Miss::Forbidden,
        },
        Operation::Acquire { .. } => {
            return Err(RepositoryError::internal(
                "an acquire has no miss to classify",
            ))
        }
    })
}

/// One release, alone; when it matched nothing, a read afterwards tells 403 from 404.
pub(crate) fn release(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
) -> Result<ReleaseRow, RepositoryError> {
    let release = Operation::Release {
        owner: owner.clone(),
    };
    for _ in 0..MAX_ATTEMPTS {
        let released = write_one(conn, tenant, resource, &release).map_err(from_query)?;
        if let Some(row) = released {
            return Ok(ReleaseRow::Released(row));
        }
        match classify_miss(conn, tenant, resource, &release)? {
            Miss::NotFound => return Ok(ReleaseRow::NotFound),
            Miss::Forbidden => return Ok(ReleaseRow::Forbidden),
            Miss::Retry => {}
        }
    }
    Err(RepositoryError::unavailable(KeptChanging))
}

/// One renew, alone; when it matched nothing, a read afterwards tells 403 from 404.
pub(crate) fn renew(
    conn: &mut PgConnection,
    tenant: &Tenant,
    resource: &ResourceName,
    owner: &Owner,
    ttl: Ttl,
    value: Option<LeaseValue>,
) -> Result<RenewRow, RepositoryError> {
    let renew = Operation::Renew {
        owner: owner.clone(),
        ttl,
        value,
    };
    for _ in 0..MAX_ATTEMPTS {
        let renewed = write_one(conn, tenant, resource, &renew).map_err(from_query)?;
        if let Some(row) = renewed {
            return Ok(RenewRow::Renewed(row));
        }
        match classify_miss(conn, tenant, resource, &renew)? {
            Miss::NotFound => return Ok(RenewRow::NotFound),
            Miss::Forbidden => return Ok(RenewRow::Forbidden),
            Miss::Retry => {}
        }
    }
    Err(RepositoryError::unavailable(KeptChanging))
}

/// One step of a sweep pass from `from` (a page number): see [`SWEEP`]. The pass stays on
/// the same pages while a step deletes a full batch, and is done once a step has reached the
/// table's last page.
pub(crate) fn sweep(
    conn: &mut PgConnection,
    grace_ms: i64,
    batch: u32,
    from: SweepPosition,
) -> QueryResult<Swept> {
    let SweepPosition(first) = from;
    let end = first.saturating_add(SWEEP_PAGES);
    let step = statement!(
        SWEEP,
        vec![
            Param::BigInt(grace_ms),
            Param::BigInt(i64::from(batch)),
            Param::BigInt(i64::try_from(first).unwrap_or(i64::MAX)),
            Param::BigInt(i64::try_from(end).unwrap_or(i64::MAX)),
        ],
    )
    .get_result::<SweepRow>(conn)?;
    let deleted = usize::try_from(step.deleted).unwrap_or(0);
    let next = if deleted >= batch as usize {
        Some(from)
    } else if i64::try_from(end).is_ok_and(|end| end < step.pages) {
        Some(SweepPosition(end))
    } else {
        None
    };
    Ok(Swept { deleted, next })
}

/// What a [`SWEEP`] step reports.
#[derive(QueryableByName)]
struct SweepRow {
    #[diesel(sql_type = BigInt)]
    deleted: i64,
    #[diesel(sql_type = BigInt)]
    pages: i64,
}

#[cfg(test)]
mod tests;
