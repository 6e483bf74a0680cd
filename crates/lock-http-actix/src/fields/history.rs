//! The query parameters of the history routes and the event stream: `limit` and `prefix` as a
//! listing's, `cursor` (the id of the last record of the previous page), `since` (an RFC 3339
//! time) and `kinds` (a comma-separated list of lock, semaphore, election).

use chrono::{DateTime, Utc};
use lock_domain::{HistoryId, LeaseKind};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{KnownFormat, SchemaFormat};
use utoipa::openapi::{ObjectBuilder, Required, Type};

use crate::problem::FieldError;

fn query(
    name: &str,
    description: &str,
    schema: ObjectBuilder,
    example: serde_json::Value,
) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .example(Some(example))
        .build()
}

/// `cursor`: the `next_cursor` of the previous page.
pub(crate) fn cursor_parameter() -> Parameter {
    query(
        "cursor",
        "The `next_cursor` of the previous page, unchanged: the page holds the records older \
         than it.",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(ID_PATTERN)),
        "1742".into(),
    )
}

/// `since`: only records at or after this time.
pub(crate) fn since_parameter() -> Parameter {
    query(
        "since",
        "Only records committed at or after this time (RFC 3339, e.g. `2026-11-29T21:32:27Z`).",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        "2026-11-29T21:00:00Z".into(),
    )
}

/// `kinds`: which primitives an event stream carries.
pub(crate) fn kinds_parameter() -> Parameter {
    query(
        "kinds",
        "Only records of these kinds, comma-separated: `lock` (exclusive and shared), \
         `semaphore`, `election`. Default: every kind.",
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(
            "^(lock|semaphore|election)(,(lock|semaphore|election))*$",
        )),
        "lock,election".into(),
    )
}

/// A record id in decimal, as a cursor or an event's `id:`: at most 18 digits, which every id
/// lockd issues fits (SQLite counts them from 1; PostgreSQL's are 65,536 a batch number), so
/// that every value the pattern admits is a 64-bit integer.
pub(crate) const ID_PATTERN: &str = "^[1-9][0-9]{0,17}$";
/// The most digits [`ID_PATTERN`] admits.
pub(crate) const ID_DIGITS: usize = 18;

/// A decoded `cursor`: the id the page starts before.
///
/// # Errors
/// `invalid_cursor` for anything but a positive integer in decimal of at most [`ID_DIGITS`].
pub(crate) fn cursor_text(value: &str) -> Result<HistoryId, FieldError> {
    let invalid = || {
        FieldError::new(
            "cursor",
            "invalid_cursor",
            "cursor is not a cursor this server issued",
        )
    };
    if value.is_empty()
        || value.len() > ID_DIGITS
        || !value.bytes().all(|b| b.is_ascii_digit())
        || value.starts_with('0')
    {
        return Err(invalid());
    }
    value
        .parse::<i64>()
        .ok()
        .and_then(|id| HistoryId::new(id).ok())
        .ok_or_else(invalid)
}

/// A decoded `since`.
///
/// # Errors
/// `invalid_format` when it is not an RFC 3339 time.
pub(crate) fn since_text(value: &str) -> Result<DateTime<Utc>, FieldError> {
    DateTime::parse_from_rfc3339(value)
        .map(|at| at.with_timezone(&Utc))
        .map_err(|_| {
            FieldError::new(
                "since",
                "invalid_format",
                "since must be an RFC 3339 time, such as 2026-11-29T21:32:27Z",
            )
        })
}

/// A decoded `kinds`: the kinds named, each once.
///
/// # Errors
/// `invalid_value` for an empty list, an unknown kind or one named twice.
pub(crate) fn kinds_text(value: &str) -> Result<Vec<LeaseKind>, FieldError> {
    let invalid = |why: String| FieldError::new("kinds", "invalid_value", why);
    let mut kinds = Vec::new();
    for raw in value.split(',') {
        let kind = LeaseKind::parse(raw).ok_or_else(|| {
            invalid(format!(
                "kinds names {raw:?}: the kinds are lock, semaphore and election"
            ))
        })?;
        if kinds.contains(&kind) {
            return Err(invalid(format!("kinds names {raw} twice")));
        }
        kinds.push(kind);
    }
    Ok(kinds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_are_positive_decimal_ids_the_pattern_admits() {
        assert_eq!(cursor_text("1742").unwrap().value(), 1742);
        let pattern = regex::Regex::new(ID_PATTERN).unwrap();
        let longest = "999999999999999999";
        assert!(pattern.is_match(longest));
        assert_eq!(
            cursor_text(longest).unwrap().value(),
            999_999_999_999_999_999
        );
        // 19 digits: past the pattern (some are past i64 too), refused whatever their value.
        for bad in [
            "1000000000000000000",
            "9223372036854775807",
            "9680667903189553194",
        ] {
            assert!(!pattern.is_match(bad), "{bad}");
            assert_eq!(
                cursor_text(bad).unwrap_err().code,
                "invalid_cursor",
                "{bad}"
            );
        }
        for bad in [
            "",
            "0",
            "017",
            "-1",
            "1e3",
            " 1",
            "9223372036854775808",
            "x",
        ] {
            assert_eq!(
                cursor_text(bad).unwrap_err().code,
                "invalid_cursor",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn since_is_rfc_3339() {
        assert!(since_text("2026-11-29T21:32:27Z").is_ok());
        assert!(since_text("2026-11-29T21:32:27.123+02:00").is_ok());
        for bad in ["", "2026-11-29", "yesterday", "2026-13-01T00:00:00Z"] {
            assert_eq!(
                since_text(bad).unwrap_err().code,
                "invalid_format",
                "{bad:?}"
            );
        }
    }

    #[test]
    fn kinds_are_named_once_each() {
        assert_eq!(
            kinds_text("election,lock").unwrap(),
            vec![LeaseKind::Election, LeaseKind::Lock]
        );
        for bad in ["", "lock,", "locks", "lock,lock", "Lock"] {
            assert_eq!(
                kinds_text(bad).unwrap_err().code,
                "invalid_value",
                "{bad:?}"
            );
        }
    }
}
