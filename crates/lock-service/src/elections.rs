//! The election use cases: campaign, proclaim, renew, resign, the leader and the term check. An
//! election is an exclusive lock in its tenant's election namespace (`Tenant::elections`), so
//! each use case is the lock use case of the same name there (the same grant, waiting queue,
//! renewal, release and undo), reported as an election rather than as a lock.

use std::time::Duration;

use tokio::time::Instant;

use lock_domain::{
    check_fence, FenceVerdict, FencingToken, ForceReason, Leader, LeaseKind, LeaseOp, LeaseTerms,
    LeaseValue, Lock, LockMode, Owner, Place, ReleaseResult, RenewResult, RepositoryError,
    ResourceName, Tenant, Ttl,
};

use crate::core::Core;
use crate::events::ElectionReport;
use crate::locks::{AcquireRequest, Locks};
use crate::outcomes::AcquireError;
use crate::outcomes::{Acquired, Fenced, Looked};
use crate::outcomes::{Campaigned, HoldEnd, Leading, Primitive, Waited};

/// How many times a refused campaign that finds its candidate leading is re-granted before it
/// gives up (each time the office changed hands between the read and the grant).
const MAX_REGRANTS: u32 = 3;

/// The leader an election's lock holder is, if one holds it (exclusively: an election's lock is
/// never held by readers).
fn leader_of(holding: &lock_domain::Holding) -> Option<Leader> {
    match holding.hold() {
        Some(lock_domain::Hold::Exclusive(lock)) => Some(Leader::of(lock)),
        _ => None,
    }
}

/// A campaign, parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CampaignRequest {
    pub tenant: Tenant,
    pub election: ResourceName,
    /// The leader's lease asked for: the candidate (its owner), its TTL, the value the leader
    /// proclaims once elected (a sitting leader keeps its own when `None`), and how long it keeps
    /// the office from other candidates after it ends by expiry (not by a resign).
    pub terms: LeaseTerms,
    /// How long the campaign may wait for the office; zero answers at once.
    pub wait: Duration,
}

/// The use cases of elections: a view over the process's [`Core`], from
/// [`crate::LockService::elections`].
#[derive(Clone, Copy)]
pub struct Elections<'a> {
    pub(crate) core: &'a Core,
}

