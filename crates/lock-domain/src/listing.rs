//! Listing a tenant's live locks a page at a time, in bytewise resource-name order.
//!
//! A page is asked for with a [`ListQuery`]: the names must start with a [`ResourcePrefix`]
//! (matched literally: no character is a wildcard), come after the last name of the previous
//! page, and at most a [`ListLimit`] of them are returned. Because UTF-8 byte order equals code
//! point order, "starts with the prefix" is the half-open range `[prefix, prefix.upper_bound())`,
//! which a storage engine answers from its `(tenant, resource)` index without scanning past the
//! page.

use std::time::Duration;

use crate::validation::{count_up_to, ValidationError};
use crate::{Lock, ResourceName};

/// How many locks one page may hold: `1..=1000`, 100 when the caller does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ListLimit(u16);

impl ListLimit {
    pub const MIN: u16 = 1;
    pub const MAX: u16 = 1000;
    pub const DEFAULT: ListLimit = ListLimit(100);

    /// Validates a page size.
    ///
    /// # Errors
    /// [`ValidationError::OutOfRange`] outside `1..=1000`.
    pub fn parse(raw: i64) -> Result<Self, ValidationError> {
        const _: () = assert!(ListLimit::MIN == 1, "count_up_to starts at 1");
        count_up_to(raw, u32::from(Self::MAX)).map(|n| Self(n as u16))
    }

    pub fn get(self) -> usize {
        usize::from(self.0)
    }
}

impl Default for ListLimit {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What every listed name starts with: 0..=255 characters without control characters (the
/// limits of a [`ResourceName`], except that it may be empty, which matches every name).
///
/// The prefix is literal data: `%`, `_` and `\` are ordinary characters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ResourcePrefix(String);

impl ResourcePrefix {
    /// Parses a prefix.
    ///
    /// # Errors
    /// [`ValidationError::TooLong`] past [`ResourceName::MAX_CHARS`], or
    /// [`ValidationError::ControlCharacter`] (no name can contain one).
    pub fn parse(raw: impl Into<String>) -> Result<Self, ValidationError> {
        let raw = raw.into();
        let length = raw.chars().count();
        if length > ResourceName::MAX_CHARS {
            return Err(ValidationError::TooLong {
                max: ResourceName::MAX_CHARS,
                actual: length,
            });
        }
        if raw.chars().any(char::is_control) {
            return Err(ValidationError::ControlCharacter);
        }
        Ok(Self(raw))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `name` starts with this prefix (bytewise).
    pub fn matches(&self, name: &ResourceName) -> bool {
        name.as_str().as_bytes().starts_with(self.0.as_bytes())
    }

    /// The smallest string greater than every string that starts with this prefix: the prefix
    /// with its last character replaced by the next code point. `None` when no such bound exists
    /// (the empty prefix, or a prefix made only of U+10FFFF): every name from the prefix on
    /// matches.
    ///
    /// Names starting with the prefix are exactly those in `[prefix, upper_bound)` in bytewise
    /// (= code point) order, so a range scan of a bytewise index finds them.
    pub fn upper_bound(&self) -> Option<String> {
        let mut chars: Vec<char> = self.0.chars().collect();
        while let Some(last) = chars.pop() {
            if let Some(next) = next_code_point(last) {
                chars.push(next);
                return Some(chars.into_iter().collect());
            }
            // U+10FFFF has no successor: the bound moves to the character before it.
        }
        None
    }
}

/// The next Unicode scalar value after `c` (skipping the surrogate block), if any.
fn next_code_point(c: char) -> Option<char> {
    match c {
        '\u{D7FF}' => Some('\u{E000}'),
        char::MAX => None,
        _ => char::from_u32(u32::from(c) + 1),
    }
}

/// One page request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListQuery {
    /// Only names starting with this.
    pub prefix: ResourcePrefix,
    /// Only names bytewise greater than this (the last name of the previous page).
    pub after: Option<ResourceName>,
    /// At most this many locks.
    pub limit: ListLimit,
}

/// A live lock as listed: the lock, and how long its lease still runs, measured on the
/// repository's clock at the moment the page was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedLock {
    pub lock: Lock,
    pub ttl_remaining: Duration,
}

/// One page of live locks in bytewise name order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListPage {
    pub locks: Vec<ListedLock>,
    /// Whether more matching locks followed the last one at the time of reading.
    pub has_more: bool,
}

