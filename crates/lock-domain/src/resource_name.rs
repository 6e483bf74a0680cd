//! The name of a lockable resource.

use std::fmt;

use crate::validation::{check_text, ValidationError};

/// A validated resource name: 1..=255 bytes of UTF-8 without control characters.
///
/// A name is opaque data: it is compared bytewise and case-sensitively, never trimmed, and never
/// interpreted (`x'; DROP TABLE distributed_locks; --` is a valid name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceName(String);

impl ResourceName {
    /// The longest name accepted, in UTF-8 bytes.
    pub const MAX_BYTES: usize = 255;

    /// Parses a resource name.
    ///
    /// # Errors
    /// [`ValidationError::Empty`], [`ValidationError::TooLong`] past [`Self::MAX_BYTES`], or
    /// [`ValidationError::ControlCharacter`].
    pub fn parse(raw: impl Into<String>) -> Result<Self, ValidationError> {
        let raw = raw.into();
        check_text(&raw, Self::MAX_BYTES)?;
        Ok(Self(raw))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl AsRef<str> for ResourceName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ResourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let long_ok = "r".repeat(255);
        let long_bad = "r".repeat(256);
        // 85 three-byte characters are 255 bytes; one more is 258.
        let multibyte_ok = "€".repeat(85);
        let multibyte_bad = "€".repeat(86);
        let cases: Vec<(&str, Result<(), &str>)> = vec![
            ("payment:42", Ok(())),
            ("a", Ok(())),
            ("x'; DROP TABLE distributed_locks; --", Ok(())),
            ("a/b", Ok(())),
            ("a+b", Ok(())),
            (" padded ", Ok(())),
            ("日本語", Ok(())),
            (&long_ok, Ok(())),
            (&multibyte_ok, Ok(())),
            ("", Err("empty")),
            (&long_bad, Err("too_long")),
            (&multibyte_bad, Err("too_long")),
            ("nul\0byte", Err("control_character")),
            ("line\nbreak", Err("control_character")),
            ("tab\t", Err("control_character")),
            ("del\u{7f}", Err("control_character")),
            ("c1\u{85}", Err("control_character")),
        ];
        for (raw, expected) in cases {
            let got = ResourceName::parse(raw).map(|_| ()).map_err(|e| e.code());
            assert_eq!(got, expected, "input {raw:?}");
        }
    }

    #[test]
    fn names_are_kept_verbatim_and_case_sensitive() {
        let name = ResourceName::parse(" Payment ").unwrap();
        assert_eq!(name.as_str(), " Payment ");
        assert_ne!(name, ResourceName::parse(" payment ").unwrap());
    }
}
