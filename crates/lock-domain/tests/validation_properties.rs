//! Properties of value validation, each checked against a plain restatement of the documented rule
//! (never against the code under test): owners, resource names and TTLs.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::time::Duration;

use chrono::TimeDelta;
use lock_domain::{Owner, ResourceName, Ttl, ValidationError};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{FileFailurePersistence, TestRunner};

/// Failing cases are kept in `validation_properties.proptest-regressions` beside this file and
/// tried first on the next run.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::default()
    }
}

const LIMIT: usize = 255;

/// Whitespace that `str::trim` removes: ASCII, Unicode spaces, and NEL (U+0085), which is both
/// whitespace and a control character.
const WHITESPACE: &[char] = &[
    ' ', '\t', '\n', '\r', '\u{a0}', '\u{85}', '\u{2003}', '\u{2028}', '\u{3000}',
];

/// Control characters (Unicode category Cc), C0, DEL and C1.
const CONTROL: &[char] = &['\0', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}'];

/// Characters of 2, 3 and 4 UTF-8 bytes; U+200B and U+FEFF are invisible but neither whitespace
/// nor control.
const MULTIBYTE: &[char] = &['é', 'ß', 'ж', '€', '日', '\u{200b}', '\u{feff}', '😀', '𝄞'];

fn edge_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::char::range('!', '~'),
        1 => Just(' '),
        3 => prop::sample::select(MULTIBYTE),
        2 => prop::sample::select(WHITESPACE),
        1 => prop::sample::select(CONTROL),
        1 => any::<char>(),
    ]
}

fn padding() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![3 => prop::sample::select(WHITESPACE), 1 => edge_char()],
        0..4,
    )
    .prop_map(String::from_iter)
}

/// About 255 characters: a core of exactly `chars` characters (a run of one 1- to 4-byte
/// character, a few edge characters in its middle, topped up with ASCII) with padding at both ends.
fn near_limit() -> impl Strategy<Value = String> {
    (
        padding(),
        prop::sample::select(&['o', 'é', '€', '😀'][..]),
        prop_oneof![253usize..=257, 230usize..=262],
        prop::collection::vec(edge_char(), 0..3),
        padding(),
    )
        .prop_map(|(before, fill, chars, middle, after)| {
            let run = chars.saturating_sub(middle.len());
            let half = run / 2;
            let middle = String::from_iter(middle);
            let fill = fill.to_string();
            format!(
                "{before}{}{middle}{}{after}",
                fill.repeat(half),
                fill.repeat(run - half)
            )
        })
}

/// Strings that hit the edges of the text rules: mixed ASCII and multi-byte characters, Unicode
/// whitespace, control characters, whitespace only, and lengths around 255 characters.
fn edge_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(edge_char(), 0..16).prop_map(String::from_iter),
        1 => padding(),
        3 => near_limit(),
    ]
}

/// Two strings, the second often a near miss of the first: the same, another case, trimmed, padded.
fn text_pair() -> impl Strategy<Value = (String, String)> {
    edge_text().prop_flat_map(|a| {
        let variants = prop_oneof![
            Just(a.clone()),
            Just(a.to_uppercase()),
            Just(a.to_lowercase()),
            Just(a.trim().to_owned()),
            Just(format!(" {a}")),
            Just(format!("{a}\u{3000}")),
            edge_text(),
        ];
        (Just(a), variants)
    })
}

/// The documented reasons a text value is refused.
fn reasons(text: &str) -> Vec<&'static str> {
    let mut reasons = Vec::new();
    if text.is_empty() {
        reasons.push("empty");
    }
    if text.chars().count() > LIMIT {
        reasons.push("too_long");
    }
    if text.chars().any(char::is_control) {
        reasons.push("control_character");
    }
    reasons
}

/// The owner rule, restated: the trimmed text is kept when it is 1..=255 characters without control
/// characters.
fn expected_owner(raw: &str) -> Result<&str, Vec<&'static str>> {
    let trimmed = raw.trim();
    let reasons = reasons(trimmed);
    if reasons.is_empty() {
        Ok(trimmed)
    } else {
        Err(reasons)
    }
}

/// The resource name rule, restated: the text as given, when it is 1..=255 characters without
/// control
/// characters.
fn expected_name(raw: &str) -> Result<&str, Vec<&'static str>> {
    let reasons = reasons(raw);
    if reasons.is_empty() {
        Ok(raw)
    } else {
        Err(reasons)
    }
}

