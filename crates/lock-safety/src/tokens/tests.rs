//! The token evidence pinned down: the floor names the first showing of the largest token
//! completed before an instant, and a reuse is found once per token, up to the bound.

use super::*;

#[test]
fn the_floor_is_the_largest_token_completed_before() {
    let floor = Floor::new(vec![(30, 5, 3), (10, 2, 1), (20, 7, 2), (20, 7, 4)]);
    assert_eq!(floor.before(10), None);
    assert_eq!(floor.before(11), Some((2, 1)));
    // The first showing of the largest token is named, however the input was ordered.
    assert_eq!(floor.before(21), Some((7, 2)));
    assert_eq!(floor.before(1_000), Some((7, 2)));
}

#[test]
fn a_token_shown_for_another_holder_is_reused_once() {
    let shown = [
        (1, "a", 0),
        (1, "a", 1),
        (2, "b", 2),
        (1, "c", 3),
        (1, "d", 4),
    ];
    assert_eq!(
        reused(shown, 5),
        vec![Reuse {
            token: 1,
            first: ("a", 0),
            then: ("c", 3)
        }]
    );
}

#[test]
fn reuses_stop_at_the_most_reported() {
    let shown = [(1, 'a', 0), (1, 'b', 1), (2, 'a', 2), (2, 'b', 3)];
    assert_eq!(reused(shown, 1).len(), 1);
    assert_eq!(reused(shown, 5).len(), 2);
    assert!(reused(shown, 0).is_empty());
}
