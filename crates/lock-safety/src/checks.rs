//! Direct checks of the classic ways a lock fails, each with a plain message. They need no
//! search, so they also judge a partition whose search ran out of budget. Every check only uses
//! what the clocks prove: an answer's effect happened between its invoke and its completion, a
//! lease is surely held from the completion of the answer that showed it until the earlier of
//! its `expires_at` (less the margin) and the invoke of anything its owner did next on the
//! resource that might have ended or shortened it, or of a force-release that might have ended it.

mod double_grant;
mod holds;
mod lost_acknowledgement;
mod observations;
mod phantom;
mod revival;
mod sessions;
mod token_order;

use crate::history::{History, Op, OpKind};

use self::double_grant::double_grants;
use self::holds::holds;
use self::lost_acknowledgement::lost_acknowledgements;
use self::observations::{may_end_a_lease, observations};
use self::phantom::{phantom_grants, phantom_releases};
use self::revival::revivals;
use self::token_order::token_order;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Two acknowledged holds of different leases overlap in time.
    DoubleGrant,
    /// A token smaller than one seen before, or one token shown for two owners.
    TokenRegression,
    /// A lease seen live after an answer proved it over (released, expired, replaced).
    Revived,
    /// A status read or listing, made while an acknowledged lease was surely held, did not show it.
    LostAcknowledgement,
    /// A lease whose grant no acquire of its owner can explain: its `acquired_at` lies outside
    /// every granted or unknown acquire of that owner (a grant after a definite refusal, say).
    PhantomGrant,
    /// A session kept alive, closed or granted a hold after it was proved over.
    SessionRevived,
    /// A hold of a session seen live after the session was proved over (by an answer, by the
    /// end of its last keepalive, or by another of its holds taken over).
    SessionHoldAfterEnd,
}

impl Kind {
    pub fn title(self) -> &'static str {
        match self {
            Kind::DoubleGrant => "two acknowledged holds overlap",
            Kind::TokenRegression => "fencing tokens went backwards or were reused",
            Kind::Revived => "an ended lease was seen live again",
            Kind::LostAcknowledgement => "an acknowledged lease was not seen by a later read",
            Kind::PhantomGrant => "a lease was granted that no request of its owner explains",
            Kind::SessionRevived => "an ended session lived again",
            Kind::SessionHoldAfterEnd => {
                "a hold of an ended session was seen live (its holds did not end together)"
            }
        }
    }
}

/// One finding: its kind, a sentence, and the operations that show it.
#[derive(Debug, Clone)]
pub struct Finding {
    pub kind: Kind,
    pub resource: String,
    pub message: String,
    pub ops: Vec<usize>,
}

/// Runs every direct check on every resource of the history.
pub fn run(history: &History) -> Vec<Finding> {
    let mut findings = Vec::new();
    for resource in &history.resources {
        let (seen, ended) = observations(history, resource);
        let owner_ops: Vec<&Op> = history
            .ops
            .iter()
            .filter(|op| {
                (&op.resource == resource || op.kind.is_session_wide()) && may_end_a_lease(op)
            })
            .collect();
        let forces: Vec<&Op> = history
            .ops
            .iter()
            .filter(|op| &op.resource == resource && matches!(op.kind, OpKind::ForceRelease { .. }))
            .collect();
        let holds = holds(history, &seen, &owner_ops, &forces);
        double_grants(resource, &holds, &mut findings);
        token_order(resource, &seen, &mut findings);
        revivals(resource, &seen, &ended, &mut findings);
        lost_acknowledgements(resource, &holds, &ended, &mut findings);
        phantom_grants(history, resource, &seen, &mut findings);
        phantom_releases(history, resource, &ended, &mut findings);
    }
    sessions::sessions(history, &mut findings);
    findings
}