/// An error must name a reason that holds, and a too-long error the real length of the checked
/// text (`checked`, the input after any trimming).
fn check_refusal(
    error: &ValidationError,
    reasons: &[&'static str],
    checked: &str,
) -> Result<(), TestCaseError> {
    prop_assert!(
        reasons.contains(&error.code()),
        "refused with {error:?}, but the reasons that hold are {reasons:?}"
    );
    if let ValidationError::TooLong { max, actual } = error {
        prop_assert_eq!(*max, LIMIT);
        prop_assert_eq!(*actual, checked.chars().count());
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(4096))]

    #[test]
    fn owner_is_the_trimmed_text_when_it_is_1_to_255_characters_without_control_characters(
        raw in edge_text()
    ) {
        match (Owner::parse(&raw), expected_owner(&raw)) {
            (Ok(owner), Ok(trimmed)) => prop_assert_eq!(owner.as_str(), trimmed),
            (Err(error), Err(reasons)) => check_refusal(&error, &reasons, raw.trim())?,
            (got, want) => prop_assert!(false, "{raw:?}: expected {want:?}, got {got:?}"),
        }
    }

    #[test]
    fn owners_are_equal_exactly_when_their_trimmed_texts_are(pair in text_pair()) {
        let (a, b) = pair;
        if let (Ok(x), Ok(y)) = (Owner::parse(&a), Owner::parse(&b)) {
            prop_assert_eq!(x == y, a.trim() == b.trim(), "{:?} and {:?}", a, b);
        }
    }

    #[test]
    fn resource_name_is_the_text_as_given_when_it_is_1_to_255_characters_without_control_characters(
        raw in edge_text()
    ) {
        match (ResourceName::parse(raw.clone()), expected_name(&raw)) {
            (Ok(name), Ok(text)) => prop_assert_eq!(name.as_str(), text),
            (Err(error), Err(reasons)) => check_refusal(&error, &reasons, &raw)?,
            (got, want) => prop_assert!(false, "{raw:?}: expected {want:?}, got {got:?}"),
        }
    }

    #[test]
    fn resource_names_compare_exactly_as_their_texts(pair in text_pair()) {
        let (a, b) = pair;
        if let (Ok(x), Ok(y)) = (ResourceName::parse(a.as_str()), ResourceName::parse(b.as_str())) {
            prop_assert_eq!(x == y, a == b, "{:?} and {:?}", a, b);
            prop_assert_eq!(x.cmp(&y), a.cmp(&b), "{:?} and {:?}", a, b);
        }
    }
}

fn max_seconds() -> impl Strategy<Value = u32> {
    prop_oneof![
        Just(1u32),
        Just(86_400),
        Just(u32::MAX),
        1..=100u32,
        1..=u32::MAX,
    ]
}

/// Any `i64`, with weight on the bounds of `1..=max`.
fn seconds_around(max: u32) -> impl Strategy<Value = i64> {
    let max = i64::from(max);
    prop_oneof![
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        -2i64..=2,
        (max - 1)..=(max + 1),
        0..=(max + 1),
    ]
}

proptest! {
    #![proptest_config(config(4096))]

    #[test]
    fn ttl_is_accepted_exactly_in_1_to_max_and_keeps_its_value(
        (max, seconds) in max_seconds().prop_flat_map(|max| (Just(max), seconds_around(max)))
    ) {
        let in_range = 1 <= seconds && seconds <= i64::from(max);
        match Ttl::parse(seconds, max) {
            Ok(ttl) => {
                prop_assert!(in_range, "{seconds} accepted with max {max}");
                prop_assert_eq!(i64::from(ttl.seconds()), seconds);
                prop_assert_eq!(ttl.as_duration(), Duration::from_secs(seconds.unsigned_abs()));
                prop_assert_eq!(ttl.as_time_delta(), TimeDelta::seconds(seconds));
            }
            Err(error) => {
                prop_assert!(!in_range, "{seconds} refused with max {max}: {error:?}");
                prop_assert_eq!(
                    error,
                    ValidationError::OutOfRange { min: 1, max: i64::from(max), actual: seconds }
                );
            }
        }
    }
}

/// The text properties are only worth something if the generator reaches every verdict and both
/// sides of the limit.
#[test]
fn edge_texts_reach_every_verdict_and_both_sides_of_the_limit() {
    let mut runner = TestRunner::deterministic();
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for _ in 0..2_000 {
        let raw = edge_text().new_tree(&mut runner).unwrap().current();
        let trimmed = raw.trim();
        let kinds = match expected_owner(&raw) {
            Ok(_) if trimmed.chars().count() == LIMIT => vec!["owner of exactly 255 characters"],
            Ok(_) if trimmed != raw => vec!["owner trimmed"],
            Ok(_) => vec!["owner as given"],
            Err(_) if trimmed.chars().count() == LIMIT + 1 => {
                vec!["owner of exactly 256 characters"]
            }
            Err(reasons) => reasons,
        };
        for kind in kinds {
            *seen.entry(kind).or_default() += 1;
        }
        if expected_name(&raw).is_ok() && trimmed != raw {
            *seen.entry("name with outer whitespace").or_default() += 1;
        }
        if expected_owner(&raw).is_ok() && trimmed.len() > LIMIT {
            *seen.entry("owner of more than 255 bytes").or_default() += 1;
        }
    }
    for kind in [
        "owner of exactly 255 characters",
        "owner of exactly 256 characters",
        "owner trimmed",
        "owner as given",
        "empty",
        "too_long",
        "control_character",
        "name with outer whitespace",
        "owner of more than 255 bytes",
    ] {
        let count = seen.get(kind).copied().unwrap_or(0);
        assert!(count >= 10, "{kind}: {count} in {seen:?}");
    }
}

/// The equality properties are only worth something if near misses parse: check the pair
/// generator makes equal and unequal valid pairs.
#[test]
fn text_pairs_include_equal_and_unequal_valid_values() {
    let mut runner = TestRunner::deterministic();
    let (mut equal, mut unequal) = (0, 0);
    for _ in 0..1_000 {
        let (a, b) = text_pair().new_tree(&mut runner).unwrap().current();
        if ResourceName::parse(a.as_str()).is_ok() && ResourceName::parse(b.as_str()).is_ok() {
            match a.cmp(&b) {
                Ordering::Equal => equal += 1,
                _ => unequal += 1,
            }
        }
    }
    assert!(
        equal >= 50 && unequal >= 50,
        "{equal} equal, {unequal} unequal"
    );
}
