//! The typed client (`lock-client`) against the real server: every outcome of every operation,
//! and problem+json errors parsed into typed errors; modes, values and sets of locks.

use lock_client::{
    AcquireOptions, Acquired, ClientConfig, ClientError, Lease, LockClient, LockReleased, LockSpec,
    LockStatus, LocksAcquired, Mode, Released, Renewed,
};
use lock_store_diesel::testing::TestDatabase;
use serde_json::json;

use crate::server::TestServer;

on_both_backends!(every_outcome_is_typed, modes_values_and_sets_are_typed);

fn every_outcome_is_typed(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let client = LockClient::new(&ClientConfig::new(server.base.clone()));
    let resource = "orders/42 + more%";

    let Acquired::Granted(lease) = client.acquire(resource, "alice", 30).unwrap() else {
        panic!("granted expected")
    };
    assert_eq!(
        (lease.resource.as_str(), lease.owner.as_str()),
        (resource, "alice")
    );
    assert_eq!(client.status(resource).unwrap(), Some(lease.clone()));
    assert_eq!(
        client.acquire(resource, "bob", 30).unwrap(),
        Acquired::Held {
            retry_after_seconds: None
        }
    );
    let Renewed::Renewed(renewed) = client.renew(resource, "alice", 60).unwrap() else {
        panic!("renewed expected")
    };
    assert_eq!(renewed.fencing_token, lease.fencing_token);
    assert_eq!(
        client.renew(resource, "bob", 60).unwrap(),
        Renewed::Forbidden
    );
    assert_eq!(
        client.release(resource, "bob").unwrap(),
        Released::Forbidden
    );
    assert_eq!(
        client.release(resource, "alice").unwrap(),
        Released::Released
    );
    assert_eq!(
        client.release(resource, "alice").unwrap(),
        Released::NotFound
    );
    assert_eq!(
        client.renew(resource, "alice", 60).unwrap(),
        Renewed::NotFound
    );
    assert_eq!(client.status(resource).unwrap(), None);

    let error = client.acquire(resource, "  ", 0).unwrap_err();
    let ClientError::Problem(problem) = error else {
        panic!("{error:?}")
    };
    assert_eq!(problem.status, 422);
    assert!(problem.kind.ends_with("validation-failed"), "{problem:?}");
    let fields: Vec<_> = problem.errors.iter().map(|e| e.field.as_str()).collect();
    assert_eq!(fields, ["owner", "ttl_seconds"]);
}

fn granted(acquired: Acquired) -> Lease {
    match acquired {
        Acquired::Granted(lease) => lease,
        Acquired::Held { .. } => panic!("granted expected"),
    }
}

fn modes_values_and_sets_are_typed(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let client = LockClient::new(&ClientConfig::new(server.base.clone()));
    let read = |owner: &str, value| {
        let options = AcquireOptions::shared().with_value(value);
        granted(client.acquire_with("doc/1", owner, 30, &options).unwrap())
    };
    let r1 = read("r1", json!({"at": "é"}));
    let r2 = read("r2", json!(2));
    assert_eq!((r1.mode, r2.mode), (Mode::Shared, Mode::Shared));
    assert!(r2.fencing_token > r1.fencing_token);
    assert_eq!(
        client.lock_status("doc/1").unwrap(),
        Some(LockStatus::Shared {
            resource: "doc/1".to_owned(),
            holders: vec![r1.clone(), r2.clone()],
        })
    );
    // A writer is held back; the owner of a read lease asking to write gets the 409.
    let writer = AcquireOptions::default().waiting(1);
    assert!(matches!(
        client.acquire_with("doc/1", "w", 30, &writer).unwrap(),
        Acquired::Held {
            retry_after_seconds: Some(_)
        }
    ));
    let error = client.acquire("doc/1", "r1", 30).unwrap_err();
    assert_eq!(error.status(), Some(409), "{error:?}");
    let Renewed::Renewed(renewed) = client
        .renew_with_value("doc/1", "r2", 60, Some(&json!([1, 2])))
        .unwrap()
    else {
        panic!("renewed expected")
    };
    assert_eq!(
        (renewed.fencing_token, renewed.value),
        (r2.fencing_token, Some(json!([1, 2])))
    );
    let kept = client.renew_with_value("doc/1", "r1", 60, None).unwrap();
    assert!(matches!(kept, Renewed::Renewed(lease) if lease.value == r1.value));

    // A set: mixed modes beside the readers, whole or not at all.
    let set = [LockSpec::shared("doc/1"), LockSpec::exclusive("doc/2")];
    let LocksAcquired::Granted(locks) = client
        .acquire_all("t", 30, &set, 0, Some(&json!("job-7")))
        .unwrap()
    else {
        panic!("granted expected")
    };
    let seen: Vec<_> = locks
        .iter()
        .map(|l| (l.resource.as_str(), l.mode))
        .collect();
    assert_eq!(seen, [("doc/1", Mode::Shared), ("doc/2", Mode::Exclusive)]);
    assert!(locks.iter().all(|l| l.value == Some(json!("job-7"))));
    assert_eq!(
        client.lock_status("doc/2").unwrap(),
        Some(LockStatus::Exclusive(locks[1].clone()))
    );
    assert_eq!(client.status("doc/2").unwrap(), Some(locks[1].clone()));
    let other = [LockSpec::exclusive("doc/3"), LockSpec::exclusive("doc/2")];
    let refused = client.acquire_all("u", 30, &other, 1, None).unwrap();
    let LocksAcquired::Unavailable {
        resources,
        retry_after_seconds: Some(retry),
    } = refused
    else {
        panic!("unavailable, with Retry-After after the wait: {refused:?}")
    };
    assert_eq!(resources, ["doc/2"]);
    assert!((1..=31).contains(&retry), "{retry}");
    assert_eq!(client.lock_status("doc/3").unwrap(), None);
    let error = client.acquire_all("u", 30, &[], 0, None).unwrap_err();
    let ClientError::Problem(problem) = error else {
        panic!("{error:?}")
    };
    assert_eq!(
        (problem.status, problem.errors[0].field.as_str()),
        (422, "locks")
    );

    let released = |resource: &str, outcome, fencing_token| LockReleased {
        resource: resource.to_owned(),
        outcome,
        fencing_token,
    };
    assert_eq!(
        client
            .release_all("t", &["doc/2", "doc/3", "doc/1"])
            .unwrap(),
        [
            released("doc/2", Released::Released, Some(locks[1].fencing_token)),
            released("doc/3", Released::NotFound, None),
            released("doc/1", Released::Released, Some(locks[0].fencing_token)),
        ]
    );
    let LockStatus::Shared { holders, .. } = client.lock_status("doc/1").unwrap().unwrap() else {
        panic!("the two readers still read")
    };
    assert_eq!(holders.len(), 2);
}
