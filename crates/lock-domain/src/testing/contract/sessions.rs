//! Contract cases for sessions: a session opens, is kept alive and ends once; its holds (locks,
//! readers, permits, sets) are the session's, end with it at one instant (closed: free at once;
//! run out: expired, kept for the session's lock-delay), and move with each keepalive; an
//! acquire under a session that is not live grants nothing.

use std::time::Duration;

use super::fixtures::{name, owner, status, tenant, ttl, PAST_SHORT};
use super::history::{one, query};
use super::{ContractStore, Harness};
use crate::{
    Capacity, Claim, ForceReason, Grant, HistoryEvent, LeaseKind, LeaseOp, LeaseOutcome,
    LeaseTerms, ListLimit, LockDelay, LockMode, LockSet, Owner, Place, Refusal, ResourcePrefix,
    Session, SessionHold, SessionId, SessionOp, SessionQuery, Tenant, Weight,
};

fn new_id(seed: u8) -> SessionId {
    let mut bytes = [seed; 16];
    // Distinct per run, so that a store kept between runs never meets an id twice.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos();
    bytes[..8].copy_from_slice(&(nanos as u64).to_be_bytes());
    SessionId::from_random(bytes)
}

async fn open(
    store: &dyn ContractStore,
    tenant: Tenant,
    seed: u8,
    label: Option<&str>,
    seconds: i64,
    lock_delay: i64,
) -> Session {
    let op = SessionOp::Open {
        id: new_id(seed),
        owner: label.map(owner),
        ttl: ttl(seconds),
        lock_delay: LockDelay::parse(lock_delay).expect("a valid lock-delay"),
    };
    store
        .apply_session(tenant, op)
        .await
        .expect("open answers")
        .opened()
        .expect("opened")
}

fn acquire(resource: &str, claim: Claim, id: &SessionId) -> LeaseOp {
    let place = match claim {
        Claim::Permits { .. } => Place::Semaphore(name(resource)),
        _ => Place::Lock(name(resource)),
    };
    LeaseOp::Acquire {
        place,
        claim,
        // The TTL of a request under a session is not the hold's: the session's end is.
        terms: LeaseTerms::new(Owner::of_session(id), ttl(3_600), None),
    }
}

async fn granted(store: &dyn ContractStore, op: LeaseOp) -> Grant {
    match store
        .apply(tenant(), op)
        .await
        .expect("acquire answers")
        .acquired()
    {
        Ok(Ok(grant)) => grant,
        other => panic!("expected a grant, got {other:?}"),
    }
}

