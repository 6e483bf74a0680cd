//! On PostgreSQL a release under a session is decided on the session's newest state. A keepalive
//! that shortened the session, so that the session has ended by the time the release decides,
//! and that has not committed yet, holds the release back; the release then finds the hold
//! ended and releases nothing. A batch statement that read the session without locking its row
//! would decide on its snapshot, from before the keepalive, and release a hold that the
//! keepalive's answer says had already ended (docs/benchmarks.md, the sessions' part of the
//! batch statement).

use std::sync::Arc;
use std::time::Duration;

use diesel::connection::SimpleConnection;
use diesel::{Connection, PgConnection};
use lock_domain::testing::ManualClock;
use lock_domain::{
    Claim, LeaseOp, LeaseStore, LeaseTerms, LockDelay, Owner, Place, ReleaseResult, SessionId,
    SessionOp, SessionStore,
};
use lock_store_diesel::testing::values::{name, tenant, ttl};
use lock_store_diesel::testing::{open_store, TestDatabase};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

const SESSION: &str = "ShortenedSessionAAAAAA";

async fn open(db: &TestDatabase, batch_connections: u32) -> Arc<DieselLockRepository> {
    let mut config = StoreConfig::new(db.url().clone());
    config.statement_timeout = Duration::from_secs(10);
    config.postgres_batch_connections = batch_connections;
    open_store(config, Arc::new(ManualClock::new())).await
}

async fn a_release_waits_for_a_keepalive_that_shortens_its_session(batch_connections: u32) {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let DatabaseUrl::Postgres(url) = db.url() else {
        unreachable!("a PostgreSQL database")
    };
    let repo = open(&db, batch_connections).await;
    let id = SessionId::parse(SESSION).expect("a session id");
    repo.apply_session(
        tenant(),
        SessionOp::Open {
            id: id.clone(),
            owner: None,
            ttl: ttl(30),
            lock_delay: LockDelay::NONE,
        },
    )
    .await
    .expect("open answers")
    .opened()
    .expect("opened");
    let holder = Owner::of_session(&id);
    let grant = repo
        .apply(
            tenant(),
            LeaseOp::Acquire {
                place: Place::Lock(name("held")),
                claim: Claim::Exclusive,
                terms: LeaseTerms::new(holder.clone(), ttl(3_600), None),
            },
        )
        .await
        .expect("acquire answers")
        .acquired()
        .expect("an acquire's answer");
    assert!(grant.is_ok(), "granted under the session: {grant:?}");

    // The keepalive, as `KEEP_ALIVE` writes it: the session now ends 1 s from now. It commits
    // only once that second has passed.
    let mut keepalive = PgConnection::establish(url).expect("connect the keepalive");
    keepalive
        .batch_execute(&format!(
            "BEGIN;
             UPDATE sessions SET ttl_ms = 1000,
                    expires_at_ms = FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT + 1000
             WHERE id = '{SESSION}'"
        ))
        .expect("the keepalive's write");

    let release = tokio::spawn({
        let repo = Arc::clone(&repo);
        async move {
            repo.apply(
                tenant(),
                LeaseOp::Release {
                    place: Place::Lock(name("held")),
                    owner: holder,
                },
            )
            .await
        }
    });
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    // Waiting for the keepalive is the point: a release made already decided on the old end.
    assert!(
        !release.is_finished(),
        "the release did not wait for the keepalive that holds its session's row"
    );
    keepalive
        .batch_execute("COMMIT")
        .expect("the keepalive commits");

    let released = release
        .await
        .expect("the release's task")
        .expect("a release answers")
        .released()
        .expect("a release's answer");
    assert_eq!(
        released,
        ReleaseResult::NotFound,
        "the session had ended when the release decided: there was nothing to release"
    );
}

#[tokio::test]
async fn in_batches() {
    a_release_waits_for_a_keepalive_that_shortens_its_session(2).await;
}

#[tokio::test]
async fn without_batches() {
    a_release_waits_for_a_keepalive_that_shortens_its_session(0).await;
}
