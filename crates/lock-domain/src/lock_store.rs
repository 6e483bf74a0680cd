//! [`LockStore`]: a store that implements every port the use cases run over, named once so that
//! whatever takes "a whole store" says so in one word.

use crate::{HistoryRepository, LeaseStore, LeaseUsage, SessionStore};

/// Every port of the use cases from one store: its leases (of every primitive), its sessions,
/// its history and the count of live leases. Implemented by every type that implements them all (the reference
/// store, the diesel store); never implemented by hand.
pub trait LockStore: LeaseStore + SessionStore + HistoryRepository + LeaseUsage {}

impl<S> LockStore for S where S: LeaseStore + SessionStore + HistoryRepository + LeaseUsage {}
