//! Each variant of the batch statement answers and writes exactly as the full statement does, for
//! every kind of batch that runs as it: the same rows returned, the same locks, holds and history
//! records left (tokens compared as kept or new, times as lease lengths).

use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::pg::PgConnection;
use diesel::result::Error as DieselError;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, Text};
use diesel::{Connection, QueryableByName, RunQueryDsl};
use lock_domain::testing::ManualClock;
use lock_domain::{LeaseValue, LockDelay, Owner, ResourceName, SessionId, Tenant, Ttl};

use super::{write_batch_as, Noted, Operation, Variant};
use crate::testing::{open_store, TestDatabase};
use crate::{DatabaseUrl, StoreConfig};

/// The seeded tokens are below this; every token a batch draws is above it.
const SEEDED_TOKENS: i64 = 1_000;

/// A live session, and one that has run out.
const LIVE: &str = "LiveSessionAAAAAAAAAAA";
const ENDED: &str = "EndedSessionBBBBBBBBBB";

#[derive(Debug, PartialEq, Eq, QueryableByName)]
struct LockState {
    #[diesel(sql_type = Text)]
    resource: String,
    #[diesel(sql_type = Text)]
    owner: String,
    /// `expires_at_ms - acquired_at_ms`, -1 for a row that ends with its session, or -2 for one
    /// renewed (its length depends on when).
    #[diesel(sql_type = BigInt)]
    length_ms: i64,
    /// The seeded token, or 0 for one a batch drew.
    #[diesel(sql_type = BigInt)]
    token: i64,
    #[diesel(sql_type = Nullable<Text>)]
    value: Option<String>,
    #[diesel(sql_type = BigInt)]
    lock_delay_ms: i64,
    #[diesel(sql_type = Bool)]
    regranted: bool,
}

#[derive(Debug, PartialEq, Eq, QueryableByName)]
struct Hold {
    #[diesel(sql_type = Text)]
    session_id: String,
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(Debug, PartialEq, Eq, QueryableByName)]
struct Records {
    #[diesel(sql_type = Array<Text>)]
    names: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    owners: Vec<String>,
    #[diesel(sql_type = Array<Text>)]
    events: Vec<String>,
}

/// What a batch answered and left, in a form that does not depend on when it ran.
#[derive(Debug, PartialEq, Eq)]
struct Observed {
    /// Per row returned: tenant, resource, owner, lease length (-1: ends with the live
    /// session, whose end it says; -2: a release's time held), token kept or new, value.
    returned: Vec<(String, String, String, i64, bool, Option<String>)>,
    locks: Vec<LockState>,
    holds: Vec<Hold>,
    records: Vec<Records>,
}

fn op_acquire(owner: &Owner, value: Option<&str>) -> Operation {
    Operation::Acquire {
        owner: owner.clone(),
        ttl: Ttl::parse(30, 3_600).unwrap(),
        value: value.map(|v| LeaseValue::parse(v.to_owned()).unwrap()),
        lock_delay: LockDelay::NONE,
    }
}

fn op_release(owner: &Owner) -> Operation {
    Operation::Release {
        owner: owner.clone(),
    }
}

fn op_renew(owner: &Owner) -> Operation {
    Operation::Renew {
        owner: owner.clone(),
        ttl: Ttl::parse(60, 3_600).unwrap(),
        value: Some(LeaseValue::parse("\"renewed\"".to_owned()).unwrap()),
    }
}

fn owner(name: &str) -> Owner {
    Owner::parse(name).unwrap()
}

fn under(session: &str) -> Owner {
    let id = SessionId::parse(session).unwrap();
    Owner::session_holder(&id, &owner("worker"))
}