impl ListPage {
    /// Builds a page from up to `limit + 1` matching live locks in order: the extra one only
    /// proves that there is a next page.
    pub fn from_overfetch(mut locks: Vec<ListedLock>, limit: ListLimit) -> Self {
        let has_more = locks.len() > limit.get();
        locks.truncate(limit.get());
        Self { locks, has_more }
    }

    /// Where the next page starts (after this name), or `None` on the last page.
    pub fn next_after(&self) -> Option<&ResourceName> {
        if self.has_more {
            self.locks.last().map(|listed| &listed.lock.resource)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits() {
        assert_eq!(ListLimit::default().get(), 100);
        for ok in [1, 2, 999, 1000] {
            assert_eq!(ListLimit::parse(ok).map(ListLimit::get), Ok(ok as usize));
        }
        for bad in [i64::MIN, -1, 0, 1001, i64::MAX] {
            assert_eq!(
                ListLimit::parse(bad).map_err(|e| e.code()),
                Err("out_of_range"),
                "{bad}"
            );
        }
    }

    #[test]
    fn prefixes() {
        assert_eq!(ResourcePrefix::parse("").map(|p| p.0), Ok(String::new()));
        assert!(ResourcePrefix::parse("%_\\").is_ok());
        assert!(ResourcePrefix::parse("r".repeat(255)).is_ok());
        assert!(ResourcePrefix::parse("日".repeat(255)).is_ok());
        assert_eq!(
            ResourcePrefix::parse("r".repeat(256)).map_err(|e| e.code()),
            Err("too_long")
        );
        assert_eq!(
            ResourcePrefix::parse("a\nb").map_err(|e| e.code()),
            Err("control_character")
        );
    }

    #[test]
    fn upper_bounds() {
        let bound = |raw: &str| ResourcePrefix::parse(raw).unwrap().upper_bound();
        let cases: Vec<(&str, Option<&str>)> = vec![
            ("", None),
            ("a", Some("b")),
            ("job:", Some("job;")),
            ("%", Some("&")),
            ("\\", Some("]")),
            ("Z", Some("[")),
            ("\u{7e}", Some("\u{7f}")),
            ("é", Some("ê")),
            ("a\u{D7FF}", Some("a\u{E000}")),
            ("a\u{10FFFF}", Some("b")),
            ("\u{10FFFF}\u{10FFFF}", None),
        ];
        for (raw, expected) in cases {
            assert_eq!(bound(raw).as_deref(), expected, "{raw:?}");
        }
    }

    /// A name matches the prefix exactly when it lies in `[prefix, upper_bound)` bytewise.
    #[test]
    fn the_range_is_the_prefix() {
        let names = [
            "a",
            "a%",
            "a%b",
            "a_",
            "ab",
            "a~",
            "a\u{a0}",
            "aé",
            "a\u{10FFFF}",
            "b",
            "B",
            "é",
            "éa",
            "ê",
            "\u{10FFFF}",
            "\u{10FFFF}a",
            "%",
            "%%",
            "&",
        ];
        let prefixes = ["", "a", "a%", "é", "\u{10FFFF}", "%", "B", "a~"];
        for prefix in prefixes {
            let prefix = ResourcePrefix::parse(prefix).unwrap();
            let upper = prefix.upper_bound();
            for raw in names {
                let name = ResourceName::parse(raw).unwrap();
                let in_range = raw.as_bytes() >= prefix.as_str().as_bytes()
                    && upper.as_ref().is_none_or(|u| raw.as_bytes() < u.as_bytes());
                assert_eq!(
                    prefix.matches(&name),
                    in_range,
                    "{raw:?} with {:?}",
                    prefix.as_str()
                );
            }
        }
    }
}
