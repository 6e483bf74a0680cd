//! The one error type of value validation: what is wrong with a single input value.

use thiserror::Error;

/// Why a raw input was refused as a domain value. The HTTP layer adds the field name; `code()` is
/// the stable, machine-readable part clients may branch on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    /// The value is empty (for an owner: empty after trimming).
    #[error("must not be empty")]
    Empty,
    /// The value is longer than the limit, counted in UTF-8 bytes.
    #[error("must be at most {max} bytes of UTF-8, got {actual}")]
    TooLong { max: usize, actual: usize },
    /// The value contains a control character (Unicode category Cc), such as NUL or a newline.
    #[error("must not contain control characters")]
    ControlCharacter,
    /// A character outside the value's alphabet.
    #[error("contains a character that is not allowed")]
    InvalidCharacter,
    /// A number outside its allowed inclusive range.
    #[error("must be between {min} and {max}, got {actual}")]
    OutOfRange { min: i64, max: i64, actual: i64 },
}

impl ValidationError {
    /// A short stable code for this kind of error (`empty`, `too_long`, `control_character`,
    /// `out_of_range`).
    pub fn code(&self) -> &'static str {
        match self {
            ValidationError::Empty => "empty",
            ValidationError::TooLong { .. } => "too_long",
            ValidationError::ControlCharacter => "control_character",
            ValidationError::OutOfRange { .. } => "out_of_range",
            ValidationError::InvalidCharacter => "invalid_character",
        }
    }
}

/// Checks the limits shared by resource names and owners: 1..=`max` bytes, no Cc characters.
pub(crate) fn check_text(value: &str, max: usize) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::Empty);
    }
    if value.len() > max {
        return Err(ValidationError::TooLong {
            max,
            actual: value.len(),
        });
    }
    if value.chars().any(char::is_control) {
        return Err(ValidationError::ControlCharacter);
    }
    Ok(())
}
