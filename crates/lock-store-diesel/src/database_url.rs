//! Which database a URL names, and therefore which backend serves it.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use percent_encoding::percent_decode_str;
use thiserror::Error;

/// A parsed `--database-url`: `sqlite://PATH` (the path is everything after the scheme, so
/// `sqlite:///var/lib/lockd.db` is absolute) or `postgres://...` / `postgresql://...`.
#[derive(Clone, PartialEq, Eq)]
pub enum DatabaseUrl {
    Sqlite(PathBuf),
    Postgres(String),
}

/// Why a database URL was refused. No message repeats the URL: it may hold a password.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DatabaseUrlError {
    /// The scheme is neither `sqlite` nor `postgres`/`postgresql` (named when it is a plain
    /// scheme word, `…` otherwise).
    #[error("unsupported database URL scheme {0:?}: use sqlite://PATH or postgres://...")]
    UnsupportedScheme(String),
    #[error("sqlite:// URL without a file path")]
    EmptySqlitePath,
    /// An `@` that does not end the user name and password: libpq would read part of the
    /// password as the host or port, and repeat it in its error messages.
    #[error(
        "the database URL has an '@' that does not end its user name and password: \
         percent-encode '@', '/', '?' and '&' in them (%40, %2F, %3F, %26)"
    )]
    AmbiguousUserinfo,
    /// A query parameter without `=` (such as the rest of a password with an unencoded `&`).
    #[error(
        "a query parameter of the database URL has no '=': percent-encode '&' in a password \
         as %26"
    )]
    QueryWithoutValue,
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
            let parts = PostgresUrl::split(raw);
            if parts.ambiguous {
                return Err(DatabaseUrlError::AmbiguousUserinfo);
            }
            if parts.query_pairs().any(|(_, value)| value.is_none()) {
                return Err(DatabaseUrlError::QueryWithoutValue);
            }
            return Ok(Self::Postgres(raw.to_owned()));
        }
        let scheme = raw.split_once("://").map_or(raw, |(scheme, _)| scheme);
        let plain = !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        Err(DatabaseUrlError::UnsupportedScheme(if plain {
            scheme.to_owned()
        } else {
            "…".to_owned()
        }))
    }
}

impl DatabaseUrl {
    /// The URL with every password (`user:PASSWORD@`, `?password=`, `?sslpassword=`) replaced
    /// by `***`, for logs and error messages.
    pub fn redacted(&self) -> String {
        match self {
            Self::Sqlite(path) => format!("sqlite://{}", path.display()),
            Self::Postgres(url) => PostgresUrl::split(url).redacted(),
        }
    }

    /// `text` (an error message of the database or its driver) with every password of this URL,
    /// as written and percent-decoded, replaced by `***`: libpq may repeat parts of the
    /// connection string in its messages.
    pub fn scrub(&self, text: &str) -> String {
        match self {
            Self::Sqlite(_) => text.to_owned(),
            Self::Postgres(url) => scrub_secrets(url, text),
        }
    }
}

impl fmt::Debug for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

/// `text` with every password of the PostgreSQL URL `url` replaced by `***`.
pub(crate) fn scrub_secrets(url: &str, text: &str) -> String {
    let mut secrets = PostgresUrl::split(url).secrets();
    // Longest first, so that a password that contains another is hidden whole.
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    let mut scrubbed = text.to_owned();
    for secret in secrets {
        scrubbed = scrubbed.replace(&secret, "***");
    }
    scrubbed
}

