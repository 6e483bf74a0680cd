//! The contract case for tenants: two tenants' locks of the same name are independent.

use super::fixtures::{name, owner, tenant, ttl};
use super::Harness;
use crate::testing::calls::LeaseCalls;
use crate::{AcquireOutcome, ReleaseResult, RenewResult, Tenant};

/// Two tenants using the same resource name and owner have two independent locks: one tenant can
/// neither see, release nor renew the other's, and to it the other's lock looks like no lock.
pub async fn tenants_are_independent_namespaces(h: &dyn Harness) {
    let repo = h.open().await;
    let (acme, globex) = (
        Tenant::parse("acme").expect("tenant"),
        Tenant::parse("globex").expect("tenant"),
    );
    let acquire =
        |t: &Tenant| repo.acquire(t.clone(), name("shared"), owner("worker"), ttl(30), None);
    let AcquireOutcome::Granted(a) = acquire(&acme).await.expect("answers") else {
        panic!("acme is granted its lock")
    };
    assert_eq!(
        repo.status(globex.clone(), name("shared"))
            .await
            .expect("answers"),
        None
    );
    for result in [
        repo.release(globex.clone(), name("shared"), owner("worker"))
            .await
            .expect("answers"),
        repo.release(globex.clone(), name("shared"), owner("intruder"))
            .await
            .expect("answers"),
    ] {
        assert_eq!(
            result,
            ReleaseResult::NotFound,
            "another tenant's lock answers like no lock"
        );
    }
    let renewed = repo
        .renew(
            globex.clone(),
            name("shared"),
            owner("worker"),
            ttl(600),
            None,
        )
        .await
        .expect("answers");
    assert_eq!(renewed, RenewResult::NotFound);
    let AcquireOutcome::Granted(g) = acquire(&globex).await.expect("answers") else {
        panic!("globex is granted its own lock on the same name")
    };
    assert_ne!(g.fencing_token, a.fencing_token);
    assert_eq!(
        repo.release(globex.clone(), name("shared"), owner("worker"))
            .await
            .expect("answers"),
        ReleaseResult::Released(g.fencing_token)
    );
    assert_eq!(
        repo.status(acme.clone(), name("shared"))
            .await
            .expect("answers"),
        Some(a)
    );
    assert_eq!(
        repo.status(tenant(), name("shared"))
            .await
            .expect("answers"),
        None
    );
}
