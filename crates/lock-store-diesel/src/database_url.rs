//! Which database a URL names, and therefore which backend serves it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use thiserror::Error;

/// A parsed `--database-url`: `sqlite://PATH` (the path is everything after the scheme, so
/// `sqlite:///var/lib/lockd.db` is absolute) or `postgres://...` / `postgresql://...`.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Why a database URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DatabaseUrlError {
    #[error("unsupported database URL scheme in {0:?}: use sqlite://PATH or postgres://...")]
    UnsupportedScheme(String),
    #[error("sqlite:// URL without a file path")]
    EmptySqlitePath,
}

impl FromStr for DatabaseUrl {
    type Err = DatabaseUrlError;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        if let Some(path) = raw.strip_prefix("sqlite://") {
            if path.is_empty() {
                return Err(DatabaseUrlError::EmptySqlitePath);
            }
            return Ok(Self::Sqlite(PathBuf::from(path)));
        }
        if raw.starts_with("postgres://") || raw.starts_with("postgresql://") {
            return Ok(Self::Postgres(raw.to_owned()));
        }
        let scheme = raw.split_once("://").map_or(raw, |(scheme, _)| scheme);
        Err(DatabaseUrlError::UnsupportedScheme(scheme.to_owned()))
    }
}

impl DatabaseUrl {
    /// The URL with any password replaced by `***`, for logs and error messages.
    pub fn redacted(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
            Self::Postgres(url) => redact_password(url),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

fn redact_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) => match userinfo.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_table() {
        let cases: &[(&str, Result<DatabaseUrl, DatabaseUrlError>)] = &[
            (
                "sqlite://lockd.db",
                Ok(DatabaseUrl::Sqlite("lockd.db".into())),
            ),
            (
                "sqlite:///var/lib/lockd.db",
                Ok(DatabaseUrl::Sqlite("/var/lib/lockd.db".into())),
            ),
            (
                "sqlite://./data/x.db",
                Ok(DatabaseUrl::Sqlite("./data/x.db".into())),
            ),
            (
                "postgres://u@h/db",
                Ok(DatabaseUrl::Postgres("postgres://u@h/db".into())),
            ),
            (
                "postgresql://u@h/db",
                Ok(DatabaseUrl::Postgres("postgresql://u@h/db".into())),
            ),
            ("sqlite://", Err(DatabaseUrlError::EmptySqlitePath)),
            (
                "mysql://u@h/db",
                Err(DatabaseUrlError::UnsupportedScheme("mysql".into())),
            ),
            (
                "lockd.db",
                Err(DatabaseUrlError::UnsupportedScheme("lockd.db".into())),
            ),
            (
                "sqlite:lockd.db",
                Err(DatabaseUrlError::UnsupportedScheme(
                    "sqlite:lockd.db".into(),
                )),
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(&raw.parse::<DatabaseUrl>(), expected, "{raw}");
        }
    }

    #[test]
    fn passwords_are_redacted() {
        let url: DatabaseUrl = "postgres://lockd:s3cret@db:5432/locks?sslmode=disable"
            .parse()
            .unwrap();
        assert_eq!(
            url.redacted(),
            "postgres://lockd:***@db:5432/locks?sslmode=disable"
        );
        assert!(!format!("{url:?}").contains("s3cret"));
        let url: DatabaseUrl = "postgres://postgres@127.0.0.1/test".parse().unwrap();
        assert_eq!(url.redacted(), "postgres://postgres@127.0.0.1/test");
    }
}
