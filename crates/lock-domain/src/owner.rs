//! The identity of a lock holder, as the client names itself.

use std::fmt;

use crate::validation::{check_text, ValidationError};
use crate::SessionId;

/// A validated owner: trimmed of leading and trailing Unicode whitespace, then 1..=255 characters
/// without control characters. The trimmed form is what is stored and compared,
/// case-sensitively.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner(String);

/// The stored name of [`Owner::shared_holders`] (starts with U+0001, a control character).
const SHARED_HOLDERS: &str = "\u{1}shared";

/// The first character of a session's holder (U+0002, a control character): then the session's
/// id, and after [`SESSION_LABEL`] the session's owner label once a store has read it.
const SESSION_MARK: char = '\u{2}';

/// Between a session holder's id and its label.
const SESSION_LABEL: char = ':';

impl Owner {
    /// The longest owner accepted after trimming, in characters (Unicode scalar values).
    pub const MAX_CHARS: usize = 255;

    /// Trims and validates an owner.
    ///
    /// # Errors
    /// [`ValidationError::Empty`] when nothing is left after trimming, [`ValidationError::TooLong`]
    /// past [`Self::MAX_CHARS`], [`ValidationError::ControlCharacter`].
    pub fn parse(raw: &str) -> Result<Self, ValidationError> {
        let trimmed = raw.trim();
        check_text(trimmed, Self::MAX_CHARS)?;
        Ok(Self(trimmed.to_owned()))
    }

    /// The owner that a resource held in shared mode shows to the exclusive lock operations:
    /// the shared holders together. Its name holds a control character, which [`Self::parse`]
    /// refuses, so no client can ever name itself so; an exclusive acquire meets it as "another
    /// owner holds a live lock" until the last shared lease ends.
    pub fn shared_holders() -> Self {
        Self(SHARED_HOLDERS.to_owned())
    }

    /// Whether this is [`Self::shared_holders`].
    pub fn is_shared_holders(&self) -> bool {
        self.0 == SHARED_HOLDERS
    }

    /// The holder that a request under session `id` names: the session, whatever its label.
    /// A store reads the session and holds under [`Self::session_holder`] instead. Like
    /// [`Self::shared_holders`], its name holds a control character: no client can name itself
    /// so.
    pub fn of_session(id: &SessionId) -> Self {
        Self(format!("{SESSION_MARK}{id}"))
    }

    /// The holder of every lease under session `id`, labelled `label` (the session's owner).
    /// Two sessions are two holders, whatever their labels.
    pub fn session_holder(id: &SessionId, label: &Owner) -> Self {
        Self(format!(
            "{SESSION_MARK}{id}{SESSION_LABEL}{}",
            label.label()
        ))
    }

    /// The session this holder is ([`Self::of_session`], [`Self::session_holder`]), if any.
    pub fn session(&self) -> Option<SessionId> {
        let rest = self.0.strip_prefix(SESSION_MARK)?;
        let id = rest.split(SESSION_LABEL).next().unwrap_or(rest);
        SessionId::parse(id).ok()
    }

    /// Whether `self` and `other` name the same holder: equal, or the same session (a request
    /// names a session by its id alone, a lease by its id and label).
    pub fn same_holder(&self, other: &Owner) -> bool {
        self == other || self.session().is_some_and(|id| other.session() == Some(id))
    }

    /// What the holder shows as its owner: a session holder's label (its id before a store read
    /// the session), every other owner's name.
    pub fn label(&self) -> &str {
        match self.0.strip_prefix(SESSION_MARK) {
            Some(rest) => match rest.split_once(SESSION_LABEL) {
                Some((_, label)) => label,
                None => rest,
            },
            None => &self.0,
        }
    }