async fn refusal(store: &dyn ContractStore, op: LeaseOp) -> Refusal {
    match store
        .apply(tenant(), op)
        .await
        .expect("acquire answers")
        .acquired()
    {
        Ok(Err(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

fn permits(n: i64, limit: i64) -> Claim {
    let limit = Capacity::semaphore_limit(limit).expect("a valid limit");
    Claim::Permits {
        permits: Weight::permits(n, limit).expect("valid permits"),
        limit,
    }
}

async fn look(store: &dyn ContractStore, id: &SessionId) -> Option<(Session, Vec<SessionHold>)> {
    store
        .apply_session(tenant(), SessionOp::Look(id.clone()))
        .await
        .expect("look answers")
        .looked()
        .expect("a look's answer")
}

async fn keep_alive(store: &dyn ContractStore, id: &SessionId) -> Option<Session> {
    keep_alive_for(store, id, None).await
}

/// A keepalive that sets the session's TTL to `seconds` (kept when `None`).
async fn keep_alive_for(
    store: &dyn ContractStore,
    id: &SessionId,
    seconds: Option<i64>,
) -> Option<Session> {
    let op = SessionOp::KeepAlive {
        id: id.clone(),
        ttl: seconds.map(ttl),
    };
    store
        .apply_session(tenant(), op)
        .await
        .expect("keepalive answers")
        .kept()
        .expect("a keepalive's answer")
}

async fn end(
    store: &dyn ContractStore,
    id: &SessionId,
    force: Option<ForceReason>,
) -> Option<(Session, Vec<SessionHold>)> {
    let op = SessionOp::End {
        id: id.clone(),
        force,
    };
    store
        .apply_session(tenant(), op)
        .await
        .expect("end answers")
        .ended()
        .expect("an end's answer")
}

pub async fn a_session_opens_is_kept_alive_and_ends_once(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let labelled = open(store, tenant(), 1, Some("worker-7"), 30, 5).await;
    assert_eq!(labelled.owner, owner("worker-7"));
    assert_eq!(labelled.ttl, ttl(30));
    assert_eq!(labelled.lock_delay.seconds(), 5);
    assert_eq!(
        labelled.expires_at - labelled.created_at,
        chrono::TimeDelta::seconds(30)
    );
    let unlabelled = open(store, tenant(), 2, None, 30, 0).await;
    assert_eq!(unlabelled.owner.as_str(), unlabelled.id.as_str());
    assert_ne!(labelled.id, unlabelled.id);

    let (seen, holds) = look(store, &labelled.id).await.expect("live");
    assert_eq!(seen, labelled);
    assert!(holds.is_empty());

    h.advance(Duration::from_millis(20)).await;
    let kept = keep_alive(store, &labelled.id).await.expect("live");
    assert!(
        kept.expires_at > labelled.expires_at,
        "a keepalive moves the end"
    );
    assert_eq!(kept.created_at, labelled.created_at);
    let op = SessionOp::KeepAlive {
        id: labelled.id.clone(),
        ttl: Some(ttl(60)),
    };
    let longer = store.apply_session(tenant(), op).await.unwrap().kept();
    let longer = longer.unwrap().expect("live");
    assert_eq!(longer.ttl, ttl(60), "a keepalive may change the TTL");
    assert!(longer.expires_at >= kept.expires_at + chrono::TimeDelta::seconds(29));

    let (ended, holds) = end(store, &labelled.id, None).await.expect("ended");
    assert_eq!(ended.id, labelled.id);
    assert!(holds.is_empty());
    assert_eq!(end(store, &labelled.id, None).await, None, "ends once");
    assert_eq!(keep_alive(store, &labelled.id).await, None, "never revived");
    assert_eq!(look(store, &labelled.id).await, None);
    // Another tenant never sees it.
    let other = Tenant::parse("other").unwrap();
    let op = SessionOp::Look(unlabelled.id.clone());
    let elsewhere = store.apply_session(other, op).await.unwrap().looked();
    assert_eq!(elsewhere.unwrap(), None);
    assert!(look(store, &unlabelled.id).await.is_some());
}

pub async fn holds_under_a_session_are_its_own_and_move_with_each_keepalive(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 3, Some("worker-7"), 30, 0).await;
    let id = &session.id;
    let lock = granted(store, acquire("s-lock", Claim::Exclusive, id)).await;
    assert_eq!(lock.lease.owner, session.holder());
    assert_eq!(lock.lease.owner.label(), "worker-7");
    assert_eq!(lock.lease.owner.session(), Some(id.clone()));
    assert_eq!(
        lock.lease.expires_at, session.expires_at,
        "the session's end"
    );
    let reader = granted(store, acquire("s-read", Claim::Shared, id)).await;
    assert_eq!(reader.mode(), Some(LockMode::Shared));
    let permit = granted(store, acquire("s-sem", permits(2, 3), id)).await;
    assert!(permit.lease.fencing_token > reader.lease.fencing_token);

    // The same session is the same holder: a re-grant keeps the token.
    let again = granted(store, acquire("s-lock", Claim::Exclusive, id)).await;
    assert_eq!(again.lease.fencing_token, lock.lease.fencing_token);
    // Its label is not its identity: a plain owner of that name, or another session, is another.
    let plain = LeaseOp::Acquire {
        place: Place::Lock(name("s-lock")),
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(owner("worker-7"), ttl(30), None),
    };
    assert!(matches!(refusal(store, plain).await, Refusal::Held { .. }));
    let twin = open(store, tenant(), 4, Some("worker-7"), 30, 0).await;
    let op = acquire("s-lock", Claim::Exclusive, &twin.id);
    match refusal(store, op).await {
        Refusal::Held { holders, .. } => assert_eq!(holders[0].lease.owner, session.holder()),
        other => panic!("held by the session, got {other:?}"),
    }
    let release = LeaseOp::Release {
        place: Place::Lock(name("s-lock")),
        owner: owner("worker-7"),
    };
    let forbidden = store.apply(tenant(), release).await.unwrap().released();
    assert_eq!(forbidden.unwrap(), crate::ReleaseResult::Forbidden);
    // A renew of a session's hold is not the holder's to make: the keepalive is.
    let renew = LeaseOp::Renew {
        place: Place::Lock(name("s-lock")),
        owner: Owner::of_session(id),
        ttl: ttl(5),
        value: None,
    };
    let renewed = store.apply(tenant(), renew).await.unwrap();
    assert_eq!(renewed, crate::LeaseOutcome::Forbidden);

    // A leadership too: an election is a lock in the tenant's election namespace.
    let campaign = acquire("s-office", Claim::Exclusive, id);
    let leader = store.apply(tenant().elections(), campaign).await.unwrap();
    assert!(
        matches!(leader, crate::LeaseOutcome::Granted(_)),
        "{leader:?}"
    );

    let (_, holds) = look(store, id).await.expect("live");
    let places: Vec<(LeaseKind, &Place)> = holds
        .iter()
        .map(|hold| (hold.kind, &hold.grant.place))
        .collect();
    assert_eq!(
        places,
        vec![
            (LeaseKind::Lock, &Place::Lock(name("s-lock"))),
            (LeaseKind::Lock, &Place::Lock(name("s-read"))),
            (LeaseKind::Semaphore, &Place::Semaphore(name("s-sem"))),
            (LeaseKind::Election, &Place::Lock(name("s-office"))),
        ]
    );

    h.advance(Duration::from_millis(20)).await;
    let kept = keep_alive(store, id).await.expect("live");
    let held = status(store, "s-lock").await.expect("held");
    assert_eq!(held.expires_at, kept.expires_at, "every hold moves with it");
    assert_eq!(held.fencing_token, lock.lease.fencing_token);
    let (_, holds) = look(store, id).await.expect("live");
    assert!(holds
        .iter()
        .all(|h| h.grant.lease.expires_at == kept.expires_at));

    // Releasing one hold leaves the others.
    let op = LeaseOp::Release {
        place: Place::Semaphore(name("s-sem")),
        owner: Owner::of_session(id),
    };
    let released = store.apply(tenant(), op).await.unwrap().released();
    assert_eq!(
        released.unwrap(),
        crate::ReleaseResult::Released(permit.lease.fencing_token)
    );
    let (_, holds) = look(store, id).await.expect("live");
    assert_eq!(holds.len(), 3);
}

pub async fn closing_a_session_ends_every_hold_at_once_and_frees_them(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    // A lock-delay applies to a session that runs out, never to one that is closed.
    let session = open(store, tenant(), 5, None, 30, 30).await;
    let id = &session.id;
    let set = LockSet::new(
        LeaseTerms::new(Owner::of_session(id), ttl(30), None),
        vec![
            (name("c-1"), LockMode::Exclusive),
            (name("c-2"), LockMode::Shared),
        ],
    )
    .expect("a valid set");
    let grants = match store.apply(tenant(), LeaseOp::AcquireAll(set)).await {
        Ok(outcome) => outcome.acquired_all().unwrap().expect("granted"),
        Err(e) => panic!("a set answers: {e}"),
    };
    assert!(grants.iter().all(|g| g.lease.owner == session.holder()));
    granted(store, acquire("c-sem", permits(3, 3), id)).await;

    let (ended, holds) = end(store, id, None).await.expect("ended");
    assert_eq!(ended.id, *id);
    assert_eq!(holds.len(), 3);
    assert_eq!(status(store, "c-1").await, None);
    assert_eq!(status(store, "c-2").await, None);
    // Free at once: no lock-delay after a close.
    crate::testing::contract::fixtures::granted(store, "c-1", "next", 30).await;
    let next = LeaseOp::Acquire {
        place: Place::Semaphore(name("c-sem")),
        claim: permits(3, 3),
        terms: LeaseTerms::new(owner("next"), ttl(30), None),
    };
    granted(store, next).await;
    // Nothing can be taken under it any more.
    let op = acquire("c-3", Claim::Exclusive, id);
    assert_eq!(refusal(store, op).await, Refusal::SessionNotFound);
    assert_eq!(status(store, "c-3").await, None);
    let records = store
        .history(tenant(), query(one(LeaseKind::Lock, "c-2"), 100))
        .await
        .expect("history answers");
    let events: Vec<(HistoryEvent, &str)> = records
        .records
        .iter()
        .map(|r| (r.event, r.owner.label()))
        .collect();
    let label = session.owner.as_str();
    assert_eq!(
        events,
        vec![
            (HistoryEvent::Released, label),
            (HistoryEvent::Granted, label)
        ],
        "newest first"
    );
}

/// A session that takes the same place again and again (a worker's lock, taken and released
/// once a job) has it noted once; every later hold there still ends with the session, whether
/// it is closed or runs out, and is recorded so.
pub async fn a_place_taken_again_under_its_session_still_ends_with_it(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let closed = open(store, tenant(), 11, None, 30, 0).await;
    let run_out = open(store, tenant(), 12, None, 1, 0).await;
    let mut last = None;
    for session in [&closed, &run_out] {
        let resource = format!("again-{}", session.ttl.seconds());
        let mut tokens = vec![];
        for round in 0..3 {
            let grant = granted(store, acquire(&resource, Claim::Exclusive, &session.id)).await;
            tokens.push(grant.lease.fencing_token);
            if round < 2 {
                let op = LeaseOp::Release {
                    place: Place::Lock(name(&resource)),
                    owner: Owner::of_session(&session.id),
                };
                let released = store.apply(tenant(), op).await.unwrap().released();
                assert_eq!(
                    released.unwrap(),
                    crate::ReleaseResult::Released(grant.lease.fencing_token)
                );
            }
            last = Some(grant);
        }
        assert!(tokens.windows(2).all(|t| t[0] < t[1]), "{tokens:?}");
        let (_, holds) = look(store, &session.id).await.expect("live");
        let places: Vec<&Place> = holds.iter().map(|hold| &hold.grant.place).collect();
        assert_eq!(places, vec![&Place::Lock(name(&resource))]);
    }
    let last = last.expect("granted");

    let (_, holds) = end(store, &closed.id, None).await.expect("ended");
    assert_eq!(holds.len(), 1, "the hold taken again: {holds:?}");
    assert_eq!(status(store, "again-30").await, None);
    crate::testing::contract::fixtures::granted(store, "again-30", "next", 30).await;
    let records = store
        .history(tenant(), query(one(LeaseKind::Lock, "again-30"), 100))
        .await
        .expect("history answers");
    let events: Vec<HistoryEvent> = records.records.iter().map(|r| r.event).collect();
    assert_eq!(
        events[..3],
        [
            HistoryEvent::Granted,
            HistoryEvent::Released,
            HistoryEvent::Granted
        ],
        "newest first: next's grant, the close's release, the third grant"
    );

    h.advance(PAST_SHORT).await;
    assert_eq!(status(store, "again-1").await, None, "ran out with it");
    assert_eq!(look(store, &run_out.id).await, None);
    let granted_next =
        crate::testing::contract::fixtures::granted(store, "again-1", "next", 30).await;
    assert!(granted_next.fencing_token > last.lease.fencing_token);
}

pub async fn a_forced_end_is_recorded_with_its_reason(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 6, None, 30, 0).await;
    granted(store, acquire("f-1", Claim::Exclusive, &session.id)).await;
    let reason = ForceReason::parse("stuck worker").unwrap();
    let (_, holds) = end(store, &session.id, Some(reason)).await.expect("ended");
    assert_eq!(holds.len(), 1);
    assert_eq!(status(store, "f-1").await, None);
    let records = store
        .history(tenant(), query(one(LeaseKind::Lock, "f-1"), 100))
        .await
        .expect("history answers");
    let last = records.records.first().expect("recorded");
    assert_eq!(last.event, HistoryEvent::ForceReleased);
    assert_eq!(last.reason.as_deref(), Some("stuck worker"));
}

pub async fn a_force_release_after_a_session_ran_out_ends_nothing_live(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 10, None, 1, 0).await;
    let id = &session.id;
    let lock = granted(store, acquire("r-lock", Claim::Exclusive, id)).await;
    let read = granted(store, acquire("r-read", Claim::Shared, id)).await;
    let permit = granted(store, acquire("r-sem", permits(1, 2), id)).await;
    h.advance(PAST_SHORT).await;
    // Not swept yet: the holds ran out with the session, and an admin's force-release finds
    // nothing live to end; the history says they expired, not that the admin ended them.
    let reason = ForceReason::parse("late").unwrap();
    for (place, kind) in [
        (Place::Lock(name("r-lock")), LeaseKind::Lock),
        (Place::Lock(name("r-read")), LeaseKind::Lock),
        (Place::Semaphore(name("r-sem")), LeaseKind::Semaphore),
    ] {
        let op = LeaseOp::ForceRelease {
            place: place.clone(),
            reason: reason.clone(),
        };
        let outcome = store.apply(tenant(), op).await.unwrap();
        assert_eq!(
            outcome,
            crate::LeaseOutcome::ForceReleased(Vec::new()),
            "{place:?}"
        );
        let name = match &place {
            Place::Lock(name) | Place::Semaphore(name) => name.as_str().to_owned(),
        };
        let records = store
            .history(tenant(), query(one(kind, &name), 100))
            .await
            .expect("history answers");
        assert!(
            records
                .records
                .iter()
                .all(|r| r.event != HistoryEvent::ForceReleased && r.reason.is_none()),
            "{place:?}: {:?}",
            records.records
        );
    }
    // And each is taken as a hold that ran out at the session's end (for metrics), once.
    let held = |kind, shared, grant: &Grant| crate::ExpiredHold {
        kind,
        shared,
        held: (session.expires_at - grant.lease.acquired_at)
            .to_std()
            .expect("granted before the session's end"),
    };
    let mut taken = store
        .take_expired_holds(100)
        .await
        .expect("take_expired_holds answers");
    taken.sort_by_key(|hold| (hold.kind.as_str(), hold.shared));
    assert_eq!(
        taken,
        vec![
            held(LeaseKind::Lock, false, &lock),
            held(LeaseKind::Lock, true, &read),
            held(LeaseKind::Semaphore, false, &permit),
        ]
    );
    assert_eq!(
        store.take_expired_holds(100).await.expect("answers"),
        vec![]
    );
}

pub async fn a_reader_whose_session_ran_out_is_recorded_expired(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 11, None, 1, 0).await;
    granted(store, acquire("e-read", Claim::Shared, &session.id)).await;
    h.advance(PAST_SHORT).await;
    // The next change of the lock (another reader) ends the run-out reader: as expired.
    let next = LeaseOp::Acquire {
        place: Place::Lock(name("e-read")),
        claim: Claim::Shared,
        terms: LeaseTerms::new(owner("next"), ttl(30), None),
    };
    store.apply(tenant(), next).await.unwrap();
    let records = store
        .history(tenant(), query(one(LeaseKind::Lock, "e-read"), 100))
        .await
        .expect("history answers");
    let ends: Vec<HistoryEvent> = records
        .records
        .iter()
        .filter(|r| r.owner.session().is_some() && r.event != HistoryEvent::Granted)
        .map(|r| r.event)
        .collect();
    assert!(
        ends.iter().all(|event| *event == HistoryEvent::Expired),
        "{:?}",
        records.records
    );
}

