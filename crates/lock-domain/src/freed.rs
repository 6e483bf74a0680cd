//! Hints that a lock may have become free: what a store can tell the service about releases made
//! by other processes, so that acquires waiting in this process need not poll for them.

use async_trait::async_trait;

use crate::{ResourceName, Tenant};

/// A hint that a lock may be free now. Hints may come late, twice, or for a lock that has been
/// granted again since: a receiver only uses them to decide when to try an acquire, never as
/// proof that the lock is free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Freed {
    /// The lock on `resource` of `tenant` was released, or its lease was shortened.
    Lock {
        tenant: Tenant,
        resource: ResourceName,
    },
    /// Permits of semaphore `name` of `tenant` were released, or a grant was shortened.
    Permits { tenant: Tenant, name: ResourceName },
    /// Any lock, and any permit, may be free, and which is not known: hints may have been
    /// missed (the subscription was interrupted and has resumed), or the store can only tell
    /// that another process wrote (SQLite). The receiver looks at everything it waits for.
    Unknown,
}

/// A subscription to [`Freed`] hints from every process that shares the storage (this one too,
/// on PostgreSQL; see [`crate::FreedHints::subscribe_freed`], which opens it).
#[async_trait]
pub trait FreedLocks: Send {
    /// Waits for the next hint. Returns `None` once the subscription has ended for good; the
    /// caller then has to look for freed locks itself (poll).
    async fn next(&mut self) -> Option<Freed>;

    /// Tells whether the subscriber has anyone to wake now (a subscription starts with nobody).
    /// The subscriber takes hints either way. A store MAY stop looking for hints while they are
    /// not wanted, if the first hint after they are wanted again covers whatever was freed
    /// meanwhile (SQLite's writer does). The default ignores it.
    fn wanted(&mut self, wanted: bool) {
        let _ = wanted;
    }
}
