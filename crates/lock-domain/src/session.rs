//! Sessions: one lease that keeps many holds alive. A session has an id, an owner label, a TTL
//! and a lock-delay; every lock, reader, permit or leadership taken under it is a lease whose
//! holder is the session ([`Owner::session_holder`]) and whose end is the session's end. A
//! keepalive moves the session's end, and so the end of every hold, at once; when the session
//! ends (closed, forced, or run out) every hold ends with it at that instant.
//!
//! The session's operations ([`SessionOp`]) go through their own port ([`SessionStore`]); the
//! holds go through the lease engine like any other lease, named by [`Owner::of_session`].

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use crate::validation::ValidationError;
use crate::{
    ForceReason, Grant, LeaseKind, ListLimit, LockDelay, Owner, RepositoryError, ResourcePrefix,
    Tenant, Ttl,
};

/// The alphabet of a session id: URL-safe base64 without padding.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// Whether `byte` is a character of [`ALPHABET`] (read on every request under a session, so
/// not by searching the alphabet).
fn in_alphabet(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_'
}

/// An opaque, unguessable session id: 128 random bits as 22 characters of URL-safe base64.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// The length of every id, in characters.
    pub const LEN: usize = 22;

    /// The id made of 16 random bytes (the caller draws them from a secure source).
    pub fn from_random(bytes: [u8; 16]) -> Self {
        let mut bits: u128 = u128::from_be_bytes(bytes);
        let mut text = [0u8; Self::LEN];
        // 22 characters of 6 bits hold 132 bits: the top 4 bits of the first character are 0.
        for slot in text.iter_mut().rev() {
            *slot = ALPHABET[(bits & 0x3f) as usize];
            bits >>= 6;
        }
        Self(text.iter().map(|&b| char::from(b)).collect())
    }

    /// Validates an id a client sent (or a store kept).
    ///
    /// # Errors
    /// [`ValidationError::Empty`], [`ValidationError::TooLong`] past 22 characters,
    /// [`ValidationError::InvalidCharacter`] for a character outside URL-safe base64 or an id
    /// shorter than 22 characters (no id this server made).
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        Self::check(raw)?;
        Ok(Self(raw.to_owned()))
    }

    /// [`Self::parse`] without keeping the id.
    ///
    /// # Errors
    /// As [`Self::parse`].
    pub(crate) fn check(raw: &str) -> Result<(), ValidationError> {
        if raw.is_empty() {
            return Err(ValidationError::Empty);
        }
        let length = raw.chars().count();
        if length > Self::LEN {
            return Err(ValidationError::TooLong {
                max: Self::LEN,
                actual: length,
            });
        }
        if length < Self::LEN || !raw.bytes().all(in_alphabet) {
            return Err(ValidationError::InvalidCharacter);
        }
        Ok(())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A session as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    pub id: SessionId,
    /// The label every hold of the session shows as its owner (by default the id).
    pub owner: Owner,
    pub ttl: Ttl,
    /// Applies to every hold when the session runs out (not when it is closed or forced).
    pub lock_delay: LockDelay,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Session {
    /// The end, in Unix milliseconds, that a database store writes in a hold's row while its
    /// session lives (the session's row has the real end): later than every real end, so that
    /// every statement that decides by the row alone takes the hold as live and asks the
    /// session. About the year 128,000; far below the largest time `chrono` can hold.
    pub const HELD_WHILE_LIVE_MS: i64 = 4_000_000_000_000_000;

    /// Whether the session is live at `now`: `now < expires_at`, as for every lease.
    pub fn is_live_at(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at
    }

    /// The holder of every lease taken under this session.
    pub fn holder(&self) -> Owner {
        Owner::session_holder(&self.id, &self.owner)
    }
}

/// The tenant whose sessions a lease of `tenant` may be held under: an election's lease lives in
/// its tenant's election namespace, its session in the tenant.
pub fn sessions_tenant(tenant: &Tenant) -> Tenant {
    tenant
        .election_namespace_of()
        .unwrap_or_else(|| tenant.clone())
}

/// One hold of a session: a lock (exclusive or shared), a semaphore's permits, or a leadership.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionHold {
    pub kind: LeaseKind,
    pub grant: Grant,
}

impl SessionHold {
    /// The hold of `grant`, a lease of `tenant` (a lock there in an election namespace is a
    /// leadership).
    pub fn of(tenant: &Tenant, grant: Grant) -> Self {
        Self {
            kind: Self::kind_at(tenant, &grant.place),
            grant,
        }
    }

