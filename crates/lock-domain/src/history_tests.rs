use super::*;

fn lease(owner: &str, token: i64, acquired_ms: i64, expires_ms: i64) -> RowLease {
    RowLease {
        owner: Owner::parse(owner).unwrap(),
        fencing_token: token,
        acquired_ms,
        expires_ms,
    }
}

fn shared_row(expires_ms: i64) -> RowLease {
    RowLease {
        owner: Owner::shared_holders(),
        fencing_token: 9,
        acquired_ms: 0,
        expires_ms,
    }
}

/// A row before and after a write, the write's clock, and what the change is named.
type Case = (
    Option<RowLease>,
    Option<RowLease>,
    i64,
    Vec<(HistoryEvent, Side)>,
);

use HistoryEvent::*;
use Side::*;

#[test]
fn every_change_of_a_row_has_one_name() {
    let live = lease("a", 1, 1_000, 31_000);
    let cases: Vec<Case> = vec![
        (None, Some(live.clone()), 1_000, vec![(Granted, After)]),
        // Released by its owner: SQLite deletes the row, PostgreSQL ends it in place.
        (Some(live.clone()), None, 5_000, vec![(Released, Before)]),
        (
            Some(live.clone()),
            Some(lease("a", 1, 5_000, 5_000)),
            5_000,
            vec![(Released, After)],
        ),
        // A sweep of a row that ran out, or of one already recorded as released.
        (Some(live.clone()), None, 31_000, vec![(Expired, Before)]),
        (Some(lease("a", 1, 5_000, 5_000)), None, 90_000, vec![]),
        // A takeover of a lease that ran out; of one that was released (recorded then).
        (
            Some(live.clone()),
            Some(lease("b", 2, 40_000, 70_000)),
            40_000,
            vec![(Expired, Before), (Granted, After)],
        ),
        (
            Some(lease("a", 1, 5_000, 5_000)),
            Some(lease("b", 2, 40_000, 70_000)),
            40_000,
            vec![(Granted, After)],
        ),
        // The same owner after its own lease ran out gets a new token: a new lease.
        (
            Some(live.clone()),
            Some(lease("a", 2, 40_000, 70_000)),
            40_000,
            vec![(Expired, Before), (Granted, After)],
        ),
        (
            Some(live.clone()),
            Some(lease("a", 1, 2_000, 32_000)),
            2_000,
            vec![(Regranted, After)],
        ),
        (
            Some(live.clone()),
            Some(lease("a", 1, 1_000, 45_000)),
            15_000,
            vec![(Renewed, After)],
        ),
        // Ended in place after it had run out (an admin's force-release of a row in its
        // lock-delay): its expiry.
        (
            Some(live.clone()),
            Some(lease("a", 1, 40_000, 40_000)),
            40_000,
            vec![(Expired, After)],
        ),
        // A value set under the lease changes no lease.
        (Some(live.clone()), Some(live.clone()), 15_000, vec![]),
    ];
    for (before, after, now_ms, expected) in cases {
        assert_eq!(
            name_change(before.as_ref(), after.as_ref(), now_ms, None),
            expected,
            "{before:?} -> {after:?} at {now_ms}"
        );
    }
}

#[test]
fn an_ending_said_by_the_write_names_it() {
    let live = lease("a", 1, 1_000, 31_000);
    assert_eq!(
        name_change(Some(&live), None, 5_000, Some(Undone)),
        vec![(Undone, Before)]
    );
    assert_eq!(
        name_change(
            Some(&live),
            Some(&lease("a", 1, 5_000, 5_000)),
            5_000,
            Some(ForceReleased)
        ),
        vec![(ForceReleased, After)]
    );
    // A lease that ran out expired, whatever the write says.
    assert_eq!(
        name_change(Some(&live), None, 31_000, Some(Undone)),
        vec![(Expired, Before)]
    );
    // A grant in the same write is still a grant.
    assert_eq!(
        name_change(None, Some(&live), 1_000, Some(Undone)),
        vec![(Granted, After)]
    );
}

#[test]
fn the_row_of_shared_holders_records_nothing_itself() {
    let live = lease("a", 1, 1_000, 31_000);
    assert_eq!(
        name_change(None, Some(&shared_row(9_000)), 1_000, None),
        vec![]
    );
    assert_eq!(
        name_change(Some(&shared_row(9_000)), None, 99_000, None),
        vec![]
    );
    assert_eq!(
        name_change(Some(&live), Some(&shared_row(99_000)), 40_000, None),
        vec![(Expired, Before)]
    );
    assert_eq!(
        name_change(Some(&shared_row(9_000)), Some(&live), 10_000, None),
        vec![(Granted, After)]
    );
}

#[test]
fn kinds_and_events_read_back_what_they_write() {
    for kind in LeaseKind::ALL {
        assert_eq!(LeaseKind::parse(kind.as_str()), Some(kind));
    }
    for event in HistoryEvent::ALL {
        assert_eq!(HistoryEvent::parse(event.as_str()), Some(event));
    }
    assert_eq!(LeaseKind::parse("Lock"), None);
    assert_eq!(HistoryEvent::parse("regranted"), None);
    assert!(HistoryId::new(0).is_err());
}