pub async fn a_session_that_runs_out_ends_every_hold_and_keeps_their_places(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 7, None, 1, 30).await;
    let id = &session.id;
    let lock = granted(store, acquire("x-lock", Claim::Exclusive, id)).await;
    granted(store, acquire("x-sem", permits(1, 1), id)).await;
    h.advance(PAST_SHORT).await;

    assert_eq!(
        status(store, "x-lock").await,
        None,
        "ended with its session"
    );
    assert_eq!(look(store, id).await, None);
    assert_eq!(
        keep_alive(store, id).await,
        None,
        "a keepalive never revives"
    );
    assert_eq!(end(store, id, None).await, None);
    let op = acquire("x-other", Claim::Exclusive, id);
    assert_eq!(refusal(store, op).await, Refusal::SessionNotFound);
    let release = LeaseOp::Release {
        place: Place::Lock(name("x-lock")),
        owner: Owner::of_session(id),
    };
    let outcome = store.apply(tenant(), release).await.unwrap().released();
    assert_eq!(outcome.unwrap(), crate::ReleaseResult::NotFound);

    // The places stay kept for the session's lock-delay, from the session's end.
    let plain = LeaseOp::Acquire {
        place: Place::Lock(name("x-lock")),
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(owner("next"), ttl(30), None),
    };
    match refusal(store, plain).await {
        Refusal::Delayed { until } => {
            assert_eq!(
                until,
                lock.lease.expires_at + chrono::TimeDelta::seconds(30)
            )
        }
        other => panic!("kept by the lock-delay, got {other:?}"),
    }
    let next = LeaseOp::Acquire {
        place: Place::Semaphore(name("x-sem")),
        claim: permits(1, 1),
        terms: LeaseTerms::new(owner("next"), ttl(30), None),
    };
    assert!(matches!(refusal(store, next).await, Refusal::Held { .. }));
    // A new session is a new holder, kept out as well.
    let fresh = open(store, tenant(), 8, None, 30, 0).await;
    let op = acquire("x-lock", Claim::Exclusive, &fresh.id);
    assert!(matches!(refusal(store, op).await, Refusal::Delayed { .. }));

    // Acquires under the run-out session of a lock another owner holds, arriving together with
    // that owner's refused acquires (which a store may batch, and answer from the holder it
    // saw): each is decided on its session first, so none is told who holds the lock.
    crate::testing::contract::fixtures::granted(store, "x-held", "holder", 30).await;
    let under = futures::future::join_all(
        (0..6).map(|_| store.apply(tenant(), acquire("x-held", Claim::Exclusive, id))),
    );
    let others = futures::future::join_all((0..3).map(|i| {
        let op = LeaseOp::Acquire {
            place: Place::Lock(name("x-held")),
            claim: Claim::Exclusive,
            terms: LeaseTerms::new(owner(&format!("other-{i}")), ttl(30), None),
        };
        store.apply(tenant(), op)
    }));
    let (under, others) = futures::future::join(under, others).await;
    for outcome in under {
        let refused = outcome.expect("an acquire answers").acquired();
        assert!(
            matches!(refused, Ok(Err(Refusal::SessionNotFound))),
            "under a run-out session: {refused:?}"
        );
    }
    for outcome in others {
        let refused = outcome.expect("an acquire answers").acquired();
        assert!(
            matches!(refused, Ok(Err(Refusal::Held { .. }))),
            "{refused:?}"
        );
    }
}

