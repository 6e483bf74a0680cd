//! A model of the lock rules, written apart from them, and a checker that runs a sequence of
//! operations against the model and a [`LeaseStore`](crate::LeaseStore) side by side.
//!
//! The model is deliberately naive (a map and a counter in milliseconds) and shares no code with
//! `decisions.rs`, so a property test that generates sequences of [`Op`]s can catch a rule, an adapter
//! or the reference repository drifting from the documented contract. The strategies that generate
//! the sequences live in the test files, so that this crate does not depend on a property-testing
//! library.
//!
//! The model itself is in `model/naive.rs`; `model/check.rs` runs it beside a repository.

mod check;
mod coverage;
mod naive;
mod tokens;

pub use check::{check_against_model, Divergence};
pub use coverage::Coverage;
pub use naive::{Model, ModelAcquire, ModelLock, ModelRelease};

/// The resources the operations touch: literal data that differs only in case, and a name that
/// would break a query built by string pasting.
pub const RESOURCES: [&str; 3] = ["payment:42", "Payment:42", "x'; DROP TABLE t; -- %_"];

/// The owners the operations act as; two differ only in case.
pub const OWNERS: [&str; 3] = ["alice", "Alice", "bob"];

/// The longest lease an operation asks for, in seconds.
pub const MAX_TTL_SECONDS: u32 = 5;

/// One step of a generated sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Acquire {
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    },
    Release {
        resource: &'static str,
        owner: &'static str,
    },
    Renew {
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    },
    Status {
        resource: &'static str,
    },
    /// Moves the clock forward by this many milliseconds.
    Advance {
        millis: u64,
    },
}

impl Op {
    fn resource(self) -> Option<&'static str> {
        match self {
            Op::Acquire { resource, .. }
            | Op::Release { resource, .. }
            | Op::Renew { resource, .. }
            | Op::Status { resource } => Some(resource),
            Op::Advance { .. } => None,
        }
    }
}
