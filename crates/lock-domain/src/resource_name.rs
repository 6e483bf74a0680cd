//! The name of a lockable resource.

use std::fmt;

use crate::validation::{check_text, ValidationError};

/// A validated resource name: 1..=255 characters (Unicode scalar values) without control
/// characters.
///
/// A name is opaque data: it is compared bytewise and case-sensitively, never trimmed, and never
/// interpreted (`x'; DROP TABLE distributed_locks; --` is a valid name).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceName(String);

impl ResourceName {
    /// The longest name accepted, in characters (Unicode scalar values).
    pub const MAX_CHARS: usize = 255;

    /// Parses a resource name.
    ///
    /// # Errors
    /// [`ValidationError::Empty`], [`ValidationError::TooLong`] past [`Self::MAX_CHARS`], or
    /// [`ValidationError::ControlCharacter`].
    pub fn parse(raw: impl Into<String>) -> Result<Self, ValidationError> {
        let raw = raw.into();
        check_text(&raw, Self::MAX_CHARS)?;
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
        // The limit counts characters, whatever their size in UTF-8.
        let multibyte_ok = "€".repeat(255);
        let multibyte_bad = "😀".repeat(256);
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
