//! The model's steps pinned to the microsecond: grants, refusals, renewals, undos and the
//! lock-delay, each with the instants that make it possible or not.

use super::*;

const S: Micros = 1_000_000;

fn at(lo: Micros, hi: Micros) -> When {
    When {
        lo,
        hi,
        margin: 50_000,
        lock_delay: 0,
        window: (lo, hi),
    }
}

fn delayed(lo: Micros, hi: Micros, lock_delay: Micros) -> When {
    When {
        lock_delay,
        ..at(lo, hi)
    }
}

#[test]
fn a_lease_that_ran_out_keeps_its_place_from_others_for_the_lock_delay() {
    // Owner 0's lease ends at 10 s; the resource's lock-delay is 2 s.
    let state = held(0, 5, 10 * S);
    let grant = |owner, at_s: Micros| {
        step(
            &state,
            Call::Acquire {
                owner,
                ttl: 5 * S,
                session: false,
            },
            Ret::Granted {
                token: 6,
                expires: at_s * S + 5 * S,
            },
            &delayed(at_s * S, at_s * S + 1_000, 2 * S),
            1,
        )
    };
    assert!(grant(1, 11).is_empty(), "another owner, inside the delay");
    assert!(!grant(1, 13).is_empty(), "another owner, after it");
    assert!(!grant(0, 11).is_empty(), "its own owner comes back");
    let refused = |at_s: Micros| {
        step(
            &state,
            Call::Acquire {
                owner: 1,
                ttl: 5 * S,
                session: false,
            },
            Ret::Held,
            &delayed(at_s * S, at_s * S + 1_000, 2 * S),
            1,
        )
    };
    assert_eq!(refused(11), vec![state], "refused inside the delay");
    // A read that finds no lease there does not end the delay.
    let read = step(
        &state,
        Call::Read,
        Ret::Seen(None),
        &delayed(11 * S, 11 * S + 1_000, 2 * S),
        1,
    );
    assert_eq!(read.len(), 1);
    let after_read = &read[0];
    assert!(after_read.holder.is_some(), "the lease keeps its place");
    assert!(step(
        after_read,
        Call::Acquire {
            owner: 1,
            ttl: 5 * S,
            session: false,
        },
        Ret::Granted {
            token: 6,
            expires: 16 * S
        },
        &delayed(11 * S + 2_000, 11 * S + 3_000, 2 * S),
        2,
    )
    .is_empty());
    assert!(refused(13).is_empty(), "no reason to refuse after it");
    // Without a delay, the same grant at 11 s is fine.
    assert!(!step(
        &state,
        Call::Acquire {
            owner: 1,
            ttl: 5 * S,
            session: false,
        },
        Ret::Granted {
            token: 6,
            expires: 16 * S
        },
        &at(11 * S, 11 * S + 1_000),
        1,
    )
    .is_empty());
}

fn held(owner: OwnerId, token: i64, end: Micros) -> State {
    State {
        floor: token,
        holder: Some(Hold {
            owner,
            token: Token::Known(token),
            end_lo: end - 50_000,
            end_hi: end + 50_000,
            grant: 0,
        }),
    }
}

#[test]
fn a_free_lock_is_granted_with_a_larger_token_only() {
    let free = State::default();
    let when = at(0, 10_000);
    let grant = |token| Ret::Granted {
        token,
        expires: 5 * S,
    };
    let call = Call::Acquire {
        owner: 1,
        ttl: 5 * S,
        session: false,
    };
    assert_eq!(step(&free, call, grant(1), &when, 1).len(), 1);
    let after = held(2, 7, 100 * S);
    assert!(step(&after, call, grant(8), &at(200 * S, 201 * S), 1).len() == 1);
    assert!(step(&after, call, grant(7), &at(200 * S, 201 * S), 1).is_empty());
    assert!(step(&after, call, grant(6), &at(200 * S, 201 * S), 1).is_empty());
}

