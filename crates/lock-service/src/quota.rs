//! Quotas per tenant (`--tenant-limits-file`): how many live leases, waiting acquires and
//! observers a tenant may have, and how long a lease it may ask for. Going over a limit refuses
//! the request before anything is attempted, so it changes nothing.
//!
//! - `max_live_leases` is checked at every grant that would make a new live lease, at the moment
//!   it is made: an immediate attempt, a grant from a waiting queue (locks, readers, permits,
//!   campaigns), each attempt of a waiting set. The store counts the tenant's live leases
//!   ([`lock_domain::LeaseUsage`]) and, within one process, the count and the grant are made
//!   under the tenant's gate, one grant at a time, so the limit holds exactly there. A re-grant
//!   to an owner that already holds the name adds no lease. An acquire that arrives at the limit
//!   is refused at once; a waiting one whose grant would go over when its turn comes keeps its
//!   place (FIFO, and a semaphore's head is still never overtaken) and is granted once a lease
//!   of the tenant has ended, or answered [`QuotaExceeded`] if its wait ends first.
//!   Instances sharing a PostgreSQL database count apart: each has at most one grant of the
//!   tenant in flight, so together they go over by at most one grant (a set: its locks) per
//!   other instance.
//! - `max_waiters` is held exactly, with the server's own limits of waiters.
//! - `max_observers` counts the open observe and event streams of the tenant in this process.
//! - `max_ttl_seconds` bounds every acquire and renew of the tenant.

mod file;

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant};

use lock_domain::{LeaseUsage, RepositoryError, Tenant};
use tokio::sync::{Notify, OwnedMutexGuard};

pub use file::{LimitsFileError, LimitsTable};

/// One of the limits a tenant may be given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    MaxLiveLeases,
    MaxWaiters,
    MaxObservers,
    MaxTtlSeconds,
    /// Live sessions at once, checked when a session opens.
    MaxSessions,
}

impl Limit {
    pub const ALL: [Limit; 5] = [
        Limit::MaxLiveLeases,
        Limit::MaxWaiters,
        Limit::MaxObservers,
        Limit::MaxTtlSeconds,
        Limit::MaxSessions,
    ];

    /// Its key in the limits file, in problems and in metrics.
    pub fn key(self) -> &'static str {
        match self {
            Limit::MaxLiveLeases => "max_live_leases",
            Limit::MaxWaiters => "max_waiters",
            Limit::MaxObservers => "max_observers",
            Limit::MaxTtlSeconds => "max_ttl_seconds",
            Limit::MaxSessions => "max_sessions",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|limit| limit.key() == key)
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// One tenant's limits: `None` where it has none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TenantLimits {
    values: [Option<u64>; 5],
}

impl TenantLimits {
    pub fn get(&self, limit: Limit) -> Option<u64> {
        self.values[limit.index()]
    }

    pub fn set(&mut self, limit: Limit, value: u64) {
        self.values[limit.index()] = Some(value);
    }
}

/// A request refused because it would go over its tenant's `limit`, which is `allowed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaExceeded {
    pub limit: Limit,
    pub allowed: u64,
}

impl std::fmt::Display for QuotaExceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let what = match self.limit {
            Limit::MaxLiveLeases => "live leases at once",
            Limit::MaxWaiters => "waiting acquires at once",
            Limit::MaxObservers => "open observe and event streams at once",
            Limit::MaxTtlSeconds => "seconds of lease length",
            Limit::MaxSessions => "live sessions at once",
        };
        write!(
            f,
            "the tenant's {} allows {} {what}",
            self.limit.key(),
            self.allowed
        )
    }
}

impl std::error::Error for QuotaExceeded {}

/// How much of one limit one tenant uses now, for metrics.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaUsage {
    pub tenant: Tenant,
    pub limit: Limit,
    pub allowed: u64,
    /// `None` for `max_ttl_seconds`, a bound on each request rather than a count; and for live
    /// leases when the store could not count them.
    pub used: Option<u64>,
}

/// How often a waiting grant held back by its tenant's `max_live_leases` looks again, besides
/// when a lease ends through this process: a lease that runs out, or ends through another
/// process, frees a place too.
pub(crate) const QUOTA_RECHECK: Duration = Duration::from_millis(250);

/// The limits in force (replaced whole on a reload) and what this process counts against them.
/// Cheap to clone: clones share everything.
#[derive(Clone)]
pub(crate) struct Quotas {
    shared: Arc<Shared>,
}

