//! Why an admin ended leases ([`ForceReason`]): the reason a force-release is recorded with.

use crate::validation::ValidationError;

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
