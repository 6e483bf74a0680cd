//! The admin port: what an admin of a tenant may do that no holder may, whatever the database.
//! A port of its own, so a store or a test double implements what it has.

use async_trait::async_trait;

use crate::validation::ValidationError;
use crate::{Lock, Permit, RepositoryError, ResourceName, Tenant};

/// Why an admin ended leases: at most 256 characters, not all whitespace, no control
/// characters, kept (without the whitespace around it) in the history with the force-release.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ForceReason(String);

impl ForceReason {
    pub const MAX_CHARS: usize = 256;

    /// # Errors
    /// [`ValidationError::Empty`] for an empty or all-whitespace reason,
    /// [`ValidationError::TooLong`] past [`Self::MAX_CHARS`],
    /// [`ValidationError::ControlCharacter`] for a control character.
    /// Counted as sent, whitespace around it included; kept without that whitespace.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let length = raw.chars().count();
        if length > Self::MAX_CHARS {
            return Err(ValidationError::TooLong {
                max: Self::MAX_CHARS,
                actual: length,
            });
        }
        if raw.chars().any(char::is_control) {
            return Err(ValidationError::ControlCharacter);
        }
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(ValidationError::Empty);
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The admin operations of a store. Every implementation MUST be linearizable with the lock and
/// semaphore operations of the same name.
#[cfg_attr(feature = "mock", mockall::automock)]
#[async_trait]
pub trait AdminRepository: Send + Sync {
    /// Ends every live lease of the lock `resource` of `tenant` (its exclusive holder, or every
    /// reader) at once, and any lock-delay of an ended one: the lock is free for anyone, and
    /// its next grant draws a new fencing token larger than every one before. Each ended lease
    /// is recorded in the history as `force-released` with `reason`. Returns the leases ended,
    /// none when nothing was held.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was ended.
    async fn force_release_lock(
        &self,
        tenant: Tenant,
        resource: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Lock>, RepositoryError>;

    /// As [`Self::force_release_lock`], for every grant of the semaphore `name`.
    ///
    /// # Errors
    /// [`RepositoryError`] when storage fails; then nothing was ended.
    async fn force_release_permits(
        &self,
        tenant: Tenant,
        name: ResourceName,
        reason: ForceReason,
    ) -> Result<Vec<Permit>, RepositoryError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_trimmed_short_text() {
        assert_eq!(ForceReason::parse("  wedged  ").unwrap().as_str(), "wedged");
        assert_eq!(ForceReason::parse(" ").unwrap_err(), ValidationError::Empty);
        assert!(ForceReason::parse(&"x".repeat(256)).is_ok());
        assert!(ForceReason::parse(&format!(" {}", "x".repeat(256))).is_err());
        assert!(matches!(
            ForceReason::parse(&"x".repeat(257)),
            Err(ValidationError::TooLong { .. })
        ));
        assert_eq!(
            ForceReason::parse("a\nb").unwrap_err(),
            ValidationError::ControlCharacter
        );
    }
}