pub async fn an_unknown_session_grants_nothing(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let stranger = new_id(9);
    let op = acquire("u-lock", Claim::Exclusive, &stranger);
    assert_eq!(refusal(store, op).await, Refusal::SessionNotFound);
    let op = acquire("u-sem", permits(1, 2), &stranger);
    assert_eq!(refusal(store, op).await, Refusal::SessionNotFound);
    assert_eq!(status(store, "u-lock").await, None);
    assert_eq!(keep_alive(store, &stranger).await, None);
    assert_eq!(look(store, &stranger).await, None);
    // Another tenant's session is unknown here.
    let other = Tenant::parse("other").unwrap();
    let theirs = open(store, other, 10, None, 30, 0).await;
    let op = acquire("u-lock", Claim::Exclusive, &theirs.id);
    assert_eq!(refusal(store, op).await, Refusal::SessionNotFound);
    assert_eq!(
        store
            .count_live_leases(tenant())
            .await
            .expect("usage answers"),
        0
    );
}

pub async fn live_sessions_are_listed_by_id_with_their_holds(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let listing = Tenant::parse("listing").unwrap();
    let mut ids = Vec::new();
    for seed in 11..14 {
        ids.push(open(store, listing.clone(), seed, None, 30, 0).await.id);
    }
    let short = open(store, listing.clone(), 14, None, 1, 0).await;
    let op = LeaseOp::Acquire {
        place: Place::Lock(name("l-1")),
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(Owner::of_session(&ids[0]), ttl(30), None),
    };
    store.apply(listing.clone(), op).await.unwrap();
    h.advance(PAST_SHORT).await;
    ids.sort();
    assert_eq!(store.live_sessions(listing.clone()).await.unwrap(), 3);
    let query = SessionQuery {
        prefix: ResourcePrefix::parse("").unwrap(),
        after: None,
        limit: ListLimit::parse(2).unwrap(),
    };
    let first = store
        .list_sessions(listing.clone(), query.clone())
        .await
        .unwrap();
    assert!(first.has_more);
    let seen: Vec<&SessionId> = first.sessions.iter().map(|s| &s.session.id).collect();
    assert_eq!(seen, vec![&ids[0], &ids[1]]);
    let rest = SessionQuery {
        after: Some(name(ids[1].as_str())),
        ..query
    };
    let second = store.list_sessions(listing.clone(), rest).await.unwrap();
    assert!(!second.has_more);
    let seen: Vec<&SessionId> = second.sessions.iter().map(|s| &s.session.id).collect();
    assert_eq!(seen, vec![&ids[2]]);
    assert!(
        !seen.contains(&&short.id),
        "a run-out session is not listed"
    );
    let holds: u64 = first
        .sessions
        .iter()
        .chain(&second.sessions)
        .map(|s| s.holds)
        .sum();
    assert_eq!(holds, 1);
    let empty = store
        .list_sessions(
            tenant(),
            SessionQuery {
                prefix: ResourcePrefix::parse(&ids[0].as_str()[..3]).unwrap(),
                after: None,
                limit: ListLimit::DEFAULT,
            },
        )
        .await
        .unwrap();
    assert!(empty.sessions.iter().all(|s| !ids.contains(&s.session.id)));
}

