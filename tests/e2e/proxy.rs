//! The TCP proxy between lockd and PostgreSQL that the fault tests cut (`Refuse`, `BlackHole`,
//! `restore`): the one the safety checker's fault injector uses, from `lock-safety`.

pub use lock_safety::proxy::*;