/// Locks held, expired and held under the live session, and the two sessions.
fn seed(conn: &mut PgConnection) {
    let now = "FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT";
    let live_holder = under(LIVE);
    let ended_holder = under(ENDED);
    conn.batch_execute(&format!(
        "INSERT INTO sessions (tenant, id, owner, ttl_ms, lock_delay_ms, created_at_ms, expires_at_ms)
         VALUES ('default', '{LIVE}', 'worker', 3600000, 0, {now}, {now} + 3600000),
                ('default', '{ENDED}', 'worker', 1000, 0, {now} - 60000, {now} - 59000);
         INSERT INTO distributed_locks (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
         VALUES ('default', 'held', 'o1', {now}, {now} + 600000, 1),
                ('default', 'held-2', 'o1', {now}, {now} + 600000, 2),
                ('default', 'held-3', 'o1', {now}, {now} + 600000, 3),
                ('default', 'held-4', 'o1', {now}, {now} + 600000, 7),
                ('default', 'expired', 'o2', {now} - 60000, {now} - 30000, 4),
                ('default', 'under-live', '{live}', {now}, {HELD}, 5),
                ('default', 'under-ended', '{ended}', {now} - 60000, {HELD}, 6);
         INSERT INTO session_holds (tenant, session_id, kind, name)
         VALUES ('default', '{LIVE}', 'lock', 'under-live'),
                ('default', '{ENDED}', 'lock', 'under-ended');",
        live = live_holder.as_str(),
        ended = ended_holder.as_str(),
        HELD = crate::sessions::HELD,
    ))
    .expect("seed");
}

/// Runs `ops` as `variant` in a transaction that is then rolled back, and what it
/// answered and left.
fn observe(
    conn: &mut PgConnection,
    ops: &[(Tenant, ResourceName, Operation, Noted)],
    variant: Variant,
) -> Observed {
    let mut observed = None;
    let rolled_back = conn.transaction::<(), DieselError, _>(|conn| {
        let rows = write_batch_as(
            conn,
            ops.iter()
                .map(|(tenant, resource, op, noted)| (tenant, resource, op, *noted)),
            Some(variant),
        )?;
        #[derive(QueryableByName)]
        struct End {
            #[diesel(sql_type = BigInt)]
            expires_at_ms: i64,
        }
        let live_end = diesel::sql_query(format!(
            "SELECT expires_at_ms FROM sessions WHERE id = '{LIVE}'"
        ))
        .get_result::<End>(conn)?
        .expires_at_ms;
        let mut returned: Vec<_> = rows
            .into_iter()
            .map(|row| {
                let lock = row.lock;
                // A released row says how long it was held (until the clock the statement
                // read): -2 for any length other than a TTL.
                let length = match lock.expires_at_ms - lock.acquired_at_ms {
                    _ if lock.expires_at_ms == live_end => -1,
                    ttl @ (30_000 | 60_000) => ttl,
                    _ => -2,
                };
                (
                    row.tenant,
                    lock.resource,
                    lock.owner,
                    length,
                    lock.fencing_token < SEEDED_TOKENS,
                    lock.value,
                )
            })
            .collect();
        returned.sort();
        let locks = diesel::sql_query(format!(
            "SELECT resource, owner,
                    CASE WHEN expires_at_ms = {held} THEN -1
                         WHEN expires_at_ms - acquired_at_ms IN (0, 30000, 600000)
                             THEN expires_at_ms - acquired_at_ms
                         ELSE -2 END AS length_ms,
                    CASE WHEN fencing_token < {SEEDED_TOKENS} THEN fencing_token ELSE 0 END AS token,
                    value, lock_delay_ms, regranted
             FROM distributed_locks ORDER BY resource",
            held = crate::sessions::HELD,
        ))
        .load::<LockState>(conn)?;
        let holds = diesel::sql_query(
            "SELECT session_id, kind, name FROM session_holds ORDER BY session_id, kind, name",
        )
        .load::<Hold>(conn)?;
        let records = diesel::sql_query(
            "SELECT names, owners, events FROM history_batches ORDER BY first_id",
        )
        .load::<Records>(conn)?;
        observed = Some(Observed {
            returned,
            locks,
            holds,
            records,
        });
        Err(DieselError::RollbackTransaction)
    });
    assert!(matches!(rolled_back, Err(DieselError::RollbackTransaction)));
    observed.expect("observed")
}

/// A database with lockd's schema and [`seed`]'s rows (tokens drawn from above the seeded ones),
/// and a connection to it; `None` without PostgreSQL.
async fn seeded() -> Option<(TestDatabase, PgConnection)> {
    let db = TestDatabase::postgres()?;
    // The schema, as lockd opens it.
    drop(
        open_store(
            StoreConfig::new(db.url().clone()),
            Arc::new(ManualClock::new()),
        )
        .await,
    );
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!("a PostgreSQL database")
    };
    let mut conn = PgConnection::establish(url).expect("connect");
    conn.batch_execute(&format!("SELECT setval('fencing_tokens', {SEEDED_TOKENS})"))
        .expect("tokens above the seeded ones");
    seed(&mut conn);
    Some((db, conn))
}

/// `op` on the default tenant's lock `name`.
fn with(name: &str, op: Operation, noted: Noted) -> (Tenant, ResourceName, Operation, Noted) {
    (
        Tenant::default_tenant(),
        ResourceName::parse(name).unwrap(),
        op,
        noted,
    )
}

/// Under sessions: a grant under the live one, one under the ended one (refused), each noted
/// as `noted` says, and a release under each.
fn sessions(noted: Noted) -> Vec<(Tenant, ResourceName, Operation, Noted)> {
    vec![
        with("session-new", op_acquire(&under(LIVE), None), noted),
        with("session-refused", op_acquire(&under(ENDED), None), noted),
        with("under-live", op_release(&under(LIVE)), Noted::Yes),
        with("under-ended", op_release(&under(ENDED)), Noted::Yes),
    ]
}

