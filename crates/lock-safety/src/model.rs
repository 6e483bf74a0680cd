//! The lock of one resource as a sequential state machine, as docs/api.md describes it: an
//! acquire of a free or expired lock draws a new fencing token larger than every earlier one; the
//! live holder's own acquire re-grants it with the same token and a lease restarted from now;
//! release and renew need the live holder's owner; nothing revives an ended lease.
//!
//! Time. An operation takes effect at one instant `t` that the checker does not know exactly: it
//! knows `lo <= t <= hi` (from the invoke and complete instants of the operations ordered around
//! it, see the search). A lease's end is known as an interval too: from the `expires_at` the
//! server answered, widened by the margin, or, for a grant whose answer was lost, from
//! `lo + ttl` to `hi + ttl`. A lease is surely live at `t` when `hi < end_lo`, surely over when
//! `lo >= end_hi`, and either in between: the model then allows both branches. That keeps it
//! sound (it never assumes more than the clocks prove) while a double grant or a revived lease
//! inside the surely-live window has no explanation.

/// A client's owner string, numbered within one resource's history.
pub type OwnerId = u32;
/// Microseconds since the Unix epoch.
pub type Micros = i64;

/// What an operation asked, in the model's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    Acquire {
        owner: OwnerId,
        ttl: Micros,
    },
    Release {
        owner: OwnerId,
    },
    Renew {
        owner: OwnerId,
        ttl: Micros,
    },
    Read,
    /// lockd's own release of the grant made by operation `grant` (an acquire whose client got
    /// no answer): a waiter that hung up, or a grant committed after its caller was answered 503.
    /// It ends the lease only while that exact grant is the lease.
    Undo {
        grant: u32,
    },
}

/// What the client saw, in the model's terms (`expires` already in microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Granted { token: i64, expires: Micros },
    Held,
    Released,
    Renewed { token: i64, expires: Micros },
    Seen(Option<(OwnerId, i64, Micros)>),
    Forbidden,
    NotFound,
    Unknown,
}

/// A fencing token: known from an answer, or only known to be above a floor (a grant whose
/// answer was lost).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Token {
    Known(i64),
    Above(i64),
}

/// The current lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Hold {
    pub owner: OwnerId,
    pub token: Token,
    /// The lease ends at some instant in `[end_lo, end_hi]` (margins included).
    pub end_lo: Micros,
    pub end_hi: Micros,
    /// The operation that made this grant or last re-granted it (what an [`Call::Undo`] names).
    pub grant: u32,
}

/// The state of one resource's lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct State {
    /// Every new grant draws a token larger than this.
    pub floor: i64,
    pub holder: Option<Hold>,
}

/// The instants an operation may take effect at, and the margin for the server's timestamps.
#[derive(Debug, Clone, Copy)]
pub struct When {
    pub lo: Micros,
    pub hi: Micros,
    pub margin: Micros,
    /// The resource's lock-delay: a lease that ran out keeps its place from other owners until
    /// its end plus this (a released one does not: a release leaves no holder).
    pub lock_delay: Micros,
    /// The whole span the operation may take effect in (its invoke to its deadline), whatever
    /// the search's order: a lease whose grant or renew went unanswered ends `ttl` after some
    /// instant of it. (Using the span, not `[lo, hi]`, is a little weaker but makes the state
    /// independent of where the search placed the operation, so paths merge.)
    pub window: (Micros, Micros),
}

impl When {
    fn ends(&self, ttl: Micros) -> (Micros, Micros) {
        (
            self.window
                .0
                .saturating_add(ttl)
                .saturating_sub(self.margin),
            self.window
                .1
                .saturating_add(ttl)
                .saturating_add(self.margin),
        )
    }

    fn answered(&self, expires: Micros) -> (Micros, Micros) {
        (expires - self.margin, expires + self.margin)
    }
}

impl Hold {
    /// Whether the lease may still be live at some instant in `[lo, hi]`.
    fn may_be_live(&self, when: &When) -> bool {
        when.lo < self.end_hi
    }

    /// Whether the lease may have ended by some instant in `[lo, hi]`.
    fn may_be_over(&self, when: &When) -> bool {
        when.hi >= self.end_lo
    }

    /// Whether `owner` may take the lease's place at some instant in `[lo, hi]`: it may have
    /// ended, and for another owner its lock-delay may be over too.
    fn may_be_taken_by(&self, owner: OwnerId, when: &When) -> bool {
        self.may_be_over(when)
            && (self.owner == owner || when.hi >= self.end_lo.saturating_add(when.lock_delay))
    }

    /// Whether the lease may still keep its place from `owner` at some instant in `[lo, hi]`:
    /// live, or (for another owner) in its lock-delay.
    fn may_keep_from(&self, owner: OwnerId, when: &When) -> bool {
        self.owner != owner && when.lo < self.end_hi.saturating_add(when.lock_delay)
    }

    fn token_is(&self, token: i64) -> bool {
        match self.token {
            Token::Known(known) => known == token,
            Token::Above(floor) => token > floor,
        }
    }
}