    /// The kind of hold a grant at `place` among `tenant`'s leases is.
    pub fn kind_at(tenant: &Tenant, place: &crate::Place) -> LeaseKind {
        match (place, tenant.election_namespace_of()) {
            (crate::Place::Semaphore(_), _) => LeaseKind::Semaphore,
            (crate::Place::Lock(_), Some(_)) => LeaseKind::Election,
            (crate::Place::Lock(_), None) => LeaseKind::Lock,
        }
    }

    /// The tenant whose leases this hold is among, for session `tenant`'s hold.
    pub fn stored_tenant(&self, tenant: &Tenant) -> Tenant {
        match self.kind {
            LeaseKind::Election => tenant.elections(),
            _ => tenant.clone(),
        }
    }
}

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SessionEnd {
    /// Its client closed it (`DELETE /sessions/{id}`).
    Closed,
    /// It ran out: no keepalive came before its end.
    Expired,
    /// An admin ended it.
    ForceReleased,
}

impl SessionEnd {
    /// The reason as the API, the metrics and the observe stream name it.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionEnd::Closed => "closed",
            SessionEnd::Expired => "expired",
            SessionEnd::ForceReleased => "force-released",
        }
    }
}

/// One operation on a tenant's sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOp {
    /// Opens session `id` (new: drawn by the caller) for `ttl`, labelled `owner` (the id when
    /// `None`), with `lock_delay` for its holds.
    Open {
        id: SessionId,
        owner: Option<Owner>,
        ttl: Ttl,
        lock_delay: LockDelay,
    },
    /// Moves the end of live session `id` to now + `ttl` (the session's TTL when `None`; a new
    /// TTL is kept for later keepalives). Never revives an ended session.
    KeepAlive { id: SessionId, ttl: Option<Ttl> },
    /// Ends live session `id` and every hold under it, in one transaction: a closing by its
    /// client, or with `force` an admin's (recorded with the reason).
    End {
        id: SessionId,
        force: Option<ForceReason>,
    },
    /// Session `id` and its live holds, in one consistent read.
    Look(SessionId),
}

/// What a [`SessionOp`] came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionOutcome {
    /// `Open`: the new session.
    Opened(Session),
    /// `KeepAlive`: the session as it is now.
    Kept(Session),
    /// `End`: the session as it was, and every hold that ended with it.
    Ended {
        session: Session,
        holds: Vec<SessionHold>,
    },
    /// `Look`: the session and its live holds (by kind: locks, semaphores, elections; each by
    /// name).
    Looked {
        session: Session,
        holds: Vec<SessionHold>,
    },
    /// `KeepAlive`, `End`, `Look`: no live session of the tenant has this id (it never did, or
    /// it was closed, forced or ran out). Nothing changed.
    NotFound,
}

impl SessionOutcome {
    fn name(&self) -> &'static str {
        match self {
            SessionOutcome::Opened(_) => "opened",
            SessionOutcome::Kept(_) => "kept",
            SessionOutcome::Ended { .. } => "ended",
            SessionOutcome::Looked { .. } => "looked",
            SessionOutcome::NotFound => "not found",
        }
    }

    fn out_of_turn(self, operation: &str) -> RepositoryError {
        RepositoryError::internal(format!("the store answered {} to {operation}", self.name()))
    }

    /// An `Open`'s outcome.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome an open cannot have.
    pub fn opened(self) -> Result<Session, RepositoryError> {
        match self {
            SessionOutcome::Opened(session) => Ok(session),
            other => Err(other.out_of_turn("an open")),
        }
    }

    /// A `KeepAlive`'s outcome: the session, or `None` when it was not found.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a keepalive cannot have.
    pub fn kept(self) -> Result<Option<Session>, RepositoryError> {
        match self {
            SessionOutcome::Kept(session) => Ok(Some(session)),
            SessionOutcome::NotFound => Ok(None),
            other => Err(other.out_of_turn("a keepalive")),
        }
    }

    /// An `End`'s outcome: the session and its ended holds, or `None` when it was not found.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome an end cannot have.
    pub fn ended(self) -> Result<Option<(Session, Vec<SessionHold>)>, RepositoryError> {
        match self {
            SessionOutcome::Ended { session, holds } => Ok(Some((session, holds))),
            SessionOutcome::NotFound => Ok(None),
            other => Err(other.out_of_turn("an end")),
        }
    }

    /// A `Look`'s outcome: the session and its holds, or `None` when it was not found.
    ///
    /// # Errors
    /// [`RepositoryError::Internal`] for an outcome a look cannot have.
    pub fn looked(self) -> Result<Option<(Session, Vec<SessionHold>)>, RepositoryError> {
        match self {
            SessionOutcome::Looked { session, holds } => Ok(Some((session, holds))),
            SessionOutcome::NotFound => Ok(None),
            other => Err(other.out_of_turn("a look")),
        }
    }
}