    /// An owner as a store kept it: a client's (parsed again), [`Self::shared_holders`] or a
    /// session's holder.
    ///
    /// # Errors
    /// As [`Self::parse`], for a stored name that is none of them.
    pub fn from_stored(stored: &str) -> Result<Self, ValidationError> {
        if stored == SHARED_HOLDERS {
            return Ok(Self::shared_holders());
        }
        if let Some(rest) = stored.strip_prefix(SESSION_MARK) {
            let (id, label) = rest.split_once(SESSION_LABEL).unwrap_or((rest, ""));
            if !label.is_empty() && label.trim() == label {
                // As written by `session_holder`: checked, and kept as it is (a hold's row is
                // read on every grant and release under a session).
                SessionId::check(id)?;
                check_text(label, Self::MAX_CHARS)?;
                return Ok(Self(stored.to_owned()));
            }
            let id = SessionId::parse(id)?;
            return Ok(if label.is_empty() {
                Self::of_session(&id)
            } else {
                Self::session_holder(&id, &Self::parse(label)?)
            });
        }
        Self::parse(stored)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

impl AsRef<str> for Owner {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A client's owner as it is; a session's holder as its label and its session
/// (`worker-7 (session ID)`, or `session ID` when it has no label of its own), never the control
/// character that marks it in a store.
impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.session() {
            Some(id) if self.label() == id.as_str() => write!(f, "session {id}"),
            Some(id) => write!(f, "{} (session {id})", self.label()),
            None => f.write_str(&self.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let at_limit = format!("  {}  ", "o".repeat(255));
        let over_limit = "o".repeat(256);
        // 255 characters of up to four bytes each: the limit counts characters.
        let multibyte_at_limit = format!("\u{3000}{}😀\u{3000}", "日".repeat(254));
        let multibyte_over_limit = "é".repeat(256);
        let cases: Vec<(&str, Result<&str, &str>)> = vec![
            ("worker-7", Ok("worker-7")),
            ("  worker-7\t", Ok("worker-7")),
            ("\u{2003}worker\u{3000}", Ok("worker")),
            ("Worker 7", Ok("Worker 7")),
            (&at_limit, Ok(at_limit.trim())),
            ("", Err("empty")),
            ("   ", Err("empty")),
            ("\n\t\r", Err("empty")),
            (&over_limit, Err("too_long")),
            (&multibyte_at_limit, Ok(multibyte_at_limit.trim())),
            (&multibyte_over_limit, Err("too_long")),
            ("work\0er", Err("control_character")),
            ("work\ner", Err("control_character")),
            ("work\u{1b}er", Err("control_character")),
        ];
        for (raw, expected) in cases {
            let got = Owner::parse(raw);
            match expected {
                Ok(want) => assert_eq!(got.as_ref().map(Owner::as_str), Ok(want), "input {raw:?}"),
                Err(code) => assert_eq!(got.map_err(|e| e.code()), Err(code), "input {raw:?}"),
            }
        }
    }

    #[test]
    fn a_session_holder_shows_its_label_and_session_not_its_mark() {
        let id = crate::SessionId::parse("AAAAAAAAAAAAAAAAAAAAAA").unwrap();
        let label = Owner::parse("worker-7").unwrap();
        let holder = Owner::session_holder(&id, &label);
        assert_eq!(
            holder.to_string(),
            "worker-7 (session AAAAAAAAAAAAAAAAAAAAAA)"
        );
        assert_eq!(
            Owner::of_session(&id).to_string(),
            "session AAAAAAAAAAAAAAAAAAAAAA"
        );
        assert_eq!(label.to_string(), "worker-7");
    }

    #[test]
    fn no_client_can_name_itself_the_shared_holders() {
        let marker = Owner::shared_holders();
        assert!(marker.is_shared_holders());
        assert!(Owner::parse(marker.as_str()).is_err());
        assert_eq!(Owner::from_stored(marker.as_str()), Ok(marker));
        assert!(!Owner::parse("shared").unwrap().is_shared_holders());
        assert_eq!(
            Owner::from_stored("worker-7"),
            Ok(Owner::parse("worker-7").unwrap())
        );
    }

    #[test]
    fn a_session_holder_is_no_client_and_shows_its_label() {
        let id = SessionId::from_random([7; 16]);
        let label = Owner::parse("worker-7").unwrap();
        let named = Owner::of_session(&id);
        let holder = Owner::session_holder(&id, &label);
        for owner in [&named, &holder] {
            assert!(Owner::parse(owner.as_str()).is_err());
            assert_eq!(Owner::from_stored(owner.as_str()).as_ref(), Ok(owner));
            assert_eq!(owner.session(), Some(id.clone()));
        }
        assert_eq!(holder.label(), "worker-7");
        assert_eq!(named.label(), id.as_str());
        assert_eq!(label.label(), "worker-7");
        assert_eq!(label.session(), None);
        // A label with the separator in it is still the whole label.
        let odd = Owner::session_holder(&id, &Owner::parse("a:b").unwrap());
        assert_eq!(odd.label(), "a:b");
        assert_eq!(Owner::from_stored(odd.as_str()), Ok(odd));
        assert_ne!(
            Owner::session_holder(&SessionId::from_random([8; 16]), &label),
            holder,
            "two sessions with one label are two holders"
        );
        assert!(Owner::from_stored("\u{2}nope:x").is_err());
        // A stored label is checked as a client's owner is.
        let bad = format!("\u{2}{id}:bad\u{7}label");
        assert!(Owner::from_stored(&bad).is_err());
        let long = format!("\u{2}{id}:{}", "x".repeat(Owner::MAX_CHARS + 1));
        assert!(Owner::from_stored(&long).is_err());
    }

    #[test]
    fn owners_compare_case_sensitively() {
        assert_ne!(
            Owner::parse("Worker").unwrap(),
            Owner::parse("worker").unwrap()
        );
        assert_eq!(
            Owner::parse(" worker ").unwrap(),
            Owner::parse("worker").unwrap()
        );
    }
}
