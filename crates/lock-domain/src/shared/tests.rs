use chrono::{DateTime, Utc};

use super::*;

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(1_800_000_000_000 + ms).unwrap()
}

fn owner(raw: &str) -> Owner {
    Owner::parse(raw).unwrap()
}

fn token(value: i64) -> FencingToken {
    FencingToken::new(value).unwrap()
}

fn resource() -> ResourceName {
    ResourceName::parse("r").unwrap()
}

fn reader(who: &str, expires_ms: i64, fencing: i64) -> Lease {
    shared_lease(owner(who), at(0), at(expires_ms), token(fencing), None)
}

fn exclusive(who: &str, expires_ms: i64) -> Lock {
    Lock {
        resource: resource(),
        owner: owner(who),
        acquired_at: at(0),
        expires_at: at(expires_ms),
        fencing_token: token(9),
        mode: LockMode::Exclusive,
        value: None,
    }
}

fn row_of(readers: &[Lease], now_ms: i64) -> Option<Lock> {
    shared_row(&resource(), readers, at(now_ms))
}

#[test]
fn the_row_stands_for_the_live_readers() {
    let readers = vec![reader("a", 1_000, 3), reader("b", 2_000, 2)];
    let row = row_of(&readers, 0).unwrap();
    assert!(row.owner.is_shared_holders());
    assert_eq!(row.expires_at, at(2_000));
    assert_eq!(row.fencing_token, token(3));
    // Once `b` alone is live, the row is b's; once none is, there is no row.
    assert_eq!(row_of(&readers, 1_000).unwrap().fencing_token, token(2));
    assert_eq!(row_of(&readers, 2_000), None);
    assert_eq!(row_of(&[], 0), None);
}

/// One case of a shared acquire: the row, the readers, who asks when, and the decision.
/// What a shared acquire comes to, in short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shared {
    GrantNew,
    Extend(FencingToken),
    Held,
    ModeMismatch,
}