/// `url` (a PostgreSQL URL) without the query parameters that `taken` names, and those
/// parameters as `(key, value)`, the value percent-decoded (an undecodable value as written).
/// The other parameters stay as written, in their order.
pub(crate) fn take_parameters(
    url: &str,
    taken: impl Fn(&str) -> bool,
) -> (String, Vec<(String, String)>) {
    let parts = PostgresUrl::split(url);
    let Some(query) = parts.query else {
        return (url.to_owned(), Vec::new());
    };
    let base = &url[..url.len() - query.len() - 1];
    let mut kept = Vec::new();
    let mut took = Vec::new();
    for (key, value) in parts.query_pairs() {
        match value {
            Some(value) if taken(key) => {
                let decoded = percent_decode_str(value)
                    .decode_utf8()
                    .map_or_else(|_| value.to_owned(), |decoded| decoded.into_owned());
                took.push((key.to_owned(), decoded));
            }
            Some(value) => kept.push(format!("{key}={value}")),
            None => kept.push(key.to_owned()),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    (rest, took)
}

/// The query parameters that hold secrets.
const SECRET_PARAMETERS: [&str; 2] = ["password", "sslpassword"];

/// A PostgreSQL URL cut where libpq cuts it: the user information ends at the first `@`, if one
/// comes before the first `/`; the query starts at the first `?` after it.
struct PostgresUrl<'a> {
    scheme: &'a str,
    user: Option<&'a str>,
    password: Option<&'a str>,
    /// Host, port and path.
    location: &'a str,
    query: Option<&'a str>,
    /// An `@` that libpq would not take as the end of the user information.
    ambiguous: bool,
}

impl<'a> PostgresUrl<'a> {
    fn split(url: &'a str) -> Self {
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let first_slash = rest.find('/').unwrap_or(rest.len());
        let (userinfo, after) = match rest[..first_slash].find('@') {
            Some(at) => (Some(&rest[..at]), &rest[at + 1..]),
            None => (None, rest),
        };
        let ambiguous = after.contains('@');
        let (user, password) = match userinfo.map(|info| info.split_once(':')) {
            Some(Some((user, password))) => (Some(user), Some(password)),
            Some(None) => (userinfo, None),
            None => (None, None),
        };
        let (location, query) = match after.split_once('?') {
            Some((location, query)) => (location, Some(query)),
            None => (after, None),
        };
        Self {
            scheme,
            user,
            password,
            location,
            query,
            ambiguous,
        }
    }

    /// `(key, value)` of each query parameter; `None` when it has no `=`.
    fn query_pairs(&self) -> impl Iterator<Item = (&'a str, Option<&'a str>)> {
        self.query
            .into_iter()
            .flat_map(|query| query.split('&'))
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (key, Some(value)),
                None => (pair, None),
            })
    }

    fn secrets(&self) -> Vec<String> {
        let written = self.password.into_iter().chain(
            self.query_pairs()
                .filter(|(key, _)| SECRET_PARAMETERS.contains(key))
                .filter_map(|(_, value)| value),
        );
        let mut secrets = Vec::new();
        for secret in written.filter(|secret| !secret.is_empty()) {
            secrets.push(secret.to_owned());
            if let Ok(decoded) = percent_decode_str(secret).decode_utf8() {
                if decoded != secret && !decoded.is_empty() {
                    secrets.push(decoded.into_owned());
                }
            }
        }
        secrets
    }

    fn redacted(&self) -> String {
        if self.ambiguous {
            // Whatever follows may be part of a password.
            return format!("{}://…", self.scheme);
        }
        let mut out = format!("{}://", self.scheme);
        if let Some(user) = self.user {
            out.push_str(user);
            if self.password.is_some() {
                out.push_str(":***");
            }
            out.push('@');
        }
        out.push_str(self.location);
        if self.query.is_some() {
            let pairs: Vec<String> = self
                .query_pairs()
                .map(|(key, value)| match value {
                    Some(_) if SECRET_PARAMETERS.contains(&key) => format!("{key}=***"),
                    Some(value) => format!("{key}={value}"),
                    None => key.to_owned(),
                })
                .collect();
            out.push('?');
            out.push_str(&pairs.join("&"));
        }
        out
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
                Err(DatabaseUrlError::UnsupportedScheme("…".into())),
            ),
            (
                "u:s3cr3t@h/db",
                Err(DatabaseUrlError::UnsupportedScheme("…".into())),
            ),
            (
                "postgres://u:s3/cr3t@h/db",
                Err(DatabaseUrlError::AmbiguousUserinfo),
            ),
            (
                "postgres://u:s3@cr3t@h/db",
                Err(DatabaseUrlError::AmbiguousUserinfo),
            ),
            (
                "postgres://u@h/db?password=s3&cr3t",
                Err(DatabaseUrlError::QueryWithoutValue),
            ),
        ];
        for (raw, expected) in cases {
            assert_eq!(&raw.parse::<DatabaseUrl>(), expected, "{raw}");
        }
    }

    #[test]
    fn parameters_are_taken_out_of_the_query_and_decoded() {
        let ssl = |key: &str| key.starts_with("ssl");
        type Taken<'a> = &'a [(&'a str, &'a str)];
        let cases: &[(&str, &str, Taken)] = &[
            ("postgres://u@h/db", "postgres://u@h/db", &[]),
            (
                "postgres://u@h/db?sslmode=require",
                "postgres://u@h/db",
                &[("sslmode", "require")],
            ),
            (
                "postgres://u:p%3Fq@h/db?application_name=x&sslrootcert=%2Fetc%2Fca.pem&connect_timeout=2",
                "postgres://u:p%3Fq@h/db?application_name=x&connect_timeout=2",
                &[("sslrootcert", "/etc/ca.pem")],
            ),
        ];
        for (url, rest, taken) in cases {
            let (left, took) = take_parameters(url, ssl);
            assert_eq!(&left, rest, "{url}");
            let took: Vec<(&str, &str)> = took
                .iter()
                .map(|(key, value)| (key.as_str(), value.as_str()))
                .collect();
            assert_eq!(&took, taken, "{url}");
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

    #[test]
    fn query_passwords_are_redacted() {
        let url: DatabaseUrl =
            "postgres://lockd@db/locks?sslmode=disable&password=s3cr3t&sslpassword=k3y"
                .parse()
                .unwrap();
        assert_eq!(
            url.redacted(),
            "postgres://lockd@db/locks?sslmode=disable&password=***&sslpassword=***"
        );
        let url: DatabaseUrl = "postgresql://u:p%40ss@db?password=s3cr3t".parse().unwrap();
        assert_eq!(url.redacted(), "postgresql://u:***@db?password=***");
        assert!(!format!("{url:?}").contains("s3cr3t"));
    }

    #[test]
    fn errors_are_scrubbed_of_every_password_as_written_and_decoded() {
        let url: DatabaseUrl =
            "postgres://u:p%40ss%3Fword@db/x?password=s3cr3t&application_name=app"
                .parse()
                .unwrap();
        let message = "FATAL: password \"s3cr3t\" or p@ss?word or p%40ss%3Fword for user u";
        assert_eq!(
            url.scrub(message),
            "FATAL: password \"***\" or *** or *** for user u"
        );
        let sqlite: DatabaseUrl = "sqlite://x.db".parse().unwrap();
        assert_eq!(sqlite.scrub("nothing to hide"), "nothing to hide");
    }

    #[test]
    fn refusals_never_repeat_the_password() {
        for raw in [
            "postgres://u:s3cr3t/x@h/db",
            "postgres://u:s3cr3t@x@h/db",
            "postgres://u@h/db?password=s3&cr3t",
            "mysql:u:s3cr3t@h",
            "u:s3cr3t@h/db",
        ] {
            let error = raw.parse::<DatabaseUrl>().expect_err(raw);
            let message = error.to_string();
            for part in ["s3cr3t", "s3", "cr3t"] {
                assert!(!message.contains(part), "{raw}: {message}");
            }
        }
    }
}
