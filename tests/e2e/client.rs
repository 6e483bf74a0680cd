//! The typed client (`lock-client`) against the real server: every outcome of every operation,
//! and problem+json errors parsed into typed errors.

use lock_client::{Acquired, ClientConfig, ClientError, LockClient, Released, Renewed};
use lock_store_diesel::testing::TestDatabase;

use crate::server::TestServer;

on_both_backends!(every_outcome_is_typed);

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
