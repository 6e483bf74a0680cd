//! The terms every acquire takes, whatever the primitive: who holds the lease (`owner`, or an
//! election's `candidate`), for how long (`ttl_seconds`), how long the request may wait for it
//! (`wait_seconds`), its `value` and its `lock_delay_seconds`. Each is read once here, through
//! its field definition (`crate::fields`), for the acquires of a lock, a set, a semaphore and an
//! election; each parser lists the terms' errors among its own inputs' in its contract's order,
//! with one collector of invalid inputs ([`Invalid`]).

use std::time::Duration;

use lock_domain::{LeaseValue, LockDelay, Owner, Ttl};

use crate::body::LockFields;
use crate::fields::lock_delay::{self, lock_delay_field};
use crate::fields::owner::{owner_field, owner_field_named, CANDIDATE};
use crate::fields::semaphore::value_field;
use crate::fields::session::session_field;
use crate::fields::{ttl_field, wait_field};
use crate::problem::{FieldError, ProblemKind};
use crate::ApiSettings;

/// The field that names the holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Holder {
    /// `owner`: a lock's, a set's, a semaphore's.
    Owner,
    /// `candidate`: an election's.
    Candidate,
}

/// How an acquire takes `wait_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wait {
    /// Read (absent: 0, an answer at once).
    Read,
    /// Ignored like any unknown field: a renew, which never waits.
    Ignored,
}

/// How an acquire takes `lock_delay_seconds`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Delay {
    /// The one asked for, or the server's default when absent.
    OrDefault,
    /// None may be asked for: 0 or absent is no lock-delay, anything else is refused, saying
    /// this (a shared lease, a set's grants).
    Refused(&'static str),
    /// Ignored like any unknown field: a renew keeps its lease's own.
    Ignored,
}

/// The terms of one acquire, each parsed or refused on its own.
pub(crate) struct Terms {
    pub holder: Result<Owner, FieldError>,
    pub ttl: Result<Ttl, FieldError>,
    pub wait: Result<Duration, FieldError>,
    pub value: Result<Option<LeaseValue>, FieldError>,
    pub lock_delay: Result<LockDelay, FieldError>,
}

impl Terms {
    /// The terms in `fields`, read as `holder`, `wait` and `delay` say, under `settings`'
    /// limits and default.
    pub(crate) fn read(
        fields: &LockFields<'_>,
        holder: Holder,
        wait: Wait,
        delay: Delay,
        settings: &ApiSettings,
    ) -> Self {
        let (holder_name, holder_raw) = match holder {
            Holder::Owner => ("owner", fields.owner),
            Holder::Candidate => (CANDIDATE, fields.candidate),
        };
        match session_field(fields.session) {
            Ok(None) => {}
            // The session is the holder, and its end and lock-delay the hold's.
            session => {
                return Self::under_session(
                    session,
                    fields,
                    holder_name,
                    holder_raw,
                    wait,
                    settings,
                )
            }
        }
        let holder = match holder {
            Holder::Owner => owner_field(fields.owner),
            Holder::Candidate => owner_field_named(CANDIDATE, fields.candidate),
        };
        let wait = match wait {
            Wait::Read => wait_field(fields.wait_seconds, settings.max_wait_seconds)
                .map(|seconds| Duration::from_secs(u64::from(seconds))),
            Wait::Ignored => Ok(Duration::ZERO),
        };
        let lock_delay = match delay {
            Delay::OrDefault => {
                lock_delay_field(fields.lock_delay_seconds, settings.default_lock_delay)
            }
            Delay::Refused(why) => lock_delay_field(fields.lock_delay_seconds, LockDelay::NONE)
                .and_then(|delay| {
                    if delay == LockDelay::NONE {
                        Ok(delay)
                    } else {
                        Err(FieldError::new(lock_delay::NAME, "invalid_value", why))
                    }
                }),
            Delay::Ignored => Ok(LockDelay::NONE),
        };
        Self {
            holder,
            ttl: ttl_field(fields.ttl_seconds, settings.max_ttl_seconds),
            wait,
            value: value_field(fields.value),
            lock_delay,
        }
    }
}

impl Terms {
    /// The terms of an acquire under the session `session` names: the session is the holder;
    /// naming the holder, a TTL or a lock-delay too is a `conflict`.
    fn under_session(
        session: Result<Option<lock_domain::SessionId>, FieldError>,
        fields: &LockFields<'_>,
        holder_name: &'static str,
        holder_raw: Option<&serde_json::value::RawValue>,
        wait: Wait,
        settings: &ApiSettings,
    ) -> Self {
        let conflict = |name: &'static str, raw: Option<&serde_json::value::RawValue>| match raw
            .filter(|raw| raw.get() != "null")
        {
            Some(_) => Err(FieldError::new(
                name,
                "conflict",
                format!("{name} cannot be given with session: the session decides it"),
            )),
            None => Ok(()),
        };
        let holder = conflict(holder_name, holder_raw)
            .and_then(|()| session.map(|id| Owner::of_session(&id.expect("a session was given"))));
        // The store holds under the session's TTL: this one only stands in for it.
        let ttl = conflict("ttl_seconds", fields.ttl_seconds).map(|()| Ttl::SESSION_HELD);
        let lock_delay =
            conflict(lock_delay::NAME, fields.lock_delay_seconds).map(|()| LockDelay::NONE);
        let wait = match wait {
            Wait::Read => wait_field(fields.wait_seconds, settings.max_wait_seconds)
                .map(|seconds| Duration::from_secs(u64::from(seconds))),
            Wait::Ignored => Ok(Duration::ZERO),
        };
        Self {
            holder,
            ttl,
            wait,
            value: value_field(fields.value),
            lock_delay,
        }
    }
}

