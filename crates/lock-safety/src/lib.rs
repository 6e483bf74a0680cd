//! The safety checker of lockd, in the style of Jepsen's Knossos and Porcupine: a recorded
//! history of lock operations (each with its invoke and complete instants and its answer, or
//! "unknown" when there was none) is checked, resource by resource, against a sequential model
//! of the lock. A linearizability search proves that some order of the operations explains
//! every answer; direct checks look for the classic failures (two holders, a token going
//! backwards, a released lease seen again, an acknowledged grant not seen) and explain them in
//! plain words. Semaphore operations are recorded in a history of their own and get direct
//! checks only ([`permits`]: never more permits held than the limit, fencing tokens), and so
//! do the resources locked in both modes ([`shared`]: no writer beside another holder, fencing
//! tokens, no ended lease in a read). Multi-lock operations are split into those per-resource
//! histories and also kept whole ([`multi`]: no set granted by halves, no refused set leaving a
//! lease behind). After a run, lockd's own durable history of each lock is read back and held
//! to the same story ([`recorded_history`]: one lease at a time, tokens that grow, every
//! acknowledged change recorded, every record explained by a request). The
//! `lock-safety` binary records such histories against real lockd instances while it injects
//! faults; see docs/safety.md.

pub mod checks;
pub mod history;
mod jsonl;
pub mod linearizability;
mod micros;
pub mod model;
pub mod multi;
mod op_line;
pub mod permits;
pub mod proxy;
pub mod recorded_history;
pub mod report;
pub mod shared;
mod tokens;
mod violation;

pub use history::{EndedLease, History, Lease, Op, OpKind, Outcome};
pub use multi::{MultiHistory, MultiOp, MultiOpKind, MultiOutcome};
pub use permits::{PermitHistory, PermitLease, PermitOp, PermitOpKind, PermitOutcome};
pub use report::{check, CheckReport};
pub use shared::{Holder, Mode, SharedHistory, SharedOp, SharedOpKind, SharedOutcome};