struct Shared {
    table: RwLock<LimitsTable>,
    /// Counts a tenant's live leases.
    usage: Arc<dyn LeaseUsage>,
    observers: Mutex<HashMap<Tenant, u64>>,
    /// Per limited tenant: held while its acquires are counted and granted.
    lease_gates: Mutex<HashMap<Tenant, Arc<tokio::sync::Mutex<()>>>>,
    /// Notified when a lease ended through this process, while some grant is held back.
    room: Notify,
    /// Counts those ends: a count that found a tenant full stands only until the next one.
    ended: AtomicU64,
    /// Per tenant, when a count last found it at its limit, and `ended` then.
    full: Mutex<HashMap<Tenant, (Instant, u64)>>,
    /// Grants held back by a quota, waiting for `ended` now.
    held_back: AtomicUsize,
}

/// How [`Quotas::admit`] counts a tenant's live leases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Count {
    /// Counted now, in the store.
    Exact,
    /// A count of a moment ago that found the tenant at its limit may stand (see `admit`).
    Shared,
}

/// Why a grant was not admitted.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// It would go over the tenant's `max_live_leases`.
    Exceeded(QuotaExceeded),
    /// The store could not count.
    Store(RepositoryError),
}

impl From<RepositoryError> for Refusal {
    fn from(error: RepositoryError) -> Self {
        Self::Store(error)
    }
}

fn locked<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Quotas {
    /// No limits yet, counting live leases with `usage`.
    pub(crate) fn new(usage: Arc<dyn LeaseUsage>) -> Self {
        Self {
            shared: Arc::new(Shared {
                table: RwLock::default(),
                usage,
                observers: Mutex::default(),
                lease_gates: Mutex::default(),
                room: Notify::new(),
                ended: AtomicU64::new(0),
                full: Mutex::default(),
                held_back: AtomicUsize::new(0),
            }),
        }
    }

    pub(crate) fn of(&self, tenant: &Tenant) -> TenantLimits {
        self.table().of(tenant)
    }

    pub(crate) fn table(&self) -> LimitsTable {
        self.shared
            .table
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn replace(&self, table: LimitsTable) {
        *self
            .shared
            .table
            .write()
            .unwrap_or_else(PoisonError::into_inner) = table;
    }

    /// A seat for one more observer of `tenant`, given back when dropped.
    pub(crate) fn observer_seat(&self, tenant: &Tenant) -> Result<ObserverSeat, QuotaExceeded> {
        let allowed = self.of(tenant).get(Limit::MaxObservers);
        let mut observers = locked(&self.shared.observers);
        let open = observers.entry(tenant.clone()).or_insert(0);
        if let Some(allowed) = allowed.filter(|allowed| *open >= *allowed) {
            if *open == 0 {
                observers.remove(tenant);
            }
            return Err(QuotaExceeded {
                limit: Limit::MaxObservers,
                allowed,
            });
        }
        *open += 1;
        Ok(ObserverSeat {
            quotas: self.clone(),
            tenant: tenant.clone(),
        })
    }

    pub(crate) fn observers_of(&self, tenant: &Tenant) -> u64 {
        locked(&self.shared.observers)
            .get(tenant)
            .copied()
            .unwrap_or(0)
    }

    fn gate(&self, tenant: &Tenant) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(
            locked(&self.shared.lease_gates)
                .entry(tenant.clone())
                .or_default(),
        )
    }

    /// How many live leases `tenant` holds now, by the store's count.
    pub(crate) async fn live_leases(&self, tenant: &Tenant) -> Result<u64, RepositoryError> {
        self.shared.usage.count_live_leases(tenant.clone()).await
    }

    /// Admits a grant for `tenant` (or the tenant whose election namespace it is) that would add
    /// `wanted` leases, of which `already_held` (asked only when the count is at the limit) says
    /// how many the owner holds already. The gate returned must be held until the grant has been
    /// made (or refused by the store): the tenant's other grants in this process wait for it.
    /// Costs nothing for a tenant without `max_live_leases`.
    ///
    /// A grant an arrival makes is counted [`Count::Exact`]ly. One a waiting queue would make
    /// ([`Count::Shared`]) looks again each time a lease ends here and every [`QUOTA_RECHECK`]
    /// while the quota holds it back; however many of them wait, the store counts for them about
    /// once a lease end or once a period: a count that found the tenant at its limit stands for
    /// the others until then.
    ///
    /// # Errors
    /// [`Refusal::Exceeded`] when the grant would go over the limit (nothing may be granted);
    /// [`Refusal::Store`] when the store could not count.
    pub(crate) async fn admit<F, Held>(
        &self,
        tenant: &Tenant,
        wanted: u64,
        count: Count,
        already_held: F,
    ) -> Result<LeaseGate, Refusal>
    where
        F: FnOnce() -> Held,
        Held: Future<Output = Result<u64, RepositoryError>>,
    {
        let namespace_of = tenant.election_namespace_of();
        let tenant = namespace_of.as_ref().unwrap_or(tenant);
        let Some(allowed) = self.of(tenant).get(Limit::MaxLiveLeases) else {
            return Ok(None);
        };
        let exceeded = Refusal::Exceeded(QuotaExceeded {
            limit: Limit::MaxLiveLeases,
            allowed,
        });
        let gate = self.gate(tenant).lock_owned().await;
        let epoch = self.shared.ended.load(Ordering::Acquire);
        if count == Count::Shared && self.still_full(tenant, epoch) {
            return Err(exceeded);
        }
        let live = self.live_leases(tenant).await?;
        if live.saturating_add(wanted) > allowed {
            let adding = wanted.saturating_sub(already_held().await?);
            if live.saturating_add(adding) > allowed {
                if live >= allowed {
                    locked(&self.shared.full).insert(tenant.clone(), (Instant::now(), epoch));
                }
                return Err(exceeded);
            }
        }
        Ok(Some(gate))
    }

    /// Whether a count that found `tenant` at its limit still stands: no lease ended here since
    /// (`epoch`) and it is younger than [`QUOTA_RECHECK`].
    fn still_full(&self, tenant: &Tenant, epoch: u64) -> bool {
        let mut full = locked(&self.shared.full);
        match full.get(tenant) {
            Some((at, seen)) if *seen == epoch && at.elapsed() < QUOTA_RECHECK => true,
            Some(_) => {
                full.remove(tenant);
                false
            }
            None => false,
        }
    }

    /// A lease ended through this process (released, resigned, undone, forced): a place may be
    /// free for a grant held back by its tenant's quota. One atomic add while none is held back.
    pub(crate) fn lease_ended(&self) {
        self.shared.ended.fetch_add(1, Ordering::AcqRel);
        if self.shared.held_back.load(Ordering::Acquire) > 0 {
            self.shared.room.notify_waiters();
        }
    }

    /// Resolves when a lease ends through this process, or after [`QUOTA_RECHECK`] (a lease may
    /// run out, or end through another process): when a grant held back by a quota should look
    /// again.
    pub(crate) async fn room_may_be_free(&self) {
        let ended = self.shared.room.notified();
        tokio::pin!(ended);
        ended.as_mut().enable();
        self.shared.held_back.fetch_add(1, Ordering::AcqRel);
        let _counted = HeldBack(&self.shared.held_back);
        tokio::select! {
            () = ended => {}
            () = tokio::time::sleep(QUOTA_RECHECK) => {}
        }
    }
}