/// Every invalid input of one request, in the order its parser takes them: one 422 lists them
/// all.
#[derive(Debug, Default)]
pub(crate) struct Invalid(Vec<FieldError>);

impl Invalid {
    /// The value of one input, or `None` with its error kept.
    pub(crate) fn take<T>(&mut self, parsed: Result<T, FieldError>) -> Option<T> {
        parsed.map_err(|error| self.0.push(error)).ok()
    }

    /// The value of an input whose parts each may be invalid (a list), or `None` with every
    /// error kept.
    pub(crate) fn take_all<T>(&mut self, parsed: Result<T, Vec<FieldError>>) -> Option<T> {
        parsed.map_err(|errors| self.0.extend(errors)).ok()
    }

    /// The 422 listing every invalid input.
    pub(crate) fn problem(self) -> ProblemKind {
        ProblemKind::Validation(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::parse_object;

    fn terms(body: &str, holder: Holder, wait: Wait, delay: Delay) -> Terms {
        let fields = parse_object(body.as_bytes()).expect("a JSON object");
        Terms::read(&fields, holder, wait, delay, &ApiSettings::default())
    }

    fn code<T: std::fmt::Debug>(parsed: &Result<T, FieldError>) -> (&str, &str) {
        let error = parsed.as_ref().expect_err("an invalid input");
        (error.field.as_str(), error.code.as_str())
    }

    #[test]
    fn every_term_is_read_through_its_field_and_the_holder_under_its_own_name() {
        let read = terms(
            r#"{"candidate": "node-a", "ttl_seconds": 30, "wait_seconds": 2, "value": 7, "lock_delay_seconds": 5}"#,
            Holder::Candidate,
            Wait::Read,
            Delay::OrDefault,
        );
        assert_eq!(read.holder.unwrap().as_str(), "node-a");
        assert_eq!(read.ttl.unwrap().seconds(), 30);
        assert_eq!(read.wait.unwrap(), Duration::from_secs(2));
        assert!(read.value.unwrap().is_some());
        assert_eq!(read.lock_delay.unwrap(), LockDelay::parse(5).unwrap());
        // An election's holder is `candidate`: an `owner` does not stand in for it.
        let read = terms(
            r#"{"owner": "node-a", "ttl_seconds": 30}"#,
            Holder::Candidate,
            Wait::Read,
            Delay::OrDefault,
        );
        assert_eq!(code(&read.holder), ("candidate", "required"));
    }

    #[test]
    fn an_absent_lock_delay_is_the_servers_default_and_a_refused_one_must_be_zero() {
        let absent = terms(
            r#"{"owner": "w", "ttl_seconds": 30}"#,
            Holder::Owner,
            Wait::Read,
            Delay::OrDefault,
        );
        assert_eq!(
            absent.lock_delay.unwrap(),
            ApiSettings::default().default_lock_delay
        );
        for body in [
            r#"{"owner": "w", "ttl_seconds": 30}"#,
            r#"{"owner": "w", "ttl_seconds": 30, "lock_delay_seconds": 0}"#,
        ] {
            let none = terms(body, Holder::Owner, Wait::Read, Delay::Refused("why"));
            assert_eq!(none.lock_delay.unwrap(), LockDelay::NONE, "{body}");
        }
        // `null` is no integer, refused or not.
        let null = terms(
            r#"{"owner": "w", "ttl_seconds": 30, "lock_delay_seconds": null}"#,
            Holder::Owner,
            Wait::Read,
            Delay::Refused("why"),
        );
        assert_eq!(
            code(&null.lock_delay),
            ("lock_delay_seconds", "invalid_type")
        );
        let asked = terms(
            r#"{"owner": "w", "ttl_seconds": 30, "lock_delay_seconds": 3}"#,
            Holder::Owner,
            Wait::Read,
            Delay::Refused("a shared lease has none"),
        );
        assert_eq!(
            code(&asked.lock_delay),
            ("lock_delay_seconds", "invalid_value")
        );
        assert_eq!(
            asked.lock_delay.unwrap_err().message,
            "a shared lease has none"
        );
    }

    #[test]
    fn a_renew_ignores_wait_and_lock_delay_like_unknown_fields() {
        let renew = terms(
            r#"{"owner": "w", "ttl_seconds": 30, "wait_seconds": "soon", "lock_delay_seconds": -1}"#,
            Holder::Owner,
            Wait::Ignored,
            Delay::Ignored,
        );
        assert_eq!(renew.wait.unwrap(), Duration::ZERO);
        assert_eq!(renew.lock_delay.unwrap(), LockDelay::NONE);
        let acquire = terms(
            r#"{"owner": "w", "ttl_seconds": 30, "wait_seconds": "soon", "lock_delay_seconds": -1}"#,
            Holder::Owner,
            Wait::Read,
            Delay::OrDefault,
        );
        assert_eq!(code(&acquire.wait), ("wait_seconds", "invalid_type"));
        assert_eq!(code(&acquire.lock_delay).0, "lock_delay_seconds");
    }

    #[test]
    fn invalid_lists_every_error_in_the_order_taken() {
        let mut invalid = Invalid::default();
        assert_eq!(
            invalid.take::<u8>(Err(FieldError::new("a", "required", "a"))),
            None
        );
        assert_eq!(invalid.take(Ok(1)), Some(1));
        assert_eq!(
            invalid.take_all::<u8>(Err(vec![
                FieldError::new("b", "empty", "b"),
                FieldError::new("c", "too_long", "c"),
            ])),
            None
        );
        let ProblemKind::Validation(errors) = invalid.problem() else {
            panic!("a 422");
        };
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(fields, ["a", "b", "c"]);
    }
}
