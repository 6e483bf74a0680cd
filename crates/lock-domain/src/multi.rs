//! Atomic multi-lock: several locks, each in its mode, granted together in one transaction or
//! not at all. Nothing is held while a caller waits for them, so no deadlock is possible.

use crate::{FencingToken, LeaseTerms, LeaseValue, Lock, LockMode, Owner, ResourceName, Ttl};

/// The most locks one multi-lock request takes.
pub const MAX_LOCKS_AT_ONCE: usize = 64;

/// Why a set of locks was refused as a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LockSetError {
    #[error("must name 1 to {MAX_LOCKS_AT_ONCE} locks, got {0}")]
    Count(usize),
    #[error("names resource {0:?} more than once")]
    Duplicate(String),
}

/// Locks to take together: 1 to [`MAX_LOCKS_AT_ONCE`] distinct resources, each in its mode, on
/// one set of lease terms (one owner, one TTL, one value stored with each lease; a set's leases
/// keep no place after they run out, so its terms have no lock-delay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockSet {
    terms: LeaseTerms,
    locks: Vec<(ResourceName, LockMode)>,
}

impl LockSet {
    /// The set of `locks` on `terms` (whose lock-delay, if any, is dropped).
    ///
    /// # Errors
    /// [`LockSetError`] when `locks` is empty, longer than [`MAX_LOCKS_AT_ONCE`], or names a
    /// resource twice.
    pub fn new(
        terms: LeaseTerms,
        locks: Vec<(ResourceName, LockMode)>,
    ) -> Result<Self, LockSetError> {
        if locks.is_empty() || locks.len() > MAX_LOCKS_AT_ONCE {
            return Err(LockSetError::Count(locks.len()));
        }
        let mut names: Vec<&str> = locks.iter().map(|(name, _)| name.as_str()).collect();
        names.sort_unstable();
        if let Some(pair) = names.windows(2).find(|pair| pair[0] == pair[1]) {
            return Err(LockSetError::Duplicate(pair[0].to_owned()));
        }
        Ok(Self {
            terms: LeaseTerms {
                lock_delay: crate::LockDelay::NONE,
                ..terms
            },
            locks,
        })
    }

    /// The set as live `session` takes it: held by the session, with its lock-delay (a set
    /// under a session keeps its places for the session's lock-delay when the session runs
    /// out, as every hold of the session does).
    pub fn under_session(self, session: &crate::Session) -> Self {
        Self {
            terms: LeaseTerms {
                owner: session.holder(),
                ttl: session.ttl,
                lock_delay: session.lock_delay,
                ..self.terms
            },
            locks: self.locks,
        }
    }

    /// The terms every lease of the set is granted on.
    pub fn terms(&self) -> &LeaseTerms {
        &self.terms
    }

    pub fn owner(&self) -> &Owner {
        &self.terms.owner
    }

    pub fn ttl(&self) -> Ttl {
        self.terms.ttl
    }

    pub fn value(&self) -> Option<&LeaseValue> {
        self.terms.value.as_ref()
    }

    /// The locks in request order.
    pub fn locks(&self) -> &[(ResourceName, LockMode)] {
        &self.locks
    }

    /// The positions of the locks in bytewise name order: the order in which a store locks
    /// them, the same in every process, so that two multi-locks never wait for each other in a
    /// circle.
    pub fn in_key_order(&self) -> Vec<usize> {
        let mut order: Vec<usize> = (0..self.locks.len()).collect();
        order.sort_by(|&a, &b| {
            self.locks[a]
                .0
                .as_str()
                .as_bytes()
                .cmp(self.locks[b].0.as_str().as_bytes())
        });
        order
    }
}

/// The answer to a multi-lock acquire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MultiAcquireOutcome {
    /// Every lock was granted, in request order, each with its own fencing token.
    Granted(Vec<Lock>),
    /// These locks (in request order) could not be granted now; nothing changed.
    Unavailable(Vec<ResourceName>),
}

/// What a multi-lock does with one of its locks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockStep {
    /// Grant a new lease with a new, larger token.
    GrantNew,
    /// The caller holds the lock in this mode: re-grant it from now, keeping this token.
    Extend(FencingToken),
    /// Held by others, or by the caller in the other mode: the whole set is refused.
    Refused,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> Result<LockSet, LockSetError> {
        LockSet::new(
            LeaseTerms {
                owner: Owner::parse("o").unwrap(),
                ttl: Ttl::parse(30, 60).unwrap(),
                value: None,
                lock_delay: crate::LockDelay::NONE,
            },
            names
                .iter()
                .map(|n| (ResourceName::parse(*n).unwrap(), LockMode::Exclusive))
                .collect(),
        )
    }

    #[test]
    fn a_set_names_1_to_64_distinct_locks() {
        assert_eq!(set(&[]), Err(LockSetError::Count(0)));
        assert!(set(&["a"]).is_ok());
        let many: Vec<String> = (0..65).map(|i| format!("r{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(set(&refs), Err(LockSetError::Count(65)));
        assert!(set(&refs[..64]).is_ok());
        assert_eq!(
            set(&["a", "b", "a"]),
            Err(LockSetError::Duplicate("a".into()))
        );
    }

    #[test]
    fn locks_are_taken_in_bytewise_name_order() {
        let set = set(&["b", "é", "A", "a"]).unwrap();
        assert_eq!(set.in_key_order(), [2, 3, 0, 1]);
    }
}
