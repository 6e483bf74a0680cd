//! A lease that ran out, as a store hands it to metrics: what it was and how long it was held.
//! The store notes one wherever it records a lease's end as `expired` in the history (a takeover,
//! the sweeper, an observer's record of the expiry), by the same rule ([`crate::name_change`]),
//! whether or not it keeps a history. A session's hold ran out at its session's end.

use std::time::Duration;

use crate::LeaseKind;

/// One lease that ran out (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiredHold {
    /// A lock (exclusive, or a reader's with `shared`), a semaphore's permits or an election's
    /// term.
    pub kind: LeaseKind,
    /// A reader of a lock held in shared mode.
    pub shared: bool,
    /// From its grant (or its owner's last re-grant) to the instant it ran out.
    pub held: Duration,
}

impl ExpiredHold {
    /// The hold that a lease granted (or re-granted) at `acquired_ms` and running out at
    /// `expires_ms` was, or `None` for a row that is no lease that ran out: ended in place
    /// (`acquired_ms = expires_ms`), or a hold of a live session, whose row says "while the
    /// session lives".
    pub fn of_row(
        kind: LeaseKind,
        shared: bool,
        acquired_ms: i64,
        expires_ms: i64,
    ) -> Option<Self> {
        if expires_ms == crate::Session::HELD_WHILE_LIVE_MS || expires_ms <= acquired_ms {
            return None;
        }
        let held = u64::try_from(expires_ms - acquired_ms).ok()?;
        Some(Self {
            kind,
            shared,
            held: Duration::from_millis(held),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_was_held_from_its_grant_to_its_end() {
        assert_eq!(
            ExpiredHold::of_row(LeaseKind::Semaphore, false, 1_000, 31_500),
            Some(ExpiredHold {
                kind: LeaseKind::Semaphore,
                shared: false,
                held: Duration::from_millis(30_500)
            })
        );
    }

    #[test]
    fn rows_that_cannot_run_out_are_no_holds() {
        assert_eq!(ExpiredHold::of_row(LeaseKind::Lock, false, 5, 5), None);
        assert_eq!(ExpiredHold::of_row(LeaseKind::Lock, false, 6, 5), None);
        assert_eq!(
            ExpiredHold::of_row(
                LeaseKind::Lock,
                false,
                5,
                crate::Session::HELD_WHILE_LIVE_MS
            ),
            None
        );
    }
}
