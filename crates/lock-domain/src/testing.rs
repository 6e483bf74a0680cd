//! Test support shared by every adapter (feature `testing`): a manual clock, an in-memory
//! repository that is the executable reference of the rules, the repository contract suite, and a
//! naive model of the rules that property tests check repositories against.

pub mod calls;
pub mod contract;
mod in_memory;
mod manual_clock;
pub mod model;

pub use in_memory::InMemoryLockRepository;
pub use manual_clock::ManualClock;