impl Elections<'_> {
    /// Campaigns for `request.election`, waiting up to `request.wait` for the office: elected at
    /// once when it is vacant (never held, resigned, or its leader's lease ended) or the
    /// candidate already leads (re-granted, term kept). A waiting campaign joins the election's
    /// queue in this process, first come first served. `hung_up` is asked as for
    /// [`Locks::acquire`]. Reported as an election.
    ///
    /// # Errors
    /// [`AcquireError::Store`] when the store failed (no one was elected by this call);
    /// [`AcquireError::WaitersFull`] when it would wait but the limits are reached;
    /// [`AcquireError::QuotaExceeded`] when it would go over a limit of its tenant.
    pub async fn campaign(
        &self,
        request: CampaignRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<Campaigned, AcquireError> {
        let arrived = Instant::now();
        let wait = request.wait;
        let answered = self.campaign_unreported(request, hung_up).await;
        let (how, contended) = match &answered {
            Ok((campaigned, contended)) => (
                Some(match campaigned {
                    Campaigned::Elected { .. } => Waited::Granted,
                    Campaigned::NotElected {
                        retry_after_seconds: Some(_),
                        ..
                    } if *contended => Waited::TimedOut,
                    Campaigned::NotElected { .. } => Waited::Refused,
                    Campaigned::HungUp => Waited::HungUp,
                }),
                *contended,
            ),
            Err(error) => (error.waited(), false),
        };
        self.core
            .acquire_measured(Primitive::Election, wait, arrived, how, contended);
        answered.map(|(campaigned, _)| campaigned)
    }

    /// [`Self::campaign`], reported as an election but not yet measured; with whether the
    /// campaign found the office held by another candidate.
    async fn campaign_unreported(
        &self,
        request: CampaignRequest,
        hung_up: impl Fn() -> bool,
    ) -> Result<(Campaigned, bool), AcquireError> {
        let lock_request = AcquireRequest {
            tenant: request.tenant.elections(),
            resource: request.election.clone(),
            mode: LockMode::Exclusive,
            terms: request.terms.clone(),
            wait: request.wait,
        };
        let gate = self.lock_use_cases().admit_acquire(&lock_request).await?;
        // Who led before, to tell a new term from the sitting leader's re-grant (for metrics and
        // the audit log; a concurrent campaign of the same candidate may blur it, nothing else).
        let before = self.leader(&request.tenant, &request.election).await?;
        let (mut acquired, waited_contended) = if request.wait.is_zero() {
            let _gate = gate;
            (
                self.lock_use_cases().acquire_now(&lock_request).await?,
                false,
            )
        } else {
            self.lock_use_cases()
                .acquire_waiting(&lock_request, gate, hung_up)
                .await?
        };
        let contended = waited_contended || matches!(acquired, Acquired::Held { .. });
        let mut regrants = 0;
        let campaigned = loop {
            let retry_after_seconds = match acquired {
                Acquired::Granted { lock, waited } => {
                    break Campaigned::Elected {
                        new_term: before.is_none_or(|before| before.term != lock.fencing_token),
                        leader: Leader::of(lock),
                        waited,
                    }
                }
                // Refused at once: the leader is the one the refusal named, at the instant it
                // refused (never the candidate itself: its own lease would have been re-granted).
                Acquired::Held { holders } => {
                    break Campaigned::NotElected {
                        leader: holders.into_iter().next().map(Leader::of),
                        retry_after_seconds: None,
                    }
                }
                Acquired::TimedOut {
                    retry_after_seconds,
                }
                | Acquired::Delayed {
                    retry_after_seconds,
                } => Some(retry_after_seconds),
                Acquired::HungUp => break Campaigned::HungUp,
                Acquired::ModeMismatch => {
                    return Err(AcquireError::Store(RepositoryError::internal(
                        "an election's lock is held in shared mode",
                    )))
                }
            };
            let leader = self.leader(&request.tenant, &request.election).await?;
            if !leader
                .as_ref()
                .is_some_and(|leader| leader.candidate == request.terms.owner)
            {
                break Campaigned::NotElected {
                    leader,
                    retry_after_seconds,
                };
            }
            // The caller leads now: the same candidate was elected by another request (through
            // another instance, say) after this one was refused. "Not elected, and you lead"
            // describes no single instant; as the sitting leader's campaign, this is a re-grant.
            regrants += 1;
            if regrants > MAX_REGRANTS {
                return Err(AcquireError::Store(RepositoryError::unavailable(
                    "the office changed hands again and again while the campaign was answered",
                )));
            }
            let _gate = self.lock_use_cases().admit_acquire(&lock_request).await?;
            acquired = self.lock_use_cases().acquire_now(&lock_request).await?;
        };
        self.core.events.election(
            &request.tenant,
            &request.election,
            &request.terms.owner,
            ElectionReport::Campaigned(&campaigned),
        );
        Ok((campaigned, contended))
    }

    /// The leader of `election` now, or `None` when the office is vacant.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn leader(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
    ) -> Result<Option<Leader>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant.elections(), election).await?;
        Ok(leader_of(&holding))
    }

    /// The leader of `election` now, and when the office is vacant, whether the last leader's
    /// lock-delay keeps it from other candidates: the status of an election in one call.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn look(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
    ) -> Result<Looked<Leader>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant.elections(), election).await?;
        let leader = leader_of(&holding);
        Ok(Looked::of(
            leader,
            holding.delayed_until,
            self.core.clock.now(),
        ))
    }

    /// A page of the tenant's elections that have a leader now, in bytewise name order, each
    /// with how long its leader's lease still runs.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn list(
        &self,
        tenant: &Tenant,
        query: lock_domain::ListQuery,
    ) -> Result<lock_domain::ListPage, RepositoryError> {
        self.core.leases.list_locks(tenant.elections(), query).await
    }

    /// Campaigns waiting for `election`'s office on this server right now.
    pub fn waiters(&self, tenant: &Tenant, election: &ResourceName) -> usize {
        self.lock_use_cases().waiters(&tenant.elections(), election)
    }

    /// When `election`'s office, vacant, may be filled by another candidate than the last
    /// leader: the end of the lock-delay of a leader whose lease ran out, or `None`.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn available_at(
        &self,
        tenant: &Tenant,
        election: &ResourceName,
    ) -> Result<Option<chrono::DateTime<chrono::Utc>>, RepositoryError> {
        let holding = crate::held::look(&*self.core.leases, &tenant.elections(), election).await?;
        Ok(holding.delayed_until)
    }

    /// The leader `candidate` replaces its value with `value`, and nothing else (no new term, the
    /// lease's end kept). Reported as an election.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was changed.
    pub async fn proclaim(
        &self,
        tenant: Tenant,
        election: ResourceName,
        candidate: Owner,
        value: LeaseValue,
    ) -> Result<Leading, RepositoryError> {
        let op = LeaseOp::SetValue {
            place: Place::Lock(election.clone()),
            owner: candidate.clone(),
            value,
        };
        let renewed = self
            .core
            .leases
            .apply(tenant.elections(), op)
            .await?
            .renewed_lock()?;
        let leading = Leading::from(renewed);
        self.core.events.election(
            &tenant,
            &election,
            &candidate,
            ElectionReport::Proclaimed(&leading),
        );
        Ok(leading)
    }

    /// The leader `candidate` keeps its lease alive: it now ends at now + `ttl`, the term and
    /// value kept. Reported as an election; waiting campaigns here look at the new end.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was renewed.
    pub async fn renew(
        &self,
        tenant: Tenant,
        election: ResourceName,
        candidate: Owner,
        ttl: Ttl,
    ) -> Result<Leading, RepositoryError> {
        let namespace = tenant.elections();
        let op = LeaseOp::Renew {
            place: Place::Lock(election.clone()),
            owner: candidate.clone(),
            ttl,
            value: None,
        };
        let renewed = self
            .core
            .leases
            .apply(namespace.clone(), op)
            .await?
            .renewed_lock()?;
        if let RenewResult::Renewed(_) = renewed {
            self.core.waiting.lease_changed(&namespace, &election);
        }
        let leading = Leading::from(renewed);
        self.core.events.election(
            &tenant,
            &election,
            &candidate,
            ElectionReport::Renewed(&leading),
        );
        Ok(leading)
    }

    /// The leader `candidate` resigns: the office is vacant at once, and the first waiting
    /// campaign (here, or on any server sharing the store) is elected. Reported as an election.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then the leader did not resign.
    pub async fn resign(
        &self,
        tenant: Tenant,
        election: ResourceName,
        candidate: Owner,
    ) -> Result<ReleaseResult, RepositoryError> {
        let namespace = tenant.elections();
        let op = LeaseOp::Release {
            place: Place::Lock(election.clone()),
            owner: candidate.clone(),
        };
        let (result, ended) = self
            .core
            .leases
            .apply(namespace.clone(), op)
            .await?
            .released_lease()?;
        if let Some(ended) = ended {
            self.core
                .hold_ended(Primitive::Election, HoldEnd::Released, ended.acquired_at);
        }
        if let ReleaseResult::Released(_) = result {
            self.core.waiting.freed(&namespace, &election);
        }
        self.core.events.election(
            &tenant,
            &election,
            &candidate,
            ElectionReport::Resigned(result),
        );
        Ok(result)
    }

    /// Whether `term` is the term of the leader in office right now; reported as a fence check
    /// of an election.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed.
    pub async fn check_term(
        &self,
        tenant: Tenant,
        election: ResourceName,
        term: FencingToken,
    ) -> Result<FenceVerdict<Leader>, RepositoryError> {
        let leader = self.leader(&tenant, &election).await?;
        let verdict = check_fence(leader, term, |leader| leader.term);
        self.core.events.fence_checked(
            &tenant,
            Fenced::Election,
            &election,
            term,
            verdict.is_valid(),
        );
        Ok(verdict)
    }

    /// Ends the leader's lease of `election`, as [`Locks::force_release`] does a lock's.
    ///
    /// # Errors
    /// [`RepositoryError`] when the store failed; then nothing was ended.
    pub async fn force_release(
        &self,
        tenant: Tenant,
        election: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError> {
        self.core
            .force_release_in(tenant, election, reason, LeaseKind::Election)
            .await
    }

    /// The lock use cases that an election's are, run in its tenant's election namespace.
    fn lock_use_cases(&self) -> Locks<'_> {
        Locks { core: self.core }
    }
}