#[tokio::test]
async fn every_variant_makes_its_batches_as_the_full_statement_does() {
    let Some((_db, mut conn)) = seeded().await else {
        return;
    };
    // Plain acquires (new, refused, taking over an expired lease, with a value), releases (by the
    // holder, by another owner) and a re-grant.
    let locks = vec![
        with("new", op_acquire(&owner("o3"), Some("\"v\"")), Noted::Yes),
        with("held", op_acquire(&owner("o4"), None), Noted::Yes),
        with(
            "held-4",
            op_acquire(&owner("o1"), Some("\"again\"")),
            Noted::Yes,
        ),
        with("expired", op_acquire(&owner("o5"), None), Noted::Yes),
        with("held-2", op_release(&owner("o1")), Noted::Yes),
        with("absent", op_release(&owner("o1")), Noted::Yes),
    ];
    let renews = vec![
        with("held-3", op_renew(&owner("o1")), Noted::Yes),
        with("under-live", op_renew(&owner("o9")), Noted::Yes),
    ];
    let batch = |parts: &[&Vec<(Tenant, ResourceName, Operation, Noted)>]| -> Vec<_> {
        parts.iter().flat_map(|part| part.iter().cloned()).collect()
    };
    let noting = sessions(Noted::No);
    let noted = sessions(Noted::Yes);
    let renews_only_plain = vec![with("held-3", op_renew(&owner("o1")), Noted::Yes)];
    let cases = [
        (batch(&[&locks]), Variant::Locks),
        (batch(&[&locks, &renews_only_plain]), Variant::Renews),
        (batch(&[&locks, &noted]), Variant::UnderSessions),
        (batch(&[&locks, &noting]), Variant::Noting),
        (
            batch(&[&locks, &renews, &noted]),
            Variant::RenewsUnderSessions,
        ),
        (batch(&[&locks, &renews, &noting]), Variant::Full),
        // Only one kind of write at a time.
        (batch(&[&renews_only_plain]), Variant::Renews),
        (batch(&[&noted]), Variant::UnderSessions),
    ];
    for (ops, expected) in cases {
        let renewing = ops
            .iter()
            .any(|(_, _, op, _)| matches!(op, Operation::Renew { .. }));
        let under_sessions = ops.iter().any(|(_, _, op, _)| match op {
            Operation::Acquire { owner, .. }
            | Operation::Release { owner }
            | Operation::Renew { owner, .. } => owner.session().is_some(),
        });
        let to_note = ops.iter().any(|(_, _, op, noted)| {
            matches!(op, Operation::Acquire { owner, .. } if owner.session().is_some())
                && *noted == Noted::No
        });
        assert_eq!(
            Variant::smallest(renewing, under_sessions, to_note),
            expected,
            "{ops:?}"
        );
        let full = observe(&mut conn, &ops, Variant::Full);
        let smallest = observe(&mut conn, &ops, expected);
        assert_eq!(smallest, full, "{expected:?}: {ops:?}");
        // The batch did something worth comparing.
        assert!(!full.returned.is_empty(), "{ops:?}");
        assert!(!full.records.is_empty(), "{ops:?}");
        // The holder's acquire of held-4 is a re-grant: its token kept, its value replaced.
        let regranting = ops
            .iter()
            .any(|(_, resource, _, _)| resource.as_str() == "held-4");
        assert!(
            !regranting
                || full.locks.iter().any(|lock| lock.resource == "held-4"
                    && lock.token == 7
                    && lock.regranted
                    && lock.value.as_deref() == Some("\"again\"")),
            "{full:?}"
        );
    }
}

/// What each operation under a session made, spelt out: every variant shares the sessions'
/// parts of the statement, so the comparison with the full statement cannot catch a mistake in
/// them. In one batch, each operation is decided on its own session (the live and the ended
/// one), and a grant returned says its session's end.
#[tokio::test]
async fn each_operation_under_a_session_is_decided_on_its_own_session() {
    let Some((_db, mut conn)) = seeded().await else {
        return;
    };
    let made = observe(&mut conn, &sessions(Noted::No), Variant::Full);
    let returned = |name: &str| -> Vec<_> {
        made.returned
            .iter()
            .filter(|row| row.1 == name)
            .map(|row| (row.2.clone(), row.3, row.4))
            .collect()
    };
    let live_holder = under(LIVE).as_str().to_owned();
    assert_eq!(
        returned("session-new"),
        [(live_holder.clone(), -1, false)],
        "granted, a new token, ending with the live session: {made:?}"
    );
    assert_eq!(returned("session-refused"), [], "{made:?}");
    assert_eq!(
        returned("under-live"),
        [(live_holder, -2, true)],
        "released, the hold's token: {made:?}"
    );
    assert_eq!(returned("under-ended"), [], "{made:?}");
    assert!(
        made.locks.iter().any(|lock| lock.resource == "under-ended"
            && lock.owner == under(ENDED).as_str()
            && lock.length_ms == -1),
        "the ended session's hold is left as it was: {made:?}"
    );
    assert!(
        made.holds.iter().any(|hold| hold.name == "session-new"),
        "the new hold noted: {made:?}"
    );
}
