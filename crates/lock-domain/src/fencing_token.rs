//! The number that orders the grants of one resource.

use std::fmt;

/// A fencing token: a positive integer that strictly increases with every new grant of a resource,
/// across releases, expiries and restarts. A renew or a same-owner re-acquire of a live lock keeps
/// it. Downstream systems reject writes carrying a token lower than the highest they have seen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FencingToken(i64);

impl FencingToken {
    /// Wraps a token read from storage.
    ///
    /// # Errors
    /// Returns the raw value back when it is not positive: storage handing out such a value is
    /// corrupt, and the adapter must report it rather than grant with it.
    pub fn new(value: i64) -> Result<Self, i64> {
        if value > 0 {
            Ok(Self(value))
        } else {
            Err(value)
        }
    }

    pub fn value(self) -> i64 {
        self.0
    }
}

impl fmt::Display for FencingToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_positive_values_are_tokens() {
        assert_eq!(FencingToken::new(1).map(FencingToken::value), Ok(1));
        assert_eq!(
            FencingToken::new(i64::MAX).map(FencingToken::value),
            Ok(i64::MAX)
        );
        assert_eq!(FencingToken::new(0), Err(0));
        assert_eq!(FencingToken::new(-5), Err(-5));
        assert!(FencingToken::new(2).unwrap() > FencingToken::new(1).unwrap());
    }
}
