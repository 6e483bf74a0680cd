//! The lock of one resource as a sequential state machine, as docs/api.md describes it: an
//! acquire of a free or expired lock draws a new fencing token larger than every earlier one; the
//! live holder's own acquire re-grants it with the same token and a lease restarted from now;
//! release and renew need the live holder's owner; nothing revives an ended lease. An admin's
//! force-release ends whatever lease is there, whoever holds it, and any lock-delay with it.
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
    /// An acquire; under a session (`session`), the lease's end is the session's, not the
    /// acquire's instant plus `ttl`: somewhere from that instant (the session may run out right
    /// after) to that instant plus the session's TTL (`ttl`).
    Acquire {
        owner: OwnerId,
        ttl: Micros,
        session: bool,
    },
    /// A release; of a session's hold (`session`), a 404 says the session holds nothing live
    /// here, whoever else may: an ended session's release finds every hold ended with it.
    Release {
        owner: OwnerId,
        session: bool,
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
    /// An admin's force-release: it ends the live lease, whoever holds it, and any lock-delay
    /// of an ended one, so that the lock is free at once.
    ForceRelease,
    /// A keepalive of the session `owner`: its hold here, if any, now ends at the session's new
    /// end. A session that ended is never kept alive again.
    KeepAlive {
        owner: OwnerId,
        ttl: Micros,
    },
    /// The close of the session `owner`: its hold here, if any, is released with every other.
    EndSession {
        owner: OwnerId,
    },
}

/// What the client saw, in the model's terms (`expires` already in microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ret {
    Granted {
        token: i64,
        expires: Micros,
    },
    Held,
    Released,
    Renewed {
        token: i64,
        expires: Micros,
    },
    Seen(Option<(OwnerId, i64, Micros)>),
    Forbidden,
    NotFound,
    /// A force-release's 200: the one lease it ended (owner, token). `None` when the answer
    /// listed no lease or several, which no state of an exclusive lock explains.
    ForceReleased(Option<(OwnerId, i64)>),
    /// A keepalive's 200: the session lives until `expires`.
    Kept {
        expires: Micros,
    },
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

    /// The end of a lease held under a session, granted at some instant of the window: the
    /// session lived then, and ends at most `ttl` after it.
    fn session_ends(&self, ttl: Micros) -> (Micros, Micros) {
        (
            self.window.0.saturating_sub(self.margin),
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
        (
            Call::Acquire {
                owner,
                ttl,
                session,
            },
            Ret::Unknown,
        ) => {
            let (end_lo, end_hi) = if session {
                when.session_ends(ttl)
            } else {
                when.ends(ttl)
            };
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
        (Call::Release { owner, .. }, Ret::Released) => {
            if live.is_some_and(|h| h.owner == owner) {
                next.push(freed);
            }
        }
        (Call::Release { owner, .. }, Ret::Unknown) => {
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
        // Unanswered, a renew or a session's keepalive may have moved the owner's live lease's
        // end to `ttl` after its instant, or not.
        (Call::Renew { owner, ttl } | Call::KeepAlive { owner, ttl }, Ret::Unknown) => {
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
        (Call::Release { owner, .. } | Call::Renew { owner, .. }, Ret::Forbidden) => {
            if live.is_some_and(|h| h.owner != owner) {
                next.push(*state);
            }
        }
        (
            Call::Release { session: false, .. } | Call::Renew { .. } | Call::Read,
            Ret::NotFound | Ret::Seen(None),
        ) => {
            if may_be_free {
                next.push(over_by_hi(state, when));
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
        (Call::ForceRelease, Ret::ForceReleased(Some((owner, token)))) => {
            if live.is_some_and(|h| h.owner == owner && h.token_is(token)) {
                next.push(State {
                    floor: state.floor.max(token),
                    holder: None,
                });
            }
        }
        // Nothing was live; whatever lease had ended is gone, with its lock-delay.
        (Call::ForceRelease, Ret::NotFound) => {
            if may_be_free {
                next.push(freed);
            }
        }
        (Call::ForceRelease, Ret::Unknown) => {
            if state.holder.is_some() {
                next.push(freed);
            }
            next.push(*state);
        }
        (Call::KeepAlive { owner, .. }, Ret::Kept { expires }) => match state.holder {
            // The session lived at this instant, and so did its hold here.
            Some(h) if h.owner == owner => {
                if h.may_be_live(when) {
                    let (end_lo, end_hi) = when.answered(expires);
                    next.push(State {
                        floor: state.floor,
                        holder: Some(Hold {
                            end_lo,
                            end_hi,
                            ..h
                        }),
                    });
                }
            }
            _ => next.push(*state),
        },
        (Call::EndSession { owner }, Ret::Released) => match state.holder {
            // The session lived at this instant, and its hold here ends with it.
            Some(h) if h.owner == owner => {
                if h.may_be_live(when) {
                    next.push(freed);
                }
            }
            _ => next.push(*state),
        },
        (Call::EndSession { owner }, Ret::Unknown) => {
            if state.holder.is_some_and(|h| h.owner == owner) {
                next.push(freed);
            }
            next.push(*state);
        }
        // The session had ended by this instant, and every hold of it with it (a release under
        // a session: or it held nothing here).
        (
            Call::KeepAlive { owner, .. }
            | Call::EndSession { owner }
            | Call::Release {
                owner,
                session: true,
            },
            Ret::NotFound,
        ) => match state.holder {
            Some(h) if h.owner == owner => {
                if h.may_be_over(when) {
                    next.push(over_by_hi(state, when));
                }
            }
            _ => next.push(*state),
        },
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

/// The state once the lease is known over by `hi`: free, or, under a lock-delay, still keeping
/// its place from other owners for a while (a 404 shows no lease, not a free place), ended by
/// `hi` at the latest.
fn over_by_hi(state: &State, when: &When) -> State {
    match state.holder {
        Some(h) if when.lock_delay > 0 => State {
            floor: state.floor,
            holder: Some(Hold {
                end_hi: h.end_hi.min(when.hi.max(h.end_lo)),
                ..h
            }),
        },
        _ => State {
            floor: state.floor,
            holder: None,
        },
    }
}

#[cfg(test)]
mod tests;
