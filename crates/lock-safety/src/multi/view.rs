//! One resource's operations as the multi-lock checks need them, from whichever history holds the
//! resource (the lock history's listings count for each of its resources): who acted, when, what
//! the answer showed live, and what it proves was not live at one instant of the request.

use std::collections::HashMap;

use crate::history::{is_session_owner, History, Micros, Op, OpKind, Outcome};
use crate::shared::{Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};

/// Which history an operation is in, and its id there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpRef {
    Locks(usize),
    Shared(usize),
}

/// A lease an answer showed live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Shown<'a> {
    pub(super) owner: &'a str,
    pub(super) token: i64,
    pub(super) mode: Mode,
    pub(super) acquired_at: Micros,
}

/// What one definite answer proves about the leases of its resource at one instant of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Proof<'a> {
    /// These were all the live leases (owner, token): a status, a listing, a 404, an exclusive
    /// grant or renewal (its lease alone).
    AllLive(Vec<(&'a str, i64)>),
    /// A shared grant or renewal: the owner's one lease was this one, and no writer held.
    Reader(&'a str, i64),
    /// The owner held no live lease: 403 to its renew or release, its release answered 204, or
    /// (exclusive lock history) its acquire answered "held".
    OwnerHoldsNothing(&'a str),
}

impl Proof<'_> {
    /// Whether the lease `(owner, token)` in `mode` was not live at the answer's instant.
    pub(super) fn ends(&self, owner: &str, token: i64, mode: Mode) -> bool {
        match self {
            Proof::AllLive(live) => !live.contains(&(owner, token)),
            Proof::Reader(o, t) => {
                (*o == owner && *t != token) || (*o != owner && mode == Mode::Exclusive)
            }
            Proof::OwnerHoldsNothing(o) => *o == owner,
        }
    }
}

/// What a force-release may have ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Forced<'a> {
    /// It is no force-release, or its definite answer says it ended nothing (404, 4xx).
    Nothing,
    /// These leases (owner, token), as its answer listed them.
    These(Vec<(&'a str, i64)>),
    /// Unanswered: whatever lease was live.
    Anything,
}

impl Step<'_> {
    /// Whether the step may have ended or shortened the lease `token` of `owner`: one of the
    /// owner's own that may change it, or a force-release that may have ended it.
    pub(super) fn may_end(&self, owner: &str, token: i64) -> bool {
        (self.owner == Some(owner) && self.may_change)
            || match &self.forced {
                Forced::Nothing => false,
                Forced::These(ended) => ended.contains(&(owner, token)),
                Forced::Anything => true,
            }
    }
}

/// One operation on one resource.
#[derive(Debug, Clone)]
pub(super) struct Step<'a> {
    pub(super) op: OpRef,
    pub(super) client: u32,
    pub(super) owner: Option<&'a str>,
    pub(super) invoke: Micros,
    pub(super) complete: Micros,
    /// The completion, or for an unknown outcome the completion plus the horizon.
    pub(super) latest_effect: Micros,
    /// An acquire answered granted or left unknown: it may have (re)granted a lease of its owner,
    /// setting its `acquired_at`.
    pub(super) may_grant: bool,
    /// It may have ended, shortened or restarted its owner's lease: an acquire, renew or release,
    /// unless its definite answer says nothing changed ("held", 403, 404, 409, another 4xx).
    pub(super) may_change: bool,
    /// A force-release (of no owner): the leases it may have ended, whoever held them.
    pub(super) forced: Forced<'a>,
    pub(super) shown: Vec<Shown<'a>>,
    pub(super) proof: Option<Proof<'a>>,
}

/// The steps of every resource of both histories, each resource's in history order.
pub(super) fn steps<'a>(
    locks: &'a History,
    shared: &'a SharedHistory,
) -> HashMap<&'a str, Vec<Step<'a>>> {
    let mut by_resource: HashMap<&str, Vec<Step<'_>>> = HashMap::new();
    for op in &locks.ops {
        // A session's keepalive or close names no resource; the sets are no session's.
        if op.kind.is_session_wide() {
            continue;
        }
        if op.kind == OpKind::List {
            for resource in &locks.resources {
                by_resource
                    .entry(resource)
                    .or_default()
                    .push(lock_step(locks, op, resource));
            }
        } else {
            by_resource
                .entry(&op.resource)
                .or_default()
                .push(lock_step(locks, op, &op.resource));
        }
    }
    for op in &shared.ops {
        by_resource
            .entry(&op.resource)
            .or_default()
            .push(shared_step(shared, op));
    }
    by_resource
}