pub async fn a_grant_under_a_session_nobody_heard_of_is_undone(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 15, None, 30, 0).await;
    let id = &session.id;
    // A lock, a reader and permits granted under the session whose requester went away: each
    // undo ends exactly that grant (a keepalive in between or not), and leaves the session and
    // its other holds alone.
    let lock = granted(store, acquire("h-lock", Claim::Exclusive, id)).await;
    let reader = granted(store, acquire("h-read", Claim::Shared, id)).await;
    let permit = granted(store, acquire("h-sem", permits(1, 2), id)).await;
    // A keepalive between the grant and its undo moves every hold's end, and changes no hold:
    // the undo still ends exactly that grant.
    h.advance(Duration::from_millis(20)).await;
    let kept = keep_alive(store, id).await.expect("live");
    assert!(kept.expires_at > session.expires_at);
    for grant in [lock, reader, permit] {
        let undone = store.apply(tenant(), LeaseOp::Undo(grant.clone())).await;
        assert_eq!(
            undone.unwrap(),
            crate::LeaseOutcome::Undone(true),
            "{:?}",
            grant.place
        );
    }
    assert_eq!(status(store, "h-lock").await, None);
    assert_eq!(status(store, "h-read").await, None);
    let (_, holds) = look(store, id).await.expect("the session lives on");
    assert!(holds.is_empty(), "{holds:?}");
    // A re-grant under the session is the session's earlier lease: never undone.
    let first = granted(store, acquire("h-lock", Claim::Exclusive, id)).await;
    let again = granted(store, acquire("h-lock", Claim::Exclusive, id)).await;
    assert_eq!(again.lease.fencing_token, first.lease.fencing_token);
    let undone = store.apply(tenant(), LeaseOp::Undo(again)).await.unwrap();
    assert_eq!(undone, crate::LeaseOutcome::Undone(false));
    assert!(status(store, "h-lock").await.is_some());
}

