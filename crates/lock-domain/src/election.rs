//! Leader election over the one lease model. An election is an exclusive lock in its tenant's
//! election namespace ([`Tenant::elections`]), so it shares every rule of a lock (the grant, the
//! waiting queue, renewal, expiry, undo) and adds none: its holder is the leader, and the lease's
//! fencing token is the leader's term, which strictly increases across leaders because tokens do.

use chrono::{DateTime, Utc};

use crate::{FencingToken, LeaseValue, Lock, Owner, ResourceName};

/// The leader of an election: who holds the office, with which value, in which term, since when
/// and until when. Timestamps have millisecond precision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    pub election: ResourceName,
    pub candidate: Owner,
    /// What the leader proclaims (its address, its configuration), or `None` when never set.
    pub value: Option<LeaseValue>,
    /// The fencing token of the leader's lease: larger than every earlier leader's term.
    pub term: FencingToken,
    /// When the lease was last granted (a sitting leader campaigning again is granted anew from
    /// then, keeping its term).
    pub elected_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Leader {
    /// The leader that holds `lock`, the election's lock in the election namespace.
    pub fn of(lock: Lock) -> Self {
        Self {
            election: lock.resource,
            candidate: lock.owner,
            value: lock.value,
            term: lock.fencing_token,
            elected_at: lock.acquired_at,
            expires_at: lock.expires_at,
        }
    }

    /// Whether the leader's lease still runs at `now` (it ends exactly at `expires_at`).
    pub fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        !crate::is_expired(self.expires_at, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LockMode, Tenant};

    #[test]
    fn a_leader_is_its_lock_renamed() {
        let at = DateTime::from_timestamp_millis(1_800_000_000_000).unwrap();
        let lock = Lock {
            resource: ResourceName::parse("scheduler").unwrap(),
            owner: Owner::parse("node-a").unwrap(),
            acquired_at: at,
            expires_at: at + chrono::TimeDelta::seconds(15),
            fencing_token: FencingToken::new(9).unwrap(),
            mode: LockMode::Exclusive,
            value: Some(LeaseValue::parse("\"10.0.0.7:8080\"".into()).unwrap()),
        };
        let leader = Leader::of(lock.clone());
        assert_eq!(leader.election, lock.resource);
        assert_eq!(leader.candidate, lock.owner);
        assert_eq!(leader.term, lock.fencing_token);
        assert_eq!(leader.elected_at, lock.acquired_at);
        assert_eq!(leader.expires_at, lock.expires_at);
        assert_eq!(leader.value, lock.value);
        assert!(leader.is_live_at(at));
        assert!(!leader.is_live_at(lock.expires_at));
    }

    #[test]
    fn the_election_namespace_is_no_tenant_a_client_can_name() {
        let acme = Tenant::parse("acme").unwrap();
        let elections = acme.elections();
        assert_eq!(elections.as_str(), "acme/elections");
        assert!(Tenant::parse(elections.as_str()).is_err());
        assert_ne!(elections, acme);
        assert_ne!(elections, Tenant::default_tenant().elections());
        assert_eq!(
            Tenant::parse_stored("acme/elections"),
            Ok(elections.clone())
        );
        assert_eq!(Tenant::parse_stored("acme"), Ok(acme.clone()));
        assert_eq!(elections.election_namespace_of(), Some(acme.clone()));
        assert_eq!(acme.election_namespace_of(), None);
        for bad in [
            "acme/locks",
            "/elections",
            "a/b/elections",
            "acme/elections/elections",
        ] {
            assert!(Tenant::parse_stored(bad).is_err(), "{bad}");
        }
    }
}