/// The states the lock may be in after `call` answered `ret` at some instant of `when`, made by
/// operation number `op`. Empty when the answer cannot be explained from `state`. An unknown
/// answer lists each effect the operation may have had (its not having happened at all is the
/// search's business, not listed here).
// Each arm states its own precondition inside it: a match guard would fall through to the
// catch-all arm, which reads as if the pairing were impossible.
#[allow(clippy::collapsible_match)]
pub fn step(state: &State, call: Call, ret: Ret, when: &When, op: u32) -> Vec<State> {
    let mut next = Vec::new();
    let live = state.holder.filter(|h| h.may_be_live(when));
    // The lock may be free: no holder, or the holder's lease may have ended.
    let may_be_free = state.holder.is_none_or(|h| h.may_be_over(when));
    let freed = State {
        floor: state.floor,
        holder: None,
    };
    // The place is free for an acquire by `owner`: no holder, or its lease may have ended and
    // (for another owner) its lock-delay may be over.
    let may_take = |owner: OwnerId| state.holder.is_none_or(|h| h.may_be_taken_by(owner, when));
    match (call, ret) {
        (Call::Acquire { owner, .. }, Ret::Granted { token, expires }) => {
            let (end_lo, end_hi) = when.answered(expires);
            if may_take(owner) && token > state.floor {
                next.push(State {
                    floor: token,
                    holder: Some(Hold {
                        owner,
                        token: Token::Known(token),
                        end_lo,
                        end_hi,
                        grant: op,
                    }),
                });
            }
            if let Some(h) = live.filter(|h| h.owner == owner && h.token_is(token)) {
                next.push(State {
                    floor: state.floor.max(token),
                    holder: Some(Hold {
                        token: Token::Known(token),
                        end_lo,
                        end_hi,
                        grant: op,
                        ..h
                    }),
                });
            }
        }
        (Call::Acquire { owner, .. }, Ret::Held) => {
            if live.is_some_and(|h| h.owner != owner)
                || state.holder.is_some_and(|h| h.may_keep_from(owner, when))
            {
                next.push(*state);
            }
        }
        (Call::Acquire { owner, ttl }, Ret::Unknown) => {
            let (end_lo, end_hi) = when.ends(ttl);
            if may_take(owner) {
                next.push(State {
                    floor: state.floor + 1,
                    holder: Some(Hold {
                        owner,
                        token: Token::Above(state.floor),
                        end_lo,
                        end_hi,
                        grant: op,
                    }),
                });
            }
            if let Some(h) = live.filter(|h| h.owner == owner) {
                next.push(State {
                    floor: state.floor,
                    holder: Some(Hold {
                        end_lo,
                        end_hi,
                        grant: op,
                        ..h
                    }),
                });
            }
            if live.is_some_and(|h| h.owner != owner)
                || state.holder.is_some_and(|h| h.may_keep_from(owner, when))
            {
                next.push(*state);
            }
        }
        (Call::Release { owner }, Ret::Released) => {
            if live.is_some_and(|h| h.owner == owner) {
                next.push(freed);
            }
        }
        (Call::Release { owner }, Ret::Unknown) => {
            if live.is_some_and(|h| h.owner == owner) {
                next.push(freed);
            }
            next.push(*state);
        }
        (Call::Renew { owner, .. }, Ret::Renewed { token, expires }) => {
            if let Some(h) = live.filter(|h| h.owner == owner && h.token_is(token)) {
                let (end_lo, end_hi) = when.answered(expires);
                next.push(State {
                    floor: state.floor.max(token),
                    holder: Some(Hold {
                        token: Token::Known(token),
                        end_lo,
                        end_hi,
                        ..h
                    }),
                });
            }
        }
        (Call::Renew { owner, ttl }, Ret::Unknown) => {
            if let Some(h) = live.filter(|h| h.owner == owner) {
                let (end_lo, end_hi) = when.ends(ttl);
                next.push(State {
                    floor: state.floor,
                    holder: Some(Hold {
                        end_lo,
                        end_hi,
                        ..h
                    }),
                });
            }
            next.push(*state);
        }
        (Call::Release { owner } | Call::Renew { owner, .. }, Ret::Forbidden) => {
            if live.is_some_and(|h| h.owner != owner) {
                next.push(*state);
            }
        }
        (
            Call::Release { .. } | Call::Renew { .. } | Call::Read,
            Ret::NotFound | Ret::Seen(None),
        ) => {
            if may_be_free {
                // The lease is over by `hi`. Under a lock-delay it still keeps its place from
                // other owners for a while (a 404 shows no lease, not a free place): keep it,
                // ended by `hi` at the latest.
                match state.holder {
                    Some(h) if when.lock_delay > 0 => next.push(State {
                        floor: state.floor,
                        holder: Some(Hold {
                            end_hi: h.end_hi.min(when.hi.max(h.end_lo)),
                            ..h
                        }),
                    }),
                    _ => next.push(freed),
                }
            }
        }
        (Call::Read, Ret::Seen(Some((owner, token, expires)))) => {
            if let Some(h) = live.filter(|h| h.owner == owner && h.token_is(token)) {
                let end_lo = h.end_lo.max(expires - when.margin);
                let end_hi = h.end_hi.min(expires + when.margin);
                if end_lo <= end_hi && when.lo < end_hi {
                    next.push(State {
                        floor: state.floor.max(token),
                        holder: Some(Hold {
                            token: Token::Known(token),
                            end_lo,
                            end_hi,
                            ..h
                        }),
                    });
                }
            }
        }
        (Call::Read, Ret::Unknown) => next.push(*state),
        (Call::Undo { grant }, _) => {
            if state.holder.is_some_and(|h| h.grant == grant) {
                next.push(freed);
            }
            next.push(*state);
        }
        // Any other pairing is an answer the operation cannot give.
        _ => {}
    }
    next
}

#[cfg(test)]
mod tests {
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
                Call::Acquire { owner, ttl: 5 * S },
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
                ttl: 5 * S
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
                ttl: 5 * S
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
            Call::Release { owner: 1 },
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
}
