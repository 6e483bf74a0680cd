//! Observing a session through the service, over the reference store: its state first, each hold
//! granted and released (a lock, permits, a leadership), its end with each reason (closed,
//! forced, run out), and the same seen by a second service over the same store (another process:
//! none of its outcomes reach this one's watches, only its reads do).

use std::sync::Arc;
use std::time::Duration;

use lock_domain::testing::InMemoryLockRepository;
use lock_domain::{
    Capacity, ForceReason, LeaseKind, LeaseTerms, LockDelay, LockMode, Owner, PermitRequest,
    ResourceName, SessionId, SystemClock, Tenant, Ttl, Weight,
};
use tokio::sync::broadcast::error::RecvError;

use crate::{
    AcquireRequest, Acquired, CampaignRequest, Campaigned, LimitsTable, LockService, OpenError,
    OpenSession, PermitsAcquired, PermitsRequest, SessionChange, SessionObservation, OBSERVE_POLL,
};

fn tenant() -> Tenant {
    Tenant::default_tenant()
}

fn name(raw: &str) -> ResourceName {
    ResourceName::parse(raw).unwrap()
}

/// Two services over one store: two processes sharing a database.
fn two_processes() -> (LockService, LockService) {
    let store = Arc::new(InMemoryLockRepository::new(Arc::new(SystemClock)));
    (
        LockService::over(Arc::clone(&store)),
        LockService::over(store),
    )
}

async fn open(service: &LockService, ttl_seconds: u32) -> SessionId {
    let request = OpenSession {
        owner: Some(Owner::parse("worker-7").unwrap()),
        ttl: Ttl::parse(i64::from(ttl_seconds), 3_600).unwrap(),
        lock_delay: LockDelay::NONE,
    };
    match service.sessions().open(tenant(), request).await {
        Ok(session) => session.id,
        Err(error) => panic!("the session opens: {error:?}"),
    }
}

fn under(id: &SessionId) -> LeaseTerms {
    LeaseTerms::new(Owner::of_session(id), Ttl::parse(30, 3_600).unwrap(), None)
}

async fn lock(service: &LockService, id: &SessionId, resource: &str) -> i64 {
    let request = AcquireRequest {
        tenant: tenant(),
        resource: name(resource),
        mode: LockMode::Exclusive,
        terms: under(id),
        wait: Duration::ZERO,
    };
    match service.locks().acquire(request, || false).await.unwrap() {
        Acquired::Granted { lock, .. } => lock.fencing_token.value(),
        other => panic!("expected a grant, got {other:?}"),
    }
}

async fn permits(service: &LockService, id: &SessionId, semaphore: &str) -> i64 {
    let limit = Capacity::semaphore_limit(4).unwrap();
    let request = PermitsRequest {
        tenant: tenant(),
        name: name(semaphore),
        permit: PermitRequest {
            permits: Weight::permits(2, limit).unwrap(),
            limit,
            terms: under(id),
        },
        wait: Duration::ZERO,
    };
    match service
        .semaphores()
        .acquire(request, || false)
        .await
        .unwrap()
    {
        PermitsAcquired::Granted { permit, .. } => permit.lease.fencing_token.value(),
        other => panic!("expected a grant, got {other:?}"),
    }
}

async fn campaign(service: &LockService, id: &SessionId, election: &str) -> i64 {
    let request = CampaignRequest {
        tenant: tenant(),
        election: name(election),
        terms: under(id),
        wait: Duration::ZERO,
    };
    match service
        .elections()
        .campaign(request, || false)
        .await
        .unwrap()
    {
        Campaigned::Elected { leader, .. } => leader.term.value(),
        other => panic!("expected to lead, got {other:?}"),
    }
}

async fn observe(service: &LockService, id: &SessionId) -> SessionObservation {
    match service.sessions().observe(tenant(), id.clone()).await {
        Ok(Some(observation)) => observation,
        Ok(None) => panic!("the session is live"),
        Err(error) => panic!("the observation opens: {error:?}"),
    }
}