/// A session's end racing acquires under it (which a store may batch with each other and with
/// other owners' acquires): each acquire is either granted before the end, and then among the
/// holds the end ended, or refused as under no session; nothing of the session is live after
/// the end answered, and the other owners' acquires are untouched.
pub async fn an_end_racing_acquires_under_its_session_leaves_no_hold(h: &dyn Harness) {
    use futures::future::{join3, join_all};
    let store = h.open().await;
    let store = &*store;
    for round in 0..4u8 {
        let session = open(store, tenant(), 60 + round, None, 30, 0).await;
        let id = &session.id;
        let names: Vec<String> = (0..12).map(|i| format!("race-{round}-{i}")).collect();
        let others: Vec<String> = (0..4).map(|i| format!("other-{round}-{i}")).collect();
        let under = join_all(
            names
                .iter()
                .map(|n| store.apply(tenant(), acquire(n, Claim::Exclusive, id))),
        );
        let plain = join_all(others.iter().map(|n| {
            let op = LeaseOp::Acquire {
                place: Place::Lock(name(n)),
                claim: Claim::Exclusive,
                terms: LeaseTerms::new(owner("plain"), ttl(30), None),
            };
            store.apply(tenant(), op)
        }));
        let (outcomes, ended, plain) = join3(under, end(store, id, None), plain).await;
        let (_, ended_holds) = ended.expect("the end finds the session");
        for (n, outcome) in names.iter().zip(outcomes) {
            match outcome.expect("an acquire answers").acquired() {
                Ok(Ok(grant)) => assert!(
                    ended_holds
                        .iter()
                        .any(|hold| hold.grant.place.name().as_str() == n
                            && hold.grant.lease.fencing_token == grant.lease.fencing_token),
                    "{n} was granted but the end did not end it"
                ),
                Ok(Err(Refusal::SessionNotFound)) => {}
                other => panic!("{n}: expected a grant or session-not-found, got {other:?}"),
            }
            assert_eq!(
                status(store, n).await,
                None,
                "{n} is live after its session ended"
            );
        }
        for (n, outcome) in others.iter().zip(plain) {
            assert!(
                matches!(outcome.expect("an acquire answers").acquired(), Ok(Ok(_))),
                "{n}: another owner's acquire beside the session's is granted"
            );
        }
        assert_eq!(look(store, id).await, None, "the session stays ended");
    }
}

