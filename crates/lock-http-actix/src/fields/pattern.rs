//! The JSON Schema patterns of the text fields, written from the domain's tables of control
//! characters and whitespace, so that a pattern matches exactly the texts the domain accepts.
//!
//! Patterns use only `\uXXXX` escapes inside character classes: every regex dialect a client or
//! fuzzer may validate with (ECMA-262, Python `re`, Rust `regex`) reads them alike, unlike `\s`,
//! whose meaning differs between them.

use lock_domain::{Owner, CONTROL_CHARACTERS, WHITESPACE};

/// The body of a character class holding `ranges`: `\u0000-\u001F\u007F-\u009F`.
fn class(ranges: &[(char, char)]) -> String {
    ranges
        .iter()
        .map(|&(first, last)| {
            if first == last {
                escape(first)
            } else {
                format!("{}-{}", escape(first), escape(last))
            }
        })
        .collect()
}

fn escape(c: char) -> String {
    // Every character of the tables is in the Basic Multilingual Plane.
    format!("\\u{:04X}", u32::from(c))
}

/// A resource name: one or more characters, none of them a control character (the length is
/// `minLength`/`maxLength`).
pub(crate) fn resource_name() -> String {
    format!("^[^{}]+$", class(CONTROL_CHARACTERS))
}

/// A listing prefix: like a resource name, but it may be empty.
pub(crate) fn prefix() -> String {
    format!("^[^{}]*$", class(CONTROL_CHARACTERS))
}

/// An owner as sent: any whitespace around 1 to [`Owner::MAX_CHARS`] characters that start and
/// end with something else and contain no control character. The length bound is part of the
/// pattern because it applies after trimming: `maxLength` would count the whitespace too.
pub(crate) fn owner() -> String {
    let space = class(WHITESPACE);
    let control = class(CONTROL_CHARACTERS);
    let inner = Owner::MAX_CHARS - 2;
    format!("^[{space}]*[^{space}{control}](?:[^{control}]{{0,{inner}}}[^{space}{control}])?[{space}]*$")
}

/// A force-release's reason as sent: no control character, and not only whitespace (the length
/// is `maxLength`: it counts the text as sent).
pub(crate) fn reason() -> String {
    let space = class(WHITESPACE);
    let control = class(CONTROL_CHARACTERS);
    format!("^[^{control}]*[^{space}{control}][^{control}]*$")
}

#[cfg(test)]
mod tests {
    use lock_domain::{ResourceName, ResourcePrefix};
    use std::sync::LazyLock;

    use proptest::prelude::*;
    use regex::Regex;

    use super::*;

    /// Characters at the edges of the rules: whitespace that is and is not a control character,
    /// controls, invisible non-whitespace, and wide characters.
    const EDGES: &[char] = &[
        'a', 'Z', ' ', '\t', '\n', '\r', '\u{b}', '\u{c}', '\u{1c}', '\u{1f}', '\0', '\u{7f}',
        '\u{85}', '\u{9f}', '\u{a0}', '\u{1680}', '\u{2000}', '\u{200a}', '\u{200b}', '\u{2028}',
        '\u{202f}', '\u{205f}', '\u{3000}', '\u{feff}', 'é', '日', '😀',
    ];

    fn text() -> impl Strategy<Value = String> {
        let edge = prop::sample::select(EDGES);
        let any = any::<char>();
        let piece = prop_oneof![4 => edge, 1 => any];
        prop_oneof![
            prop::collection::vec(piece.clone(), 0..8).prop_map(String::from_iter),
            // Around the limit of 255 characters, with whitespace around.
            (
                prop::collection::vec(piece.clone(), 0..3),
                prop::sample::select(&['o', '日', '😀', ' '][..]),
                250usize..=258,
                prop::collection::vec(piece, 0..3),
            )
                .prop_map(|(before, fill, n, after)| {
                    let before = String::from_iter(before);
                    let after = String::from_iter(after);
                    format!("{before}{}{after}", fill.to_string().repeat(n))
                }),
        ]
    }

    fn compile(pattern: fn() -> String) -> Regex {
        Regex::new(&pattern()).expect("the pattern is a valid regex")
    }

    // Compiled once: the owner's bounded repetition makes a large automaton.
    static OWNER: LazyLock<Regex> = LazyLock::new(|| compile(owner));
    static NAME: LazyLock<Regex> = LazyLock::new(|| compile(resource_name));
    static PREFIX: LazyLock<Regex> = LazyLock::new(|| compile(prefix));
    static REASON: LazyLock<Regex> = LazyLock::new(|| compile(reason));

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn the_owner_pattern_matches_exactly_the_owners_the_domain_accepts(raw in text()) {
            prop_assert_eq!(OWNER.is_match(&raw), Owner::parse(&raw).is_ok(), "{:?}", raw);
        }

        #[test]
        fn the_name_and_prefix_schemas_match_exactly_what_the_domain_accepts(raw in text()) {
            // The length is `minLength`/`maxLength`, which count characters.
            let length = raw.chars().count();
            let name = NAME.is_match(&raw) && length <= ResourceName::MAX_CHARS;
            prop_assert_eq!(name, ResourceName::parse(raw.as_str()).is_ok(), "{:?}", raw);
            let prefix = PREFIX.is_match(&raw) && length <= ResourceName::MAX_CHARS;
            prop_assert_eq!(prefix, ResourcePrefix::parse(raw.as_str()).is_ok(), "{:?}", raw);
            let reason = REASON.is_match(&raw) && length <= lock_domain::ForceReason::MAX_CHARS;
            prop_assert_eq!(reason, lock_domain::ForceReason::parse(&raw).is_ok(), "{:?}", raw);
        }
    }
}
