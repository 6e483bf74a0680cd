//! Contract cases for listing: bytewise order, literal prefixes, paging without gaps or
//! duplicates, the page limit, live locks only, and one tenant at a time.

use crate::testing::calls::LeaseCalls;
use std::time::Duration;

use super::fixtures::{granted, name, owner, status, tenant, ttl, PAST_SHORT};
use super::Harness;
use crate::{AcquireOutcome, ListLimit, ListPage, ListQuery, ResourceName, ResourcePrefix, Tenant};

async fn list(
    repo: &dyn crate::LeaseStore,
    tenant: &Tenant,
    prefix: &str,
    after: Option<&ResourceName>,
    limit: i64,
) -> ListPage {
    repo.list(
        tenant.clone(),
        ListQuery {
            prefix: ResourcePrefix::parse(prefix).expect("valid prefix"),
            after: after.cloned(),
            limit: ListLimit::parse(limit).expect("valid limit"),
        },
    )
    .await
    .expect("list answers")
}

fn names_of(page: &ListPage) -> Vec<&str> {
    page.locks
        .iter()
        .map(|l| l.lock.resource.as_str())
        .collect()
}

/// Names come in bytewise (UTF-8 byte = code point) order: upper case before lower case,
/// multibyte characters after ASCII, shorter names before their extensions.
pub async fn list_orders_names_bytewise(h: &dyn Harness) {
    let repo = h.open().await;
    let mut names = vec![
        "b",
        "B",
        "a",
        "aa",
        "A",
        "Z",
        "é",
        "e",
        "ä",
        "日本",
        "z",
        "~",
        "0",
        "a b",
        "\u{10FFFF}",
    ];
    for raw in &names {
        granted(&*repo, raw, "lister", 30).await;
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    let page = list(&*repo, &tenant(), "", None, 100).await;
    assert_eq!(names_of(&page), names);
    assert!(!page.has_more);
    assert_eq!(page.next_after(), None);
    let with_e = list(&*repo, &tenant(), "é", None, 100).await;
    assert_eq!(names_of(&with_e), vec!["é"]);
}

/// `%`, `_` and `\` in a prefix are ordinary characters, not wildcards or escapes.
pub async fn list_prefix_is_literal(h: &dyn Harness) {
    let repo = h.open().await;
    for raw in [
        "100%", "100%x", "1000", "100_", "100a", "100\\", "100\\n", "a%b", "a_b", "axb", "aXb",
        "a\\b", "ab",
    ] {
        granted(&*repo, raw, "lister", 30).await;
    }
    let cases: Vec<(&str, Vec<&str>)> = vec![
        ("100%", vec!["100%", "100%x"]),
        ("100_", vec!["100_"]),
        ("100\\", vec!["100\\", "100\\n"]),
        ("a%", vec!["a%b"]),
        ("a_", vec!["a_b"]),
        ("a\\", vec!["a\\b"]),
        ("a", vec!["a%b", "aXb", "a\\b", "a_b", "ab", "axb"]),
        ("%", vec![]),
        ("1000", vec!["1000"]),
        ("10000", vec![]),
    ];
    for (prefix, expected) in cases {
        let page = list(&*repo, &tenant(), prefix, None, 100).await;
        assert_eq!(names_of(&page), expected, "prefix {prefix:?}");
    }
}

/// Paging with the last name as cursor visits every lock that existed throughout exactly once,
/// in order, while locks are granted behind and ahead of the cursor.
pub async fn list_pages_have_no_duplicates_or_gaps_while_locks_are_added(h: &dyn Harness) {
    let repo = h.open().await;
    let original: Vec<String> = (0..25).map(|i| format!("job:{i:03}")).collect();
    for raw in &original {
        granted(&*repo, raw, "lister", 30).await;
    }
    granted(&*repo, "jobs-not-a-job", "lister", 30).await;
    let mut seen: Vec<String> = Vec::new();
    let mut after: Option<ResourceName> = None;
    let mut pages = 0;
    loop {
        let page = list(&*repo, &tenant(), "job:", after.as_ref(), 7).await;
        pages += 1;
        assert!(page.locks.len() <= 7);
        seen.extend(names_of(&page).into_iter().map(str::to_owned));
        // Grant one name behind the cursor and one ahead of it while paging.
        granted(&*repo, &format!("job:{pages:03}a"), "late", 30).await;
        granted(&*repo, &format!("job:{:03}", 100 + pages), "late", 30).await;
        match page.next_after() {
            Some(next) => after = Some(next.clone()),
            None => break,
        }
        assert!(pages < 50, "paging must end");
    }
    let mut sorted = seen.clone();
    sorted.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    sorted.dedup();
    assert_eq!(seen, sorted, "strictly increasing, no duplicates");
    for raw in &original {
        assert!(seen.contains(raw), "{raw} was skipped");
    }
    assert!(seen.iter().all(|n| n.starts_with("job:")));
}

/// A page holds at most `limit` locks; `has_more` is set only when another one matched.
pub async fn list_limit_bounds_the_page(h: &dyn Harness) {
    let repo = h.open().await;
    for raw in ["p1", "p2", "p3"] {
        granted(&*repo, raw, "lister", 30).await;
    }
    let exact = list(&*repo, &tenant(), "p", None, 3).await;
    assert_eq!(names_of(&exact), vec!["p1", "p2", "p3"]);
    assert!(!exact.has_more, "exactly `limit` locks is the last page");
    let one = list(&*repo, &tenant(), "p", None, 1).await;
    assert_eq!(names_of(&one), vec!["p1"]);
    assert!(one.has_more);
    assert_eq!(one.next_after().map(ResourceName::as_str), Some("p1"));
    let last = list(&*repo, &tenant(), "p", Some(&name("p2")), 1).await;
    assert_eq!(names_of(&last), vec!["p3"]);
    assert!(!last.has_more);
    let past = list(&*repo, &tenant(), "p", Some(&name("p3")), 1000).await;
    assert!(past.locks.is_empty() && !past.has_more);
    let before = list(&*repo, &tenant(), "p", Some(&name("a")), 2).await;
    assert_eq!(names_of(&before), vec!["p1", "p2"]);
}

/// Expired and released locks are not listed; listed locks carry their remaining lease.
pub async fn list_shows_only_live_locks_with_their_remaining_ttl(h: &dyn Harness) {
    let repo = h.open().await;
    granted(&*repo, "live", "lister", 30).await;
    granted(&*repo, "short", "lister", 1).await;
    granted(&*repo, "released", "lister", 30).await;
    repo.release(tenant(), name("released"), owner("lister"))
        .await
        .expect("release answers");
    h.advance(PAST_SHORT).await;
    let page = list(&*repo, &tenant(), "", None, 100).await;
    assert_eq!(names_of(&page), vec!["live"]);
    let remaining = page.locks[0].ttl_remaining;
    assert!(
        remaining <= Duration::from_secs(29) && remaining > Duration::from_secs(20),
        "30 s lease after {PAST_SHORT:?}: {remaining:?} left"
    );
    assert_eq!(
        status(&*repo, "live").await.as_ref(),
        Some(&page.locks[0].lock)
    );
    assert_eq!(repo.count_live().await.expect("count answers"), 1);
}

/// A tenant lists only its own locks.
pub async fn list_is_per_tenant(h: &dyn Harness) {
    let repo = h.open().await;
    let (acme, globex) = (
        Tenant::parse("acme").expect("tenant"),
        Tenant::parse("globex").expect("tenant"),
    );
    for (t, raw) in [
        (&acme, "a1"),
        (&acme, "shared"),
        (&globex, "g1"),
        (&globex, "shared"),
    ] {
        let outcome = repo
            .acquire(t.clone(), name(raw), owner("worker"), ttl(30), None)
            .await
            .expect("answers");
        assert!(matches!(outcome, AcquireOutcome::Granted(_)));
    }
    assert_eq!(
        names_of(&list(&*repo, &acme, "", None, 100).await),
        vec!["a1", "shared"]
    );
    assert_eq!(
        names_of(&list(&*repo, &globex, "", None, 100).await),
        vec!["g1", "shared"]
    );
    assert!(list(&*repo, &tenant(), "", None, 100)
        .await
        .locks
        .is_empty());
    assert_eq!(repo.count_live().await.expect("count answers"), 4);
}