/// The next change, within `within`: "granted lock a 3", "released semaphore s 4", "ended
/// closed 2" (the holds it ended with).
async fn next(observation: &mut SessionObservation, within: Duration) -> String {
    let numbered = tokio::time::timeout(within, observation.changes.recv())
        .await
        .expect("a change in time")
        .expect("the stream is open");
    assert!(numbered.id > observation.last_id, "ids grow");
    observation.last_id = numbered.id;
    let hold = |what: &str, hold: &lock_domain::SessionHold| {
        format!(
            "{what} {} {} {}",
            hold.kind.as_str(),
            hold.grant.place.name(),
            hold.grant.lease.fencing_token.value()
        )
    };
    match &numbered.change {
        SessionChange::Granted(h) => hold("granted", h),
        SessionChange::Released(h) => hold("released", h),
        SessionChange::Ended { reason, holds } => {
            format!("ended {} {}", reason.as_str(), holds.len())
        }
    }
}

async fn closed_after_end(observation: &mut SessionObservation) {
    let after = tokio::time::timeout(Duration::from_secs(2), observation.changes.recv()).await;
    assert!(
        matches!(after, Ok(Err(RecvError::Closed))),
        "nothing after the end: {after:?}"
    );
}

const AT_ONCE: Duration = Duration::from_millis(100);

#[tokio::test]
async fn the_state_then_each_hold_then_the_close() {
    let (service, _) = two_processes();
    let id = open(&service, 30).await;
    let a = lock(&service, &id, "a").await;
    let mut observation = observe(&service, &id).await;
    let (session, holds) = &observation.live;
    assert_eq!(session.id, id);
    assert_eq!(holds.len(), 1);
    assert_eq!(holds[0].kind, LeaseKind::Lock);

    let s = permits(&service, &id, "s").await;
    assert_eq!(
        next(&mut observation, AT_ONCE).await,
        format!("granted semaphore s {s}")
    );
    let e = campaign(&service, &id, "office").await;
    assert_eq!(
        next(&mut observation, AT_ONCE).await,
        format!("granted election office {e}")
    );
    // The same session again: a re-grant, no change.
    assert_eq!(lock(&service, &id, "a").await, a);
    let released = service
        .locks()
        .release(tenant(), name("a"), Owner::of_session(&id))
        .await
        .unwrap();
    assert_eq!(
        released,
        lock_domain::ReleaseResult::Released(lock_domain::FencingToken::new(a).unwrap())
    );
    assert_eq!(
        next(&mut observation, AT_ONCE).await,
        format!("released lock a {a}")
    );
    let resigned = service
        .elections()
        .resign(tenant(), name("office"), Owner::of_session(&id))
        .await
        .unwrap();
    assert!(matches!(resigned, lock_domain::ReleaseResult::Released(_)));
    assert_eq!(
        next(&mut observation, AT_ONCE).await,
        format!("released election office {e}")
    );
    // A keepalive is no change; the close ends the session with its last hold.
    service
        .sessions()
        .keep_alive(tenant(), id.clone(), None)
        .await
        .unwrap()
        .expect("live");
    let ended = service.sessions().end(tenant(), id.clone(), None).await;
    assert!(ended.unwrap().is_some());
    assert_eq!(next(&mut observation, AT_ONCE).await, "ended closed 1");
    closed_after_end(&mut observation).await;
    // An ended session, like one never opened, is not observed.
    assert!(service
        .sessions()
        .observe(tenant(), id)
        .await
        .unwrap()
        .is_none());
    let never = SessionId::from_random([1; 16]);
    assert!(service
        .sessions()
        .observe(tenant(), never)
        .await
        .unwrap()
        .is_none());
}