#[test]
fn a_live_lease_of_another_owner_is_not_granted() {
    let state = held(2, 7, 10 * S);
    let call = Call::Acquire {
        owner: 1,
        ttl: 5 * S,
        session: false,
    };
    let ret = Ret::Granted {
        token: 8,
        expires: 10 * S,
    };
    assert!(step(&state, call, ret, &at(S, 2 * S), 1).is_empty());
    // Near the end of the lease either is possible.
    assert_eq!(step(&state, call, ret, &at(9 * S, 10 * S), 1).len(), 1);
    assert_eq!(
        step(&state, call, Ret::Held, &at(9 * S, 10 * S), 1).len(),
        1
    );
    // Surely after it, the lock is free: held is no answer.
    assert!(step(&state, call, Ret::Held, &at(11 * S, 12 * S), 1).is_empty());
}

#[test]
fn a_renew_never_revives_an_ended_lease() {
    let state = held(1, 7, 10 * S);
    let call = Call::Renew {
        owner: 1,
        ttl: 5 * S,
    };
    let ret = Ret::Renewed {
        token: 7,
        expires: 16 * S,
    };
    assert_eq!(step(&state, call, ret, &at(S, 2 * S), 1).len(), 1);
    assert!(step(&state, call, ret, &at(11 * S, 11 * S), 1).is_empty());
    let released = step(
        &state,
        Call::Release {
            owner: 1,
            session: false,
        },
        Ret::Released,
        &at(S, S),
        1,
    );
    assert!(step(&released[0], call, ret, &at(2 * S, 2 * S), 1).is_empty());
}

#[test]
fn an_undo_ends_only_its_own_grant() {
    let mut state = held(1, 7, 10 * S);
    let undo = Call::Undo { grant: 0 };
    assert_eq!(step(&state, undo, Ret::Unknown, &at(S, S), 9).len(), 2);
    state.holder.as_mut().unwrap().grant = 3;
    assert_eq!(step(&state, undo, Ret::Unknown, &at(S, S), 9), vec![state]);
}

#[test]
fn a_force_release_ends_the_live_lease_whoever_holds_it() {
    let state = held(2, 7, 10 * S);
    let force = |ret| step(&state, Call::ForceRelease, ret, &at(S, 2 * S), 1);
    let after = force(Ret::ForceReleased(Some((2, 7))));
    assert_eq!(
        after,
        vec![State {
            floor: 7,
            holder: None
        }]
    );
    assert!(
        force(Ret::ForceReleased(Some((2, 6)))).is_empty(),
        "another token"
    );
    assert!(
        force(Ret::ForceReleased(Some((1, 7)))).is_empty(),
        "another owner"
    );
    assert!(
        force(Ret::ForceReleased(None)).is_empty(),
        "no lease, or two"
    );
    assert!(force(Ret::NotFound).is_empty(), "the lease was surely live");
    // Another owner is granted at once, with a larger token; the old holder renews no more.
    let grant = |token| {
        step(
            &after[0],
            Call::Acquire {
                owner: 1,
                ttl: 5 * S,
                session: false,
            },
            Ret::Granted {
                token,
                expires: 7 * S,
            },
            &at(2 * S, 2 * S + 1_000),
            2,
        )
    };
    assert_eq!(grant(8).len(), 1);
    assert!(grant(7).is_empty());
    let renew = step(
        &after[0],
        Call::Renew {
            owner: 2,
            ttl: 5 * S,
        },
        Ret::Renewed {
            token: 7,
            expires: 7 * S,
        },
        &at(2 * S, 2 * S + 1_000),
        2,
    );
    assert!(renew.is_empty());
    // Unanswered, it may have ended the lease or not.
    assert_eq!(force(Ret::Unknown).len(), 2);
}