/// A session's end racing releases of its holds under it (a store may decide a release under a
/// session in one statement with the session's liveness): each hold ends once, either by its
/// release (answered released, and then not among the holds the end ended) or by the end (the
/// release answered not found); nothing of the session is live afterwards.
pub async fn an_end_racing_releases_under_its_session_ends_each_hold_once(h: &dyn Harness) {
    use futures::future::{join, join_all};
    let store = h.open().await;
    let store = &*store;
    for round in 0..4u8 {
        let session = open(store, tenant(), 80 + round, None, 30, 0).await;
        let id = &session.id;
        let names: Vec<String> = (0..12).map(|i| format!("gone-{round}-{i}")).collect();
        let mut tokens = vec![];
        for n in &names {
            tokens.push(
                granted(store, acquire(n, Claim::Exclusive, id))
                    .await
                    .lease
                    .fencing_token,
            );
        }
        let releases = join_all(names.iter().map(|n| {
            let op = LeaseOp::Release {
                place: Place::Lock(name(n)),
                owner: Owner::of_session(id),
            };
            store.apply(tenant(), op)
        }));
        let (outcomes, ended) = join(releases, end(store, id, None)).await;
        let (_, ended_holds) = ended.expect("the end finds the session");
        for ((n, token), outcome) in names.iter().zip(&tokens).zip(outcomes) {
            let by_end = ended_holds
                .iter()
                .any(|hold| hold.grant.place.name().as_str() == n);
            match outcome.expect("a release answers").released() {
                Ok(crate::ReleaseResult::Released(released)) => {
                    assert_eq!(released, *token);
                    assert!(!by_end, "{n} was released, and ended again by the end");
                }
                Ok(crate::ReleaseResult::NotFound) => {
                    assert!(by_end, "{n}: not found, yet the end did not end it")
                }
                other => panic!("{n}: expected released or not found, got {other:?}"),
            }
            assert_eq!(status(store, n).await, None, "{n} is live after its end");
        }
        assert_eq!(look(store, id).await, None, "the session stays ended");
    }
}

/// A session's holds ran out with it, at its end: a lock whose place another holder takes over
/// is noted then as held until the session's end (for metrics, `take_expired_holds`), once; a
/// hold released under the live session is not. (A permit's row may stay until the sweeper ends
/// the session, which notes it then: the stores' own tests.)
pub async fn holds_taken_over_after_their_session_ran_out_were_held_to_its_end(h: &dyn Harness) {
    let store = h.open().await;
    let store = &*store;
    let session = open(store, tenant(), 11, None, 1, 0).await;
    let id = &session.id;
    let lock = granted(store, acquire("t-lock", Claim::Exclusive, id)).await;
    granted(store, acquire("t-released", Claim::Exclusive, id)).await;
    let release = LeaseOp::Release {
        place: Place::Lock(name("t-released")),
        owner: Owner::of_session(id),
    };
    let outcome = store.apply(tenant(), release).await.unwrap().released();
    assert!(matches!(outcome, Ok(crate::ReleaseResult::Released(_))));
    h.advance(PAST_SHORT).await;
    let plain = |place| LeaseOp::Acquire {
        place,
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(owner("next"), ttl(30), None),
    };
    granted(store, plain(Place::Lock(name("t-lock")))).await;
    let held = |grant: &Grant| {
        (session.expires_at - grant.lease.acquired_at)
            .to_std()
            .expect("granted before the session's end")
    };
    assert_eq!(
        store
            .take_expired_holds(100)
            .await
            .expect("take_expired_holds answers"),
        vec![crate::ExpiredHold {
            kind: LeaseKind::Lock,
            shared: false,
            held: held(&lock),
        }]
    );
    assert_eq!(
        store.take_expired_holds(100).await.expect("answers"),
        vec![],
        "once"
    );
}

/// A store that granted under a session decides its next acquires on the session as another
/// store (another process on the same database) left it: the end a keepalive there gave it, and
/// its end there.
pub async fn acquires_under_a_session_see_what_another_store_did_to_it(h: &dyn Harness) {
    let here = h.open().await;
    let there = h.open().await;
    let (here, there) = (&*here, &*there);
    let session = open(here, tenant(), 11, None, 30, 0).await;
    let first = granted(here, acquire("seen-a", Claim::Exclusive, &session.id)).await;
    assert_eq!(first.lease.expires_at, session.expires_at);

    let longer = keep_alive_for(there, &session.id, Some(600))
        .await
        .expect("kept alive");
    assert!(longer.expires_at >= session.expires_at + chrono::TimeDelta::seconds(500));
    let second = granted(here, acquire("seen-b", Claim::Exclusive, &session.id)).await;
    assert_eq!(
        second.lease.expires_at, longer.expires_at,
        "the end the other store's keepalive gave the session"
    );
    let again = granted(here, acquire("seen-a", Claim::Exclusive, &session.id)).await;
    assert_eq!(
        again.lease.fencing_token, first.lease.fencing_token,
        "a re-grant"
    );
    assert_eq!(again.lease.expires_at, longer.expires_at);

    assert!(end(there, &session.id, None).await.is_some(), "ended there");
    let op = acquire("seen-c", Claim::Exclusive, &session.id);
    assert_eq!(refusal(here, op).await, Refusal::SessionNotFound);
    let op = acquire("seen-a", Claim::Exclusive, &session.id);
    assert_eq!(refusal(here, op).await, Refusal::SessionNotFound);
    for resource in ["seen-a", "seen-b", "seen-c"] {
        assert_eq!(status(here, resource).await, None, "{resource} is free");
    }
}