#[tokio::test]
async fn an_admins_end_is_force_released_and_a_run_out_session_expired() {
    let (service, _) = two_processes();
    let id = open(&service, 30).await;
    lock(&service, &id, "a").await;
    let mut observation = observe(&service, &id).await;
    let reason = ForceReason::parse("wedged").unwrap();
    let ended = service.sessions().end(tenant(), id, Some(reason)).await;
    assert!(ended.unwrap().is_some());
    assert_eq!(
        next(&mut observation, AT_ONCE).await,
        "ended force-released 1"
    );
    closed_after_end(&mut observation).await;

    let id = open(&service, 1).await;
    lock(&service, &id, "b").await;
    let mut observation = observe(&service, &id).await;
    let end = observation.live.0.expires_at;
    assert_eq!(
        next(&mut observation, Duration::from_secs(2)).await,
        "ended expired 1"
    );
    let late = chrono::Utc::now() - end;
    assert!(
        late < chrono::TimeDelta::milliseconds(250),
        "seen {late} after its end"
    );
    closed_after_end(&mut observation).await;
}

#[tokio::test]
async fn another_process_grants_releases_keeps_alive_and_ends() {
    let (here, there) = two_processes();
    let within = OBSERVE_POLL + Duration::from_millis(300);
    let id = open(&there, 2).await;
    let mut observation = observe(&here, &id).await;
    assert!(observation.live.1.is_empty());
    let a = lock(&there, &id, "a").await;
    assert_eq!(
        next(&mut observation, within).await,
        format!("granted lock a {a}")
    );
    let released = there
        .locks()
        .release(tenant(), name("a"), Owner::of_session(&id))
        .await
        .unwrap();
    assert!(matches!(released, lock_domain::ReleaseResult::Released(_)));
    assert_eq!(
        next(&mut observation, within).await,
        format!("released lock a {a}")
    );
    // Kept alive there past its first end: still live here.
    let first_end = observation.live.0.expires_at;
    while chrono::Utc::now() < first_end + chrono::TimeDelta::milliseconds(500) {
        let kept = there
            .sessions()
            .keep_alive(tenant(), id.clone(), None)
            .await;
        assert!(kept.unwrap().is_some());
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let b = lock(&there, &id, "b").await;
    assert_eq!(
        next(&mut observation, within).await,
        format!("granted lock b {b}")
    );
    // Forced there: its hold's history says so.
    let reason = ForceReason::parse("wedged").unwrap();
    assert!(there
        .sessions()
        .end(tenant(), id.clone(), Some(reason))
        .await
        .unwrap()
        .is_some());
    assert_eq!(
        next(&mut observation, within).await,
        "ended force-released 1"
    );

    // Closed there with a hold, and without one (before its end: closed).
    for holds in [true, false] {
        let id = open(&there, 30).await;
        if holds {
            lock(&there, &id, "c").await;
        }
        let mut observation = observe(&here, &id).await;
        assert!(there
            .sessions()
            .end(tenant(), id, None)
            .await
            .unwrap()
            .is_some());
        let expected = format!("ended closed {}", usize::from(holds));
        assert_eq!(next(&mut observation, within).await, expected);
    }
}

#[tokio::test]
async fn a_session_observer_counts_against_max_observers_after_the_session_is_found() {
    let (service, _) = two_processes();
    service
        .tenants()
        .set_limits(LimitsTable::parse("default max_observers=1\n").unwrap());
    let id = open(&service, 30).await;
    let observation = observe(&service, &id).await;
    assert_eq!(service.observers(), 1);
    // Over the limit: an unknown session is still unknown, a live one refused.
    let never = SessionId::from_random([2; 16]);
    assert!(matches!(
        service.sessions().observe(tenant(), never).await,
        Ok(None)
    ));
    assert!(matches!(
        service.sessions().observe(tenant(), id.clone()).await,
        Err(OpenError::QuotaExceeded(_))
    ));
    drop(observation);
    assert_eq!(service.observers(), 0);
    assert!(matches!(
        service.sessions().observe(tenant(), id).await,
        Ok(Some(_))
    ));
}