#[test]
fn a_force_release_ends_a_lock_delay_too() {
    // Owner 0's lease ran out at 10 s; the lock-delay is 2 s; nothing is live at 11 s.
    let state = held(0, 5, 10 * S);
    let after = step(
        &state,
        Call::ForceRelease,
        Ret::NotFound,
        &delayed(11 * S, 11 * S + 1_000, 2 * S),
        1,
    );
    assert_eq!(
        after,
        vec![State {
            floor: 5,
            holder: None
        }]
    );
    let granted = step(
        &after[0],
        Call::Acquire {
            owner: 1,
            ttl: 5 * S,
            session: false,
        },
        Ret::Granted {
            token: 6,
            expires: 16 * S,
        },
        &delayed(11 * S + 2_000, 11 * S + 3_000, 2 * S),
        2,
    );
    assert_eq!(granted.len(), 1, "free at once, inside the delay");
}

#[test]
fn a_keepalive_moves_a_session_hold_and_never_revives_it() {
    // Session 3's hold ends at 10 s.
    let state = held(3, 5, 10 * S);
    let keep = |when: &When| {
        step(
            &state,
            Call::KeepAlive {
                owner: 3,
                ttl: 5 * S,
            },
            Ret::Kept { expires: 14 * S },
            when,
            1,
        )
    };
    let kept = keep(&at(9 * S, 9 * S + 1_000));
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].holder.map(|h| h.end_lo), Some(14 * S - 50_000));
    // Its hold surely over, the session surely ended: a keepalive that succeeded has no
    // explanation.
    assert!(keep(&at(11 * S, 11 * S + 1_000)).is_empty());
    // Another holder's lease is no business of the session's.
    let other = held(2, 5, 10 * S);
    let after = step(
        &other,
        Call::KeepAlive {
            owner: 3,
            ttl: 5 * S,
        },
        Ret::Kept { expires: 14 * S },
        &at(11 * S, 11 * S + 1_000),
        1,
    );
    assert_eq!(after, vec![other]);
}

#[test]
fn a_session_that_ended_ended_its_hold() {
    let state = held(3, 5, 10 * S);
    // A 404 while the hold is surely live: the session cannot have ended then.
    for call in [
        Call::KeepAlive {
            owner: 3,
            ttl: 5 * S,
        },
        Call::EndSession { owner: 3 },
    ] {
        assert!(step(&state, call, Ret::NotFound, &at(S, 2 * S), 1).is_empty());
        let over = step(&state, call, Ret::NotFound, &at(11 * S, 12 * S), 1);
        assert_eq!(
            over,
            vec![State {
                floor: 5,
                holder: None
            }]
        );
    }
    // A close answered 204 releases the hold, and only while it may be live.
    let closed = step(
        &state,
        Call::EndSession { owner: 3 },
        Ret::Released,
        &at(S, 2 * S),
        1,
    );
    assert_eq!(
        closed,
        vec![State {
            floor: 5,
            holder: None
        }]
    );
    assert!(step(
        &state,
        Call::EndSession { owner: 3 },
        Ret::Released,
        &at(11 * S, 12 * S),
        1
    )
    .is_empty());
}

#[test]
fn an_unanswered_grant_under_a_session_may_end_at_once() {
    // The session may run out right after the grant: another owner may be granted soon after,
    // not only a TTL later.
    let acquired = step(
        &State::default(),
        Call::Acquire {
            owner: 3,
            ttl: 5 * S,
            session: true,
        },
        Ret::Unknown,
        &at(S, S + 1_000),
        1,
    );
    assert_eq!(acquired.len(), 1);
    let granted = step(
        &acquired[0],
        Call::Acquire {
            owner: 1,
            ttl: 5 * S,
            session: false,
        },
        Ret::Granted {
            token: 9,
            expires: 7 * S,
        },
        &at(2 * S, 2 * S + 1_000),
        2,
    );
    assert_eq!(granted.len(), 1);
    // But not after the session's TTL from its last instant.
    assert_eq!(
        acquired[0].holder.map(|h| h.end_hi),
        Some(6 * S + 1_000 + 50_000)
    );
}