/// A release under a session after the session ran out: at the end it was opened with, and after
/// another store's keepalive shortened it. A store that keeps what it read of a session
/// (SQLite's writer) must see both: each release finds nothing held and ends nothing.
pub async fn releases_under_a_session_see_what_another_store_did_to_it(h: &dyn Harness) {
    let here = h.open().await;
    let there = h.open().await;
    let (here, there) = (&*here, &*there);
    let release = |resource: &str, id: &SessionId| LeaseOp::Release {
        place: Place::Lock(name(resource)),
        owner: Owner::of_session(id),
    };
    // The hold is taken, released and taken again, so that the releasing store has read the
    // session before.
    let take_twice = |resource: &'static str, id: SessionId| async move {
        let first = granted(here, acquire(resource, Claim::Exclusive, &id)).await;
        let released = here.apply(tenant(), release(resource, &id)).await;
        assert_eq!(
            released.unwrap().released().unwrap(),
            crate::ReleaseResult::Released(first.lease.fencing_token)
        );
        granted(here, acquire(resource, Claim::Exclusive, &id)).await;
    };
    let released_after_the_end = |resource: &'static str, id: SessionId| async move {
        let released = here.apply(tenant(), release(resource, &id)).await;
        assert_eq!(
            released.unwrap().released().unwrap(),
            crate::ReleaseResult::NotFound,
            "{resource}: its session ended"
        );
        assert_eq!(status(here, resource).await, None, "{resource} is free");
    };

    let run_out = open(here, tenant(), 13, None, 1, 0).await;
    take_twice("cut-a", run_out.id.clone()).await;
    h.advance(PAST_SHORT).await;
    released_after_the_end("cut-a", run_out.id.clone()).await;

    let shortened = open(here, tenant(), 14, None, 30, 0).await;
    take_twice("cut-b", shortened.id.clone()).await;
    let shorter = keep_alive_for(there, &shortened.id, Some(1))
        .await
        .expect("kept alive");
    assert!(shorter.expires_at < shortened.expires_at);
    h.advance(PAST_SHORT).await;
    released_after_the_end("cut-b", shortened.id.clone()).await;
}

/// `apply_then` under sessions, as a lock's queue hands a release to its next in line: a
/// session's hold released and the lock granted under another session, or to a plain owner,
/// each answered as `apply` would answer it alone, the grant a hold of its session; an acquire
/// under an ended session grants nothing, whatever the release before it did.
pub async fn a_release_then_an_acquire_under_sessions_answer_as_one_after_the_other(
    h: &dyn Harness,
) {
    let store = h.open().await;
    let store = &*store;
    let first = open(store, tenant(), 41, Some("first"), 30, 0).await;
    let next = open(store, tenant(), 42, Some("next"), 30, 0).await;
    let held = granted(store, acquire("s-hand", Claim::Exclusive, &first.id)).await;
    let release = |owner: Owner| LeaseOp::Release {
        place: Place::Lock(name("s-hand")),
        owner,
    };
    let (released, handed) = store
        .apply_then(
            tenant(),
            release(Owner::of_session(&first.id)),
            acquire("s-hand", Claim::Exclusive, &next.id),
        )
        .await;
    assert!(
        matches!(&released, Ok(LeaseOutcome::Released(ended)) if ended.fencing_token == held.lease.fencing_token),
        "{released:?}"
    );
    let Ok(LeaseOutcome::Granted(grant)) = handed else {
        panic!("the next session is granted: {handed:?}")
    };
    assert_eq!(grant.lease.owner, next.holder());
    assert_eq!(grant.lease.expires_at, next.expires_at, "its session's end");
    assert!(grant.lease.fencing_token > held.lease.fencing_token);
    let (_, holds) = look(store, &next.id).await.expect("the session lives");
    assert!(
        holds
            .iter()
            .any(|hold| hold.grant.lease.fencing_token == grant.lease.fencing_token),
        "{holds:?}"
    );
    let (_, holds) = look(store, &first.id).await.expect("the session lives");
    assert!(holds.is_empty(), "{holds:?}");

    // From a session to a plain owner.
    let plain = LeaseOp::Acquire {
        place: Place::Lock(name("s-hand")),
        claim: Claim::Exclusive,
        terms: LeaseTerms::new(owner("plain"), ttl(30), None),
    };
    let (released, granted_plain) = store
        .apply_then(tenant(), release(Owner::of_session(&next.id)), plain)
        .await;
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert!(
        matches!(&granted_plain, Ok(LeaseOutcome::Granted(g)) if g.lease.owner == owner("plain")),
        "{granted_plain:?}"
    );

    // Under a session that has ended: the release takes effect, the acquire grants nothing.
    assert!(end(store, &first.id, None).await.is_some());
    let (released, refused) = store
        .apply_then(
            tenant(),
            release(owner("plain")),
            acquire("s-hand", Claim::Exclusive, &first.id),
        )
        .await;
    assert!(
        matches!(released, Ok(LeaseOutcome::Released(_))),
        "{released:?}"
    );
    assert_eq!(
        refused.expect("the acquire answers"),
        LeaseOutcome::Refused(Refusal::SessionNotFound)
    );
    assert_eq!(status(store, "s-hand").await, None);
}
