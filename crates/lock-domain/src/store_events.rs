//! The store's outbound port: what a store did on its own, with no caller to answer, that the
//! operators should hear of (the audit log, through the same adapter that reports the use cases'
//! outcomes). Today one thing: a grant that committed after its caller had gone (answered 503, or
//! its request dropped), which the store undoes so that nobody holds a lease no one was told of.

use crate::{FencingToken, LockMode, Owner, ResourceName, Tenant};

/// What an unheard grant was of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnheardKind {
    /// An exclusive lock (or an election's office: its tenant is the election namespace), as
    /// granted by the lock statement.
    Lock,
    /// A lock granted in `mode` by the shared-lock path (a reader, a writer, a member of a set).
    LockInMode(LockMode),
    /// A semaphore grant.
    Permits,
}

/// A grant made after its caller had gone, and what the store did about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnheardGrant {
    /// The tenant the grant was stored under.
    pub tenant: Tenant,
    pub kind: UnheardKind,
    /// The lock's resource or the semaphore's name.
    pub name: ResourceName,
    pub owner: Owner,
    pub fencing_token: FencingToken,
    /// `true`: the store ended it. `false`: the lease was no longer exactly that grant (renewed,
    /// re-granted or ended since), so nothing was touched.
    pub undone: bool,
}

/// Where a store reports what it did on its own. Called on the store's own threads (its writer),
/// never on a request's: an implementation must not block.
pub trait StoreEvents: Send + Sync {
    /// A grant nobody heard of was undone, or left alone (see [`UnheardGrant::undone`]).
    fn unheard_grant(&self, grant: &UnheardGrant);

    /// The sweeper ended `count` sessions that had run out (their holds with them).
    fn sessions_expired(&self, count: usize);
}

/// Reports nothing: for stores opened by tools and tests that keep no audit log.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoStoreEvents;

impl StoreEvents for NoStoreEvents {
    fn unheard_grant(&self, _grant: &UnheardGrant) {}
    fn sessions_expired(&self, _count: usize) {}
}
