//! The lock rules restated as plainly as possible, apart from `decisions.rs`: a map from resource to
//! lock and a token counter, in epoch milliseconds.

use std::collections::HashMap;

use crate::ReleaseResult;

/// A lock as the model keeps it: epoch milliseconds and the model's own token numbering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelLock {
    pub owner: &'static str,
    pub acquired_ms: i64,
    pub expires_ms: i64,
    pub token: u64,
}

/// What the model says a release answers (with the model's token of the ended lock).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelRelease {
    Released(u64),
    NotFound,
    Forbidden,
}

/// What the model says an acquire answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelAcquire {
    /// A new grant: the token is larger than every token issued before for the resource.
    GrantedNew(ModelLock),
    /// The live owner acquired again: re-granted from now, same token.
    GrantedSameToken(ModelLock),
    Held,
}

/// The rules, restated as plainly as possible: a map from resource to lock and a token counter.
/// A lock is live while `now_ms < expires_ms`.
#[derive(Debug, Clone, Default)]
pub struct Model {
    now_ms: i64,
    locks: HashMap<&'static str, ModelLock>,
    last_token: u64,
}

impl Model {
    /// A model whose clock reads `now_ms` (epoch milliseconds).
    pub fn starting_at(now_ms: i64) -> Self {
        Self {
            now_ms,
            ..Self::default()
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.now_ms
    }

    pub fn advance(&mut self, millis: u64) {
        self.now_ms += i64::try_from(millis).expect("test advances fit an i64");
    }

    /// The live lock on `resource`, if any.
    pub fn live(&self, resource: &str) -> Option<&ModelLock> {
        self.locks
            .get(resource)
            .filter(|lock| self.now_ms < lock.expires_ms)
    }

    /// Whether `resource` has a lock whose lease has ended: it ran out (a release removes the lock).
    pub fn has_ended_lease(&self, resource: &str) -> bool {
        self.locks.contains_key(resource) && self.live(resource).is_none()
    }

    /// Whether `resource` has a lock (live or not) whose lease ends exactly now.
    pub fn at_expiry_boundary(&self, resource: &str) -> bool {
        self.locks
            .get(resource)
            .is_some_and(|lock| lock.expires_ms == self.now_ms)
    }

    pub fn acquire(
        &mut self,
        resource: &'static str,
        owner: &'static str,
        ttl_seconds: u32,
    ) -> ModelAcquire {
        let expires_ms = self.now_ms + i64::from(ttl_seconds) * 1_000;
        let kept_token = match self.live(resource) {
            Some(lock) if lock.owner != owner => return ModelAcquire::Held,
            Some(lock) => Some(lock.token),
            None => None,
        };
        let token = kept_token.unwrap_or_else(|| {
            self.last_token += 1;
            self.last_token
        });
        let lock = ModelLock {
            owner,
            acquired_ms: self.now_ms,
            expires_ms,
            token,
        };
        self.locks.insert(resource, lock.clone());
        match kept_token {
            Some(_) => ModelAcquire::GrantedSameToken(lock),
            None => ModelAcquire::GrantedNew(lock),
        }
    }

    pub fn release(&mut self, resource: &str, owner: &str) -> ModelRelease {
        match self.live(resource) {
            None => ModelRelease::NotFound,
            Some(lock) if lock.owner != owner => ModelRelease::Forbidden,
            Some(lock) => {
                let token = lock.token;
                self.locks.remove(resource);
                ModelRelease::Released(token)
            }
        }
    }

    /// `Ok` with the renewed lock, or the refusal (`NotFound` or `Forbidden`).
    pub fn renew(
        &mut self,
        resource: &str,
        owner: &str,
        ttl_seconds: u32,
    ) -> Result<ModelLock, ReleaseResult> {
        let now_ms = self.now_ms;
        match self.live(resource) {
            None => Err(ReleaseResult::NotFound),
            Some(lock) if lock.owner != owner => Err(ReleaseResult::Forbidden),
            Some(_) => {
                let lock = self.locks.get_mut(resource).expect("a live lock exists");
                lock.expires_ms = now_ms + i64::from(ttl_seconds) * 1_000;
                Ok(lock.clone())
            }
        }
    }
}
