//! What contending clients saw of their grants, and what must follow from it: on each resource
//! the fencing tokens are unique, and each grant was answered only after the previous holder (by
//! token) had sent its release, so holds never overlapped and tokens rose in grant order.

use std::collections::HashMap;
use std::time::Instant;

/// One grant as a client saw it. The real hold lies around [`granted`, `releasing`]: it began
/// before the grant's answer arrived and ended after the release was sent.
pub struct Hold {
    pub resource: String,
    pub token: i64,
    /// When the grant's answer arrived.
    pub granted: Instant,
    /// When the holder sent its release.
    pub releasing: Instant,
}

/// How long the contention tests run: `LOCKD_E2E_LOAD_SECONDS`, 10 by default.
pub fn contention_seconds() -> u64 {
    std::env::var("LOCKD_E2E_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10)
}

/// Panics when a token was granted twice on one resource, or when a grant (ordered by token)
/// was answered before the previous holder had sent its release.
pub fn assert_holds_never_overlap(holds: &[Hold]) {
    let mut by_resource: HashMap<&str, Vec<&Hold>> = HashMap::new();
    for hold in holds {
        by_resource.entry(&hold.resource).or_default().push(hold);
    }
    for (resource, mut grants) in by_resource {
        grants.sort_by_key(|h| h.token);
        for pair in grants.windows(2) {
            assert!(
                pair[0].token < pair[1].token,
                "token {} issued twice on {resource}",
                pair[0].token
            );
            assert!(
                pair[1].granted > pair[0].releasing,
                "{resource}: grant {} was answered before the holder of {} sent its release \
                 (overlapping holds, or tokens out of grant order)",
                pair[1].token,
                pair[0].token
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{assert_holds_never_overlap, Hold};

    fn hold(resource: &str, token: i64, start: Instant, from_ms: u64, to_ms: u64) -> Hold {
        Hold {
            resource: resource.to_owned(),
            token,
            granted: start + Duration::from_millis(from_ms),
            releasing: start + Duration::from_millis(to_ms),
        }
    }

    #[test]
    fn consecutive_holds_and_other_resources_pass() {
        let t = Instant::now();
        assert_holds_never_overlap(&[
            hold("a", 2, t, 20, 30),
            hold("a", 1, t, 0, 10),
            hold("b", 3, t, 5, 25),
        ]);
    }

    #[test]
    #[should_panic(expected = "was answered before the holder of 1 sent its release")]
    fn an_overlapping_hold_is_caught() {
        let t = Instant::now();
        assert_holds_never_overlap(&[hold("a", 1, t, 0, 10), hold("a", 2, t, 5, 30)]);
    }

    #[test]
    #[should_panic(expected = "was answered before the holder of 1 sent its release")]
    fn tokens_out_of_grant_order_are_caught() {
        let t = Instant::now();
        assert_holds_never_overlap(&[hold("a", 2, t, 0, 10), hold("a", 1, t, 20, 30)]);
    }

    #[test]
    #[should_panic(expected = "token 1 issued twice on a")]
    fn a_token_granted_twice_is_caught() {
        let t = Instant::now();
        assert_holds_never_overlap(&[hold("a", 1, t, 0, 10), hold("a", 1, t, 20, 30)]);
    }
}