/// One grant waiting in [`Quotas::room_may_be_free`], uncounted when dropped.
struct HeldBack<'a>(&'a AtomicUsize);

impl Drop for HeldBack<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One open observer's place in its tenant's count.
#[derive(Debug)]
pub(crate) struct ObserverSeat {
    quotas: Quotas,
    tenant: Tenant,
}

impl std::fmt::Debug for Quotas {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Quotas").finish_non_exhaustive()
    }
}

impl Drop for ObserverSeat {
    fn drop(&mut self) {
        let mut observers = locked(&self.quotas.shared.observers);
        if let Some(open) = observers.get_mut(&self.tenant) {
            *open = open.saturating_sub(1);
            if *open == 0 {
                observers.remove(&self.tenant);
            }
        }
    }
}

/// Held while a limited tenant's acquire is counted and granted: its other acquires in this
/// process wait for it. `None` for a tenant without `max_live_leases`.
pub(crate) type LeaseGate = Option<OwnedMutexGuard<()>>;

/// Why an observe or event stream was not opened.
#[derive(Debug)]
pub enum OpenError {
    /// The store failed.
    Store(RepositoryError),
    /// The tenant has as many streams open as its `max_observers` allows.
    QuotaExceeded(QuotaExceeded),
}

impl From<RepositoryError> for OpenError {
    fn from(error: RepositoryError) -> Self {
        Self::Store(error)
    }
}

#[cfg(test)]
mod grants;
#[cfg(test)]
mod tests;
