//! The one error type of value validation: what is wrong with a single input value.

use thiserror::Error;

/// Why a raw input was refused as a domain value. The HTTP layer adds the field name; `code()` is
/// the stable, machine-readable part clients may branch on.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValidationError {
    /// The value is empty (for an owner: empty after trimming).
    #[error("must not be empty")]
    Empty,
    /// The value is longer than the limit, counted in characters (Unicode scalar values, what
    /// JSON Schema's `maxLength` counts).
    #[error("must be at most {max} characters, got {actual}")]
    TooLong { max: usize, actual: usize },
    /// The value contains a control character (Unicode category Cc), such as NUL or a newline.
    #[error("must not contain control characters")]
    ControlCharacter,
    /// The value is larger than the limit, counted in bytes of its compact JSON text.
    #[error("must be at most {max_bytes} bytes as compact JSON, got {actual_bytes}")]
    TooLarge {
        max_bytes: usize,
        actual_bytes: usize,
    },
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
            ValidationError::TooLong { .. } | ValidationError::TooLarge { .. } => "too_long",
            ValidationError::ControlCharacter => "control_character",
            ValidationError::OutOfRange { .. } => "out_of_range",
            ValidationError::InvalidCharacter => "invalid_character",
        }
    }
}

/// `actual` when it is a count in `1..=max`: the range check of every whole-number value (a
/// TTL, a page size, a semaphore's limit and permits).
///
/// # Errors
/// [`ValidationError::OutOfRange`] otherwise.
pub(crate) fn count_up_to(actual: i64, max: u32) -> Result<u32, ValidationError> {
    let max = i64::from(max);
    if (1..=max).contains(&actual) {
        Ok(actual as u32)
    } else {
        Err(ValidationError::OutOfRange {
            min: 1,
            max,
            actual,
        })
    }
}

/// The control characters (Unicode category Cc, what `char::is_control` matches): C0, DEL and
/// C1, as inclusive ranges. No owner, resource name or prefix contains one; the HTTP layer writes
/// its OpenAPI patterns from this table.
pub const CONTROL_CHARACTERS: &[(char, char)] = &[('\u{0}', '\u{1f}'), ('\u{7f}', '\u{9f}')];

/// The whitespace that `str::trim` removes from an owner (Unicode `White_Space`, what
/// `char::is_whitespace` matches), as inclusive ranges. Some of it (tab, line breaks, NEL) is also
/// control characters: allowed around an owner, never inside it.
pub const WHITESPACE: &[(char, char)] = &[
    ('\u{9}', '\u{d}'),
    ('\u{20}', '\u{20}'),
    ('\u{85}', '\u{85}'),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
];

/// Checks the limits shared by resource names and owners: 1..=`max` characters, no Cc
/// characters.
pub(crate) fn check_text(value: &str, max: usize) -> Result<(), ValidationError> {
    if value.is_empty() {
        return Err(ValidationError::Empty);
    }
    let length = value.chars().count();
    if length > max {
        return Err(ValidationError::TooLong {
            max,
            actual: length,
        });
    }
    if value.chars().any(char::is_control) {
        return Err(ValidationError::ControlCharacter);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_table(table: &[(char, char)], c: char) -> bool {
        table
            .iter()
            .any(|&(first, last)| (first..=last).contains(&c))
    }

    /// The tables are exactly what the parsers use, over every character.
    #[test]
    fn the_tables_match_the_standard_library() {
        for c in (0..=u32::from(char::MAX)).filter_map(char::from_u32) {
            assert_eq!(in_table(CONTROL_CHARACTERS, c), c.is_control(), "{c:?}");
            assert_eq!(in_table(WHITESPACE, c), c.is_whitespace(), "{c:?}");
        }
    }
}