/// Which of a tenant's live sessions to list: ids starting with `prefix`, bytewise after
/// `after` (any text: a listing's cursor), at most `limit`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionQuery {
    pub prefix: ResourcePrefix,
    pub after: Option<crate::ResourceName>,
    pub limit: ListLimit,
}

/// A live session in a listing, with how many live holds it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedSession {
    pub session: Session,
    pub holds: u64,
}

/// A page of live sessions, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SessionPage {
    pub sessions: Vec<ListedSession>,
    pub has_more: bool,
}

/// Where sessions live: the same store as their holds, so that a session's end and its holds'
/// ends are one transaction. Every implementation MUST keep these rules, on its lease port's
/// clock, across every process that shares the storage:
///
/// - A session is live while `now < expires_at`; once it is not, it never is again (a keepalive
///   of an ended session answers `NotFound` and changes nothing).
/// - Every hold of a session (a lease whose holder is [`Session::holder`]) ends when the session
///   does, at that instant: a hold of a session that ran out is an expired lease (its place kept
///   for the session's lock-delay, recorded `expired`), of a closed or forced one a released or
///   force-released lease. No reader ever sees a hold live after its session ended, nor some
///   holds of an ended session live and others not.
/// - An acquire under a session ([`Owner::of_session`]) that is not live grants nothing and
///   answers [`crate::Refusal::SessionNotFound`]; a grant under a live session has
///   `expires_at` = the session's, with the session's lock-delay.
/// - A keepalive writes a constant number of rows, whatever the session holds.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait SessionStore: Send + Sync {
    /// Applies `op` to `tenant`'s sessions: `Open` → `Opened`; `KeepAlive` → `Kept` /
    /// `NotFound`; `End` → `Ended` / `NotFound`; `Look` → `Looked` / `NotFound`.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was changed (or, for a write whose
    /// commit was under way, it may have been).
    async fn apply_session(
        &self,
        tenant: Tenant,
        op: SessionOp,
    ) -> Result<SessionOutcome, RepositoryError>;

    /// `tenant`'s live sessions matching `query`, by id (bytewise), each with its count of live
    /// holds; `has_more` tells whether more matched.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn list_sessions(
        &self,
        tenant: Tenant,
        query: SessionQuery,
    ) -> Result<SessionPage, RepositoryError>;

    /// How many sessions of `tenant` are live now (for its `max_sessions` quota).
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails.
    async fn live_sessions(&self, tenant: Tenant) -> Result<u64, RepositoryError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_22_url_safe_characters_of_the_random_bits() {
        let zero = SessionId::from_random([0; 16]);
        assert_eq!(zero.as_str(), "AAAAAAAAAAAAAAAAAAAAAA");
        let ones = SessionId::from_random([0xff; 16]);
        assert_eq!(ones.as_str(), "D_____________________");
        let mixed = SessionId::from_random(*b"0123456789abcdef");
        assert_eq!(mixed.as_str().len(), SessionId::LEN);
        assert_ne!(mixed, zero);
        for id in [zero, ones, mixed] {
            assert_eq!(SessionId::parse(id.as_str()), Ok(id));
        }
    }

    #[test]
    fn the_alphabet_test_is_the_alphabet() {
        for byte in 0..=u8::MAX {
            assert_eq!(in_alphabet(byte), ALPHABET.contains(&byte), "byte {byte}");
        }
    }

    #[test]
    fn parse_table() {
        let cases: Vec<(&str, Result<(), &str>)> = vec![
            ("AAAAAAAAAAAAAAAAAAAAAA", Ok(())),
            ("abcdefghij-_0123456789", Ok(())),
            ("", Err("empty")),
            ("short", Err("invalid_character")),
            ("AAAAAAAAAAAAAAAAAAAAAAA", Err("too_long")),
            ("AAAAAAAAAAAAAAAAAAAAA=", Err("invalid_character")),
            ("AAAAAAAAAAAAAAAAAAAA/A", Err("invalid_character")),
            ("AAAAAAAAAAAAAAAAAAAAAé", Err("invalid_character")),
        ];
        for (raw, expected) in cases {
            let got = SessionId::parse(raw).map(drop).map_err(|e| e.code());
            assert_eq!(got, expected, "input {raw:?}");
        }
    }
}