type SharedCase = (Option<Lock>, Vec<Lease>, &'static str, i64, Shared);

/// A shared acquire as the one decision takes it: the exclusive holder's row (never the row
/// that stands for readers) and every reader, none with a lock-delay.
fn decide_shared(row: Option<&Lock>, readers: &[Lease], who: &str, now: i64) -> Shared {
    let place = crate::Place::Lock(resource());
    let mut kept: Vec<(Lease, i64)> = row
        .filter(|row| !row.owner.is_shared_holders())
        .map(|row| (crate::Grant::of_lock(row.clone()).lease, 0))
        .into_iter()
        .collect();
    kept.extend(readers.iter().map(|lease| (lease.clone(), 0)));
    match crate::decide_claim(&place, &kept, &owner(who), crate::Claim::Shared, at(now)) {
        crate::ClaimDecision::GrantNew => Shared::GrantNew,
        crate::ClaimDecision::Extend(token) => Shared::Extend(token),
        crate::ClaimDecision::Refused(crate::Refusal::ModeMismatch(LockMode::Exclusive)) => {
            Shared::ModeMismatch
        }
        crate::ClaimDecision::Refused(crate::Refusal::Held { .. }) => Shared::Held,
        other => panic!("a shared acquire cannot come to {other:?}"),
    }
}

#[test]
fn shared_acquire_table() {
    use Shared::*;
    let readers = vec![reader("a", 1_000, 3), reader("b", 2_000, 4)];
    let marker = row_of(&readers, 0);
    let cases: Vec<SharedCase> = vec![
        (None, vec![], "me", 0, GrantNew),
        (marker.clone(), readers.clone(), "me", 0, GrantNew),
        (marker.clone(), readers.clone(), "a", 0, Extend(token(3))),
        // a's lease ended: a new grant.
        (marker.clone(), readers.clone(), "a", 1_000, GrantNew),
        // The row ended: whatever leases remain are over.
        (marker.clone(), readers.clone(), "b", 2_000, GrantNew),
        (Some(exclusive("w", 1_000)), vec![], "me", 0, Held),
        (Some(exclusive("w", 1_000)), vec![], "w", 0, ModeMismatch),
        (Some(exclusive("w", 1_000)), vec![], "w", 1_000, GrantNew),
        (Some(exclusive("w", 1_000)), vec![], "me", 1_000, GrantNew),
    ];
    for (row, shared, who, now, expected) in cases {
        assert_eq!(
            decide_shared(row.as_ref(), &shared, who, now),
            expected,
            "{who} at {now} with {row:?}"
        );
    }
}

#[test]
fn the_exclusive_rule_meets_readers_as_another_owner() {
    let readers = vec![reader("a", 1_000, 3)];
    let marker = row_of(&readers, 0);
    let me = owner("a");
    // The v1 decisions on the row alone refuse even a reader that is the caller: an exclusive
    // acquire by a reader is a mode mismatch, never a grant beside the readers.
    assert_eq!(
        crate::decide_acquire(marker.as_ref(), &me, at(0)),
        crate::AcquireDecision::Deny
    );
    assert_eq!(
        crate::decide_acquire(marker.as_ref(), &me, at(1_000)),
        crate::AcquireDecision::GrantNew
    );
}

#[test]
fn holder_roles() {
    let readers = vec![reader("a", 1_000, 3), reader("b", 2_000, 4)];
    let marker = row_of(&readers, 0);
    let cases: Vec<(Option<Lock>, &str, i64, HolderRole)> = vec![
        (None, "a", 0, HolderRole::NotFound),
        (marker.clone(), "a", 0, HolderRole::Shared(token(3))),
        (marker.clone(), "c", 0, HolderRole::Forbidden),
        (marker.clone(), "a", 1_000, HolderRole::Forbidden),
        (marker.clone(), "b", 2_000, HolderRole::NotFound),
        (
            Some(exclusive("w", 1_000)),
            "w",
            0,
            HolderRole::Exclusive(token(9)),
        ),
        (Some(exclusive("w", 1_000)), "a", 0, HolderRole::Forbidden),
        (
            Some(exclusive("w", 1_000)),
            "w",
            1_000,
            HolderRole::NotFound,
        ),
    ];
    for (row, who, now, expected) in cases {
        assert_eq!(
            holder_role(row.as_ref(), &readers, &owner(who), at(now)),
            expected,
            "{who} at {now}"
        );
    }
    assert_eq!(
        HolderRole::Shared(token(3)).release_result(),
        ReleaseResult::Released(token(3))
    );
}

#[test]
fn holds_as_a_status_read_shows_them() {
    let readers = vec![reader("b", 2_000, 4), reader("a", 1_000, 3)];
    let marker = row_of(&readers, 0);
    let Some(Hold::Shared(holders)) = hold_of(&resource(), marker.as_ref(), &readers, at(0)) else {
        panic!("a shared hold");
    };
    let tokens: Vec<i64> = holders.iter().map(|l| l.fencing_token.value()).collect();
    assert_eq!(tokens, [3, 4]);
    assert!(holders.iter().all(|l| l.mode == LockMode::Shared));
    assert_eq!(
        hold_of(&resource(), marker.as_ref(), &readers, at(2_000)),
        None
    );
    let writer = exclusive("w", 1_000);
    assert_eq!(
        hold_of(&resource(), Some(&writer), &[], at(0)),
        Some(Hold::Exclusive(writer.clone()))
    );
}

#[test]
fn undo_ends_only_the_exact_new_grant() {
    let lease = reader("a", 1_000, 3);
    let grant = shared_lock(&resource(), &lease);
    assert!(decide_shared_undo(
        &resource(),
        Some(&lease),
        false,
        &grant,
        at(0)
    ));
    assert!(!decide_shared_undo(
        &resource(),
        Some(&lease),
        true,
        &grant,
        at(0)
    ));
    assert!(!decide_shared_undo(
        &resource(),
        Some(&lease),
        false,
        &grant,
        at(1_000)
    ));
    let renewed = reader("a", 1_500, 3);
    assert!(!decide_shared_undo(
        &resource(),
        Some(&renewed),
        false,
        &grant,
        at(0)
    ));
    assert!(!decide_shared_undo(&resource(), None, false, &grant, at(0)));
}

#[test]
fn a_hold_says_in_which_mode_an_owner_holds_it() {
    let readers = vec![reader("a", 1_000, 3)];
    let Some(shared) = hold_of(&resource(), row_of(&readers, 0).as_ref(), &readers, at(0)) else {
        panic!("a shared hold");
    };
    assert_eq!(shared.mode_of(&owner("a")), Some(LockMode::Shared));
    assert_eq!(shared.mode_of(&owner("b")), None);
    let writer = Hold::Exclusive(exclusive("w", 1_000));
    assert_eq!(writer.mode_of(&owner("w")), Some(LockMode::Exclusive));
    assert_eq!(writer.mode_of(&owner("a")), None);
}
