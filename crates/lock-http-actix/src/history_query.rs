//! The query strings of the history routes and the event stream, parsed: each parameter known,
//! given once and valid, or a 422 listing every one that is not.

use lock_domain::{
    HistoryQuery, HistorySubject, LeaseKind, ListLimit, ResourceName, ResourcePrefix,
};

use crate::fields::{history, listing};
use crate::problem::{FieldError, ProblemKind};
use crate::query_string::parameters;

/// The parameters of a history page, and the one of the event stream.
#[derive(Debug, Default)]
struct Found {
    prefix: ResourcePrefix,
    limit: ListLimit,
    cursor: Option<lock_domain::HistoryId>,
    since: Option<chrono::DateTime<chrono::Utc>>,
    kinds: Vec<LeaseKind>,
}

fn parse(query: &str, allowed: &[&str]) -> Result<Found, ProblemKind> {
    let mut errors: Vec<FieldError> = Vec::new();
    let mut found = Found::default();
    for parameter in parameters(query, allowed) {
        let (key, value) = match parameter {
            Ok(pair) => pair,
            Err(error) => {
                errors.push(error);
                continue;
            }
        };
        let parsed = match key.as_str() {
            "prefix" => listing::prefix_text(value).map(|prefix| found.prefix = prefix),
            "limit" => listing::limit_text(&value).map(|limit| found.limit = limit),
            "cursor" => history::cursor_text(&value).map(|id| found.cursor = Some(id)),
            "since" => history::since_text(&value).map(|at| found.since = Some(at)),
            _ => history::kinds_text(&value).map(|kinds| found.kinds = kinds),
        };
        if let Err(error) = parsed {
            errors.push(error);
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(ProblemKind::Validation(errors))
    }
}

/// The query of `GET /locks/{resource}/history` (and of a semaphore's or an election's):
/// `limit`, `cursor`, `since`, for the name of the path as parsed (its error, if any, comes
/// first among the 422's).
pub(crate) fn one(
    query: &str,
    kind: LeaseKind,
    name: Result<ResourceName, FieldError>,
) -> Result<HistoryQuery, ProblemKind> {
    let found = parse(query, &["limit", "cursor", "since"]);
    let (name, found) = match (name, found) {
        (Ok(name), Ok(found)) => (name, found),
        (Ok(_), Err(problem)) => return Err(problem),
        (Err(error), Ok(_)) => return Err(ProblemKind::Validation(vec![error])),
        (Err(error), Err(ProblemKind::Validation(mut errors))) => {
            errors.insert(0, error);
            return Err(ProblemKind::Validation(errors));
        }
        (Err(_), Err(problem)) => return Err(problem),
    };
    Ok(HistoryQuery {
        subject: HistorySubject::One { kind, name },
        since: found.since,
        before: found.cursor,
        limit: found.limit,
    })
}

/// The query of `GET /history`: `prefix`, `since`, `limit`, `cursor`.
pub(crate) fn tenant(query: &str) -> Result<HistoryQuery, ProblemKind> {
    let found = parse(query, &["prefix", "since", "limit", "cursor"])?;
    Ok(HistoryQuery {
        subject: HistorySubject::Prefix(found.prefix),
        since: found.since,
        before: found.cursor,
        limit: found.limit,
    })
}

/// The query of `GET /events`: `prefix`, `kinds`.
pub(crate) fn events(query: &str) -> Result<(ResourcePrefix, Vec<LeaseKind>), ProblemKind> {
    let found = parse(query, &["prefix", "kinds"])?;
    Ok((found.prefix, found.kinds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(result: Result<HistoryQuery, ProblemKind>) -> Vec<(String, String)> {
        match result {
            Ok(_) => vec![],
            Err(ProblemKind::Validation(errors)) => {
                errors.into_iter().map(|e| (e.field, e.code)).collect()
            }
            Err(other) => panic!("{other:?}"),
        }
    }

    #[test]
    fn pages_take_their_parameters_once_each() {
        let q = tenant("prefix=pay%3A&since=2026-11-29T21%3A00%3A00Z&limit=5&cursor=17").unwrap();
        assert_eq!(q.limit.get(), 5);
        assert_eq!(q.before.map(|id| id.value()), Some(17));
        assert!(q.since.is_some());
        assert_eq!(
            q.subject,
            HistorySubject::Prefix(ResourcePrefix::parse("pay:").unwrap())
        );
        let name = ResourceName::parse("r").unwrap();
        assert_eq!(
            codes(one(
                "prefix=x&limit=0&limit=2&cursor=0",
                LeaseKind::Lock,
                Ok(name)
            )),
            vec![
                ("prefix".to_owned(), "unknown_parameter".to_owned()),
                ("limit".to_owned(), "out_of_range".to_owned()),
                ("limit".to_owned(), "conflict".to_owned()),
                ("cursor".to_owned(), "invalid_cursor".to_owned()),
            ]
        );
        let bad_name = FieldError::new("resource", "empty", "resource is empty");
        assert_eq!(
            codes(one("limit=x", LeaseKind::Lock, Err(bad_name))),
            vec![
                ("resource".to_owned(), "empty".to_owned()),
                ("limit".to_owned(), "invalid_type".to_owned()),
            ]
        );
        assert_eq!(
            codes(tenant("kinds=lock")),
            vec![("kinds".to_owned(), "unknown_parameter".to_owned())]
        );
    }

    #[test]
    fn the_stream_takes_a_prefix_and_kinds() {
        let (prefix, kinds) = events("prefix=job&kinds=semaphore").unwrap();
        assert_eq!(prefix.as_str(), "job");
        assert_eq!(kinds, vec![LeaseKind::Semaphore]);
        assert!(events("limit=3").is_err());
        assert!(events("kinds=nope").is_err());
    }
}
