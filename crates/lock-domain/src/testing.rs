//! Test support shared by every adapter (feature `testing`): a manual clock, an in-memory
//! repository that is the executable reference of the rules, and the repository contract suite.

pub mod contract;
mod in_memory;
mod manual_clock;

pub use in_memory::InMemoryLockRepository;
pub use manual_clock::ManualClock;
