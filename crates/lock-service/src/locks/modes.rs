//! The use cases of shared (read/write) locks beside the exclusive ones: a shared acquire that
//! does not barge in ahead of waiting writers, the refusal of a change of mode, and the shared
//! holders in a listing.

use std::time::Duration;

use lock_domain::{
    Hold, ListPage, ListedLock, LockMode, RepositoryError, SharedAcquireOutcome, Tenant,
};

use crate::held::mode_held;
use crate::locks::{AcquireRequest, Locks};
use crate::outcomes::Acquired;

impl Locks<'_> {
    /// A shared acquire that does not wait: refused at once while an exclusive acquire waits
    /// for the lock in this process (it is not overtaken), else decided by the store.
    pub(crate) async fn acquire_shared_now(
        &self,
        request: &AcquireRequest,
    ) -> Result<Acquired, RepositoryError> {
        let AcquireRequest {
            tenant,
            resource,
            owner,
            ttl,
            value,
            ..
        } = request;
        if self.core.waiting.has_exclusive_waiter(tenant, resource) {
            // Only the lock's own readers may pass the waiting writer (a re-grant); its writer
            // asking to read is told so.
            match self.mode_held_by(request).await? {
                Some(LockMode::Shared) => {}
                Some(LockMode::Exclusive) => return Ok(Acquired::ModeMismatch),
                None => return Ok(Acquired::Held),
            }
        }
        let outcome = self
            .core
            .shared_locks
            .acquire_shared(
                tenant.clone(),
                resource.clone(),
                owner.clone(),
                *ttl,
                value.clone(),
            )
            .await?;
        Ok(match outcome {
            SharedAcquireOutcome::Granted(lock) => Acquired::Granted {
                lock,
                waited: false,
            },
            SharedAcquireOutcome::Held => Acquired::Held,
            SharedAcquireOutcome::ModeMismatch => Acquired::ModeMismatch,
        })
    }

    /// The answer to an exclusive acquire the store refused: [`Acquired::ModeMismatch`] when the
    /// caller is one of the lock's shared holders, else [`Acquired::Held`].
    pub(crate) async fn held_or_mode_mismatch(
        &self,
        request: &AcquireRequest,
    ) -> Result<Acquired, RepositoryError> {
        let (tenant, resource) = (request.tenant.clone(), request.resource.clone());
        let Some(row) = self
            .core
            .locks
            .status(tenant.clone(), resource.clone())
            .await?
        else {
            // No live lease: the place of one that ran out, in its lock-delay (or freed since).
            return Ok(
                match self.core.locks.available_at(tenant, resource).await? {
                    Some(until) => Acquired::Delayed {
                        retry_after_seconds: crate::lock_delay::seconds_until(
                            until,
                            self.core.clock.now(),
                        ),
                    },
                    None => Acquired::Held,
                },
            );
        };
        if !row.owner.is_shared_holders() {
            return Ok(Acquired::Held);
        }
        let hold = self.core.shared_locks.hold(tenant, resource).await?;
        Ok(
            if hold.and_then(|hold| hold.mode_of(&request.owner)) == Some(LockMode::Shared) {
                Acquired::ModeMismatch
            } else {
                Acquired::Held
            },
        )
    }

    /// The mode in which the caller holds the lock right now, if it does: a caller that holds
    /// it is answered at once (a re-grant, or a mode mismatch), never queued behind waiters for
    /// its own lock.
    pub(crate) async fn mode_held_by(
        &self,
        request: &AcquireRequest,
    ) -> Result<Option<LockMode>, RepositoryError> {
        mode_held(
            &*self.core.locks,
            &*self.core.shared_locks,
            &*self.core.clock,
            &request.tenant,
            &request.resource,
            &request.owner,
        )
        .await
    }

    /// `page` with each lock held in shared mode replaced by its holders, in token order.
    pub(crate) async fn with_shared_holders(
        &self,
        tenant: Tenant,
        page: ListPage,
    ) -> Result<ListPage, RepositoryError> {
        if !page.locks.iter().any(|l| l.lock.owner.is_shared_holders()) {
            return Ok(page);
        }
        let mut locks = Vec::with_capacity(page.locks.len());
        for listed in page.locks {
            if !listed.lock.owner.is_shared_holders() {
                locks.push(listed);
                continue;
            }
            let row_end = listed.lock.expires_at;
            let hold = self
                .core
                .shared_locks
                .hold(tenant.clone(), listed.lock.resource.clone())
                .await?;
            let Some(Hold::Shared(holders)) = hold else {
                // Gone, or taken exclusively, since the page was read: the page shows it as it
                // is now (or not at all), never the row that stood for readers.
                if let Some(Hold::Exclusive(lock)) = hold {
                    let ttl_remaining = remaining(&listed, lock.expires_at, row_end);
                    locks.push(ListedLock {
                        lock,
                        ttl_remaining,
                    });
                }
                continue;
            };
            for lock in holders {
                // The store measured the row's remaining lease on its clock; each holder's is
                // that, less how much sooner its own lease ends.
                let ttl_remaining = remaining(&listed, lock.expires_at, row_end);
                locks.push(ListedLock {
                    lock,
                    ttl_remaining,
                });
            }
        }
        Ok(ListPage {
            locks,
            has_more: page.has_more,
        })
    }
}

/// What remains of a lease ending at `ends` when the listed row, ending at `row_end`, had
/// `listed.ttl_remaining` left.
fn remaining(
    listed: &ListedLock,
    ends: chrono::DateTime<chrono::Utc>,
    row_end: chrono::DateTime<chrono::Utc>,
) -> Duration {
    let offset = (ends - row_end).num_milliseconds();
    let left = listed.ttl_remaining.as_millis() as i64 + offset;
    Duration::from_millis(left.max(0) as u64)
}

#[cfg(test)]
mod tests;
