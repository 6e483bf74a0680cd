//! Whose locks these are: the namespace an API key gives access to.

use std::fmt;

use crate::validation::ValidationError;

/// A validated tenant name: 1..=64 bytes of ASCII letters, digits, `.`, `_` and `-`.
///
/// Each tenant has its own locks: the same resource name in two tenants is two independent locks.
/// Without API keys every request belongs to [`Tenant::default_tenant`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tenant(String);

impl Tenant {
    /// The longest tenant name accepted, in bytes.
    pub const MAX_BYTES: usize = 64;

    /// The one tenant of a server without API keys, named `default`. A keys file may name a
    /// tenant `default` to keep the locks taken before keys were switched on.
    pub fn default_tenant() -> Self {
        Self("default".to_owned())
    }

    /// Parses a tenant name.
    ///
    /// # Errors
    /// [`ValidationError::Empty`], [`ValidationError::TooLong`], or
    /// [`ValidationError::InvalidCharacter`] for anything but `[A-Za-z0-9._-]`.
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        if raw.is_empty() {
            return Err(ValidationError::Empty);
        }
        if raw.len() > Self::MAX_BYTES {
            return Err(ValidationError::TooLong {
                max: Self::MAX_BYTES,
                actual: raw.len(),
            });
        }
        if !raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return Err(ValidationError::InvalidCharacter);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The namespace of this tenant's elections: a tenant of its own (`<tenant>/elections`), so
    /// that an election and a lock of the same name are two independent leases, and no listing
    /// or operation on locks sees an election. No API key can name it (`/` is not a tenant
    /// character), and it belongs to this tenant alone.
    pub fn elections(&self) -> Self {
        Self(format!("{}{ELECTIONS_SUFFIX}", self.0))
    }

    /// Parses a tenant as the store keeps it: a tenant name, or a tenant's election namespace
    /// ([`Self::elections`]).
    ///
    /// # Errors
    /// As [`Self::parse`], for the name or the namespace's tenant.
    pub fn parse_stored(raw: &str) -> Result<Self, ValidationError> {
        match raw.strip_suffix(ELECTIONS_SUFFIX) {
            Some(tenant) => Self::parse(tenant).map(|tenant| tenant.elections()),
            None => Self::parse(raw),
        }
    }

    /// The tenant whose election namespace this is, or `None` when this is a tenant.
    pub fn election_namespace_of(&self) -> Option<Self> {
        self.0
            .strip_suffix(ELECTIONS_SUFFIX)
            .map(|tenant| Self(tenant.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// What [`Tenant::elections`] appends to a tenant's name.
const ELECTIONS_SUFFIX: &str = "/elections";

impl fmt::Display for Tenant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let long = "t".repeat(65);
        let cases: Vec<(&str, Result<(), &str>)> = vec![
            ("acme", Ok(())),
            ("team-a.prod_2", Ok(())),
            ("default", Ok(())),
            (&long[..64], Ok(())),
            ("", Err("empty")),
            (&long, Err("too_long")),
            ("with space", Err("invalid_character")),
            ("ünïcode", Err("invalid_character")),
            ("a/b", Err("invalid_character")),
            ("nul\0", Err("invalid_character")),
        ];
        for (raw, expected) in cases {
            assert_eq!(
                Tenant::parse(raw).map(|_| ()).map_err(|e| e.code()),
                expected,
                "{raw:?}"
            );
        }
        assert_eq!(Tenant::default_tenant().as_str(), "default");
    }
}