fn lock_step<'a>(history: &History, op: &'a Op, resource: &str) -> Step<'a> {
    let owner = match &op.kind {
        OpKind::Acquire { owner, .. } | OpKind::Release { owner } | OpKind::Renew { owner, .. } => {
            Some(owner.as_str())
        }
        OpKind::Status
        | OpKind::List
        | OpKind::ForceRelease { .. }
        | OpKind::OpenSession { .. }
        | OpKind::KeepAlive { .. }
        | OpKind::EndSession { .. } => None,
    };
    let exclusive = |l: &'a crate::Lease| Shown {
        owner: &l.owner,
        token: l.token,
        mode: Mode::Exclusive,
        acquired_at: l.acquired_at,
    };
    let (shown, proof) = match &op.outcome {
        Outcome::Granted(l) | Outcome::Renewed(l) | Outcome::Seen(Some(l)) => (
            vec![exclusive(l)],
            Some(Proof::AllLive(vec![(&l.owner, l.token)])),
        ),
        Outcome::Listed(leases) => match leases.iter().find(|l| l.resource == resource) {
            Some(l) => (
                vec![exclusive(l)],
                Some(Proof::AllLive(vec![(&l.owner, l.token)])),
            ),
            None => (Vec::new(), Some(Proof::AllLive(Vec::new()))),
        },
        // An ended session's release finds no hold of it, whoever holds the place.
        Outcome::NotFound if owner.is_some_and(is_session_owner) => {
            (Vec::new(), owner.map(Proof::OwnerHoldsNothing))
        }
        Outcome::Seen(None) | Outcome::NotFound => (Vec::new(), Some(Proof::AllLive(Vec::new()))),
        // At its instant these were the live leases; it ended them.
        Outcome::ForceReleased(ended) => (
            Vec::new(),
            Some(Proof::AllLive(
                ended.iter().map(|e| (e.owner.as_str(), e.token)).collect(),
            )),
        ),
        Outcome::Forbidden | Outcome::Held | Outcome::Released => {
            (Vec::new(), owner.map(Proof::OwnerHoldsNothing))
        }
        Outcome::Failed { .. } | Outcome::Unknown { .. } | Outcome::Kept { .. } => {
            (Vec::new(), None)
        }
    };
    let acquire = matches!(op.kind, OpKind::Acquire { .. });
    let forced = match (&op.kind, &op.outcome) {
        (OpKind::ForceRelease { .. }, Outcome::Unknown { .. }) => Forced::Anything,
        (_, Outcome::ForceReleased(ended)) => {
            Forced::These(ended.iter().map(|e| (e.owner.as_str(), e.token)).collect())
        }
        _ => Forced::Nothing,
    };
    Step {
        op: OpRef::Locks(op.id),
        client: op.client,
        owner,
        invoke: op.invoke,
        complete: op.complete,
        latest_effect: latest(op.complete, op.outcome.is_unknown(), history.horizon_us),
        may_grant: acquire && matches!(op.outcome, Outcome::Granted(_) | Outcome::Unknown { .. }),
        may_change: owner.is_some()
            && !matches!(
                op.outcome,
                Outcome::Held | Outcome::Forbidden | Outcome::NotFound | Outcome::Failed { .. }
            ),
        forced,
        shown,
        proof,
    }
}

fn shared_step<'a>(history: &SharedHistory, op: &'a SharedOp) -> Step<'a> {
    let owner = op.kind.owner();
    let proof = match &op.outcome {
        SharedOutcome::Granted(h) | SharedOutcome::Renewed(h) => Some(match h.mode {
            Mode::Exclusive => Proof::AllLive(vec![(&h.owner, h.token)]),
            Mode::Shared => Proof::Reader(&h.owner, h.token),
        }),
        SharedOutcome::Seen(holders) => Some(Proof::AllLive(
            holders
                .iter()
                .map(|h| (h.owner.as_str(), h.token))
                .collect(),
        )),
        SharedOutcome::NotFound => Some(Proof::AllLive(Vec::new())),
        SharedOutcome::Released | SharedOutcome::Forbidden => owner.map(Proof::OwnerHoldsNothing),
        // "Held" on a resource locked in both modes may come from a writer queued on the instance.
        _ => None,
    };
    let shown = op
        .shown()
        .iter()
        .map(|h| Shown {
            owner: &h.owner,
            token: h.token,
            mode: h.mode,
            acquired_at: h.acquired_at,
        })
        .collect();
    let acquire = matches!(op.kind, SharedOpKind::Acquire { .. });
    Step {
        op: OpRef::Shared(op.id),
        client: op.client,
        owner,
        invoke: op.invoke,
        complete: op.complete,
        latest_effect: op.latest_effect(history.horizon_us),
        may_grant: acquire
            && matches!(
                op.outcome,
                SharedOutcome::Granted(_) | SharedOutcome::Unknown { .. }
            ),
        may_change: owner.is_some()
            && !matches!(
                op.outcome,
                SharedOutcome::Held
                    | SharedOutcome::ModeMismatch
                    | SharedOutcome::Forbidden
                    | SharedOutcome::NotFound
                    | SharedOutcome::Failed { .. }
            ),
        // Force-releases are sent to the exclusive locks only.
        forced: Forced::Nothing,
        shown,
        proof,
    }
}

fn latest(complete: Micros, unknown: bool, horizon: Micros) -> Micros {
    if unknown {
        complete.saturating_add(horizon)
    } else {
        complete
    }
}
