//! The TLS settings read as libpq reads them, and connections to the test server with each mode.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use openssl::ssl::SslVersion;
use tokio_postgres::config::SslMode;

use super::{connect, ConnectError, Roots, TlsSettings};
use crate::testing::{postgres_required, TestDatabase};
use crate::DatabaseUrl;

/// URL parameters or environment variables, as written.
type Pairs<'a> = &'a [(&'a str, &'a str)];

/// Environment variables as `(name, value)` pairs.
fn environment(pairs: Pairs) -> HashMap<String, String> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn read(
    params: &[(&str, &str)],
    env: &[(&str, &str)],
    home: Option<&Path>,
) -> Result<TlsSettings, String> {
    let taken: Vec<(String, String)> = params
        .iter()
        .map(|(key, value)| ((*key).to_owned(), (*value).to_owned()))
        .collect();
    let env = environment(env);
    TlsSettings::read(&taken, |name| env.get(name).cloned(), home)
}

/// TLS in `mode` with libpq's defaults and no file to read.
fn plain(mode: SslMode) -> TlsSettings {
    TlsSettings {
        mode,
        min_version: Some(SslVersion::TLS1_2),
        ..TlsSettings::without_tls()
    }
}

/// A home directory with `~/.postgresql/` holding `files`.
fn home_with(files: &[&str]) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join(".postgresql")).unwrap();
    for file in files {
        std::fs::write(home.path().join(".postgresql").join(file), "x").unwrap();
    }
    home
}

#[test]
fn modes_are_read_as_libpq_reads_them() {
    let empty = home_with(&[]);
    let cases: &[(Pairs, Pairs, SslMode)] = &[
        (&[], &[], SslMode::Prefer),
        (&[("sslmode", "allow")], &[], SslMode::Prefer),
        (&[("sslmode", "prefer")], &[], SslMode::Prefer),
        (&[("sslmode", "require")], &[], SslMode::Require),
        // The environment stands in for what the URL does not say, never over it.
        (&[], &[("PGSSLMODE", "require")], SslMode::Require),
        // The last of a repeated parameter counts, as in libpq.
        (
            &[("sslmode", "disable"), ("sslmode", "require")],
            &[],
            SslMode::Require,
        ),
    ];
    for (params, env, mode) in cases {
        assert_eq!(
            read(params, env, Some(empty.path())),
            Ok(plain(*mode)),
            "{params:?} {env:?}"
        );
    }
    // Without TLS no file is read, not even one the URL names that is not there.
    let without = TlsSettings::without_tls();
    for env in [&[][..], &[("PGSSLMODE", "require")][..]] {
        assert_eq!(
            read(
                &[("sslmode", "disable"), ("sslcert", "/nonexistent/c.pem")],
                env,
                Some(empty.path())
            ),
            Ok(without.clone()),
            "{env:?}"
        );
    }
}

#[test]
fn the_server_is_checked_whenever_a_root_file_is_there_and_must_be_for_the_verify_modes() {
    let with_root = home_with(&["root.crt"]);
    let root = with_root.path().join(".postgresql/root.crt");
    let without = home_with(&[]);

    // prefer and require check the server when the default root file exists.
    for mode in ["prefer", "require"] {
        let settings = read(&[("sslmode", mode)], &[], Some(with_root.path())).unwrap();
        assert_eq!(settings.roots, Roots::File(root.clone()), "{mode}");
        assert!(!settings.check_host, "{mode}");
    }
    let settings = read(&[("sslmode", "verify-ca")], &[], Some(with_root.path())).unwrap();
    assert_eq!(
        (settings.mode, settings.roots, settings.check_host),
        (SslMode::Require, Roots::File(root.clone()), false)
    );
    let settings = read(&[("sslmode", "verify-full")], &[], Some(with_root.path())).unwrap();
    assert_eq!(
        (settings.mode, settings.roots, settings.check_host),
        (SslMode::Require, Roots::File(root), true)
    );
    let settings = read(
        &[("sslmode", "verify-full"), ("sslrootcert", "system")],
        &[],
        Some(without.path()),
    )
    .unwrap();
    assert_eq!(settings.roots, Roots::System);

    for (params, home) in [
        (vec![("sslmode", "verify-ca")], Some(without.path())),
        (vec![("sslmode", "verify-full")], Some(without.path())),
        (vec![("sslmode", "verify-full")], None),
        (
            vec![
                ("sslmode", "verify-ca"),
                ("sslrootcert", "/nonexistent/ca.pem"),
            ],
            Some(without.path()),
        ),
    ] {
        let refused = read(&params, &[], home).unwrap_err();
        assert!(
            refused.contains("root certificate"),
            "{params:?}: {refused}"
        );
    }
    // Without the file, require checks nothing (libpq's own behaviour).
    let settings = read(&[("sslmode", "require")], &[], Some(without.path())).unwrap();
    assert_eq!(settings.roots, Roots::Unchecked);
}

#[test]
fn a_client_certificate_is_taken_from_the_url_or_the_home_directory() {
    let with_client = home_with(&["postgresql.crt", "postgresql.key"]);
    let dir = with_client.path().join(".postgresql");
    let settings = read(&[], &[], Some(with_client.path())).unwrap();
    assert_eq!(
        settings.client,
        Some((dir.join("postgresql.crt"), dir.join("postgresql.key")))
    );
    let cert = dir.join("postgresql.crt");
    let cert = cert.to_str().unwrap();
    let settings = read(
        &[
            ("sslcert", cert),
            ("sslkey", "/keys/k.pem"),
            ("sslpassword", "pw"),
        ],
        &[],
        None,
    )
    .unwrap();
    assert_eq!(
        settings.client,
        Some((PathBuf::from(cert), PathBuf::from("/keys/k.pem")))
    );
    assert_eq!(settings.key_password.as_deref(), Some("pw"));
    let missing = read(&[("sslcert", "/nonexistent/c.pem")], &[], None).unwrap_err();
    assert!(missing.contains("client certificate"), "{missing}");
    assert_eq!(
        read(&[], &[], Some(home_with(&[]).path())).unwrap().client,
        None
    );
}

#[test]
fn what_these_connections_cannot_honour_is_refused_not_dropped() {
    let home = home_with(&[]);
    let refusals: &[(Pairs, Pairs, &str)] = &[
        (&[("sslcrl", "/etc/crl.pem")], &[], "sslcrl"),
        (&[("sslcrldir", "/etc/crl")], &[], "sslcrldir"),
        (&[("sslcertmode", "require")], &[], "sslcertmode"),
        (&[("requiressl", "1")], &[], "requiressl"),
        (&[("gssencmode", "require")], &[], "gssencmode"),
        (&[], &[("PGGSSENCMODE", "require")], "gssencmode"),
        (&[], &[("PGSSLCRL", "/etc/crl.pem")], "PGSSLCRL"),
        (&[("sslmode", "verify")], &[], "sslmode"),
        (&[("sslsni", "yes")], &[], "sslsni"),
        (&[("ssl_min_protocol_version", "SSLv3")], &[], "SSLv3"),
    ];
    for (params, env, named) in refusals {
        let refused = read(params, env, Some(home.path())).unwrap_err();
        assert!(refused.contains(named), "{params:?} {env:?}: {refused}");
    }
    // GSS encryption that is only preferred (or off) is not needed: libpq goes on without it.
    for mode in ["disable", "prefer"] {
        assert_eq!(
            read(&[("gssencmode", mode)], &[], Some(home.path())),
            Ok(plain(SslMode::Prefer))
        );
    }
    let settings = read(
        &[
            ("sslsni", "0"),
            ("ssl_min_protocol_version", "TLSv1.3"),
            ("ssl_max_protocol_version", "TLSv1.3"),
            ("sslcompression", "0"),
        ],
        &[],
        Some(home.path()),
    )
    .unwrap();
    assert!(!settings.sni);
    assert_eq!(settings.min_version, Some(SslVersion::TLS1_3));
    assert_eq!(settings.max_version, Some(SslVersion::TLS1_3));
}

/// The test server's URL with `params` added, and its host replaced by `host` when given.
fn url_with(db: &TestDatabase, host: Option<&str>, params: &str) -> String {
    let DatabaseUrl::Postgres(url) = db.url().clone() else {
        unreachable!()
    };
    let url = match host {
        Some(host) => url.replacen("127.0.0.1", host, 1),
        None => url,
    };
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}{params}")
}

/// Whether the connection to `url` is encrypted, as the server sees it.
async fn encrypted(url: &str) -> Result<bool, ConnectError> {
    let (client, connection) = connect(url, Duration::from_secs(5)).await?;
    let running = tokio::spawn(connection);
    let row = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .expect("read pg_stat_ssl");
    drop(client);
    let _ = running.await;
    Ok(row.get(0))
}

/// The server's certificate file, when it serves TLS. CI's server does (Debian's default, with
/// its "snakeoil" certificate for `localhost`): there, a server without TLS fails the test.
async fn server_certificate(db: &TestDatabase) -> Option<String> {
    let (client, connection) = connect(
        &url_with(db, None, "sslmode=disable"),
        Duration::from_secs(5),
    )
    .await
    .expect("connect without TLS");
    tokio::spawn(connection);
    let ssl: String = client.query_one("SHOW ssl", &[]).await.unwrap().get(0);
    if ssl != "on" {
        assert!(
            !postgres_required(),
            "the test server must serve TLS (ssl = on) for the hint connections' TLS tests"
        );
        eprintln!("\n!!!!! the PostgreSQL test server serves no TLS: TLS hint tests skipped\n");
        return None;
    }
    Some(
        client
            .query_one("SHOW ssl_cert_file", &[])
            .await
            .unwrap()
            .get(0),
    )
}

#[tokio::test]
async fn each_mode_connects_as_libpq_would() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let Some(certificate) = server_certificate(&db).await else {
        return;
    };
    assert_eq!(
        encrypted(&url_with(&db, None, "sslmode=disable")).await,
        Ok(false)
    );
    assert_eq!(
        encrypted(&url_with(&db, None, "sslmode=prefer")).await,
        Ok(true)
    );
    assert_eq!(
        encrypted(&url_with(&db, None, "sslmode=require")).await,
        Ok(true)
    );
    let root = format!("sslrootcert={certificate}");
    assert_eq!(
        encrypted(&url_with(&db, None, &format!("sslmode=verify-ca&{root}"))).await,
        Ok(true)
    );
    assert_eq!(
        encrypted(&url_with(
            &db,
            Some("localhost"),
            &format!("sslmode=verify-full&{root}")
        ))
        .await,
        Ok(true),
        "the certificate names localhost"
    );
    // The certificate does not name 127.0.0.1: verify-full refuses, as libpq does.
    let refused = encrypted(&url_with(&db, None, &format!("sslmode=verify-full&{root}"))).await;
    assert!(
        matches!(refused, Err(ConnectError::Failed(_))),
        "{refused:?}"
    );
    // A root file that did not sign the server's certificate: refused even under require.
    let other = tempfile::NamedTempFile::new().unwrap();
    let key = openssl::pkey::PKey::from_rsa(openssl::rsa::Rsa::generate(2048).unwrap()).unwrap();
    let mut name = openssl::x509::X509NameBuilder::new().unwrap();
    name.append_entry_by_text("CN", "another CA").unwrap();
    let name = name.build();
    let mut ca = openssl::x509::X509Builder::new().unwrap();
    ca.set_version(2).unwrap();
    ca.set_subject_name(&name).unwrap();
    ca.set_issuer_name(&name).unwrap();
    ca.set_pubkey(&key).unwrap();
    ca.set_not_before(&openssl::asn1::Asn1Time::days_from_now(0).unwrap())
        .unwrap();
    ca.set_not_after(&openssl::asn1::Asn1Time::days_from_now(1).unwrap())
        .unwrap();
    ca.sign(&key, openssl::hash::MessageDigest::sha256())
        .unwrap();
    std::fs::write(other.path(), ca.build().to_pem().unwrap()).unwrap();
    let refused = encrypted(&url_with(
        &db,
        None,
        &format!("sslmode=require&sslrootcert={}", other.path().display()),
    ))
    .await;
    assert!(
        matches!(refused, Err(ConnectError::Failed(_))),
        "{refused:?}"
    );
    // What cannot be honoured is refused before any connection is tried.
    let refused = encrypted(&url_with(&db, None, "sslmode=require&sslcrl=/etc/crl.pem")).await;
    assert!(
        matches!(refused, Err(ConnectError::Settings(_))),
        "{refused:?}"
    );
}

/// `url` parsed by tokio-postgres, then filled in from `env`, `home` and `socket_dir` as libpq
/// would.
fn filled(url: &str, env: Pairs, home: Option<&Path>, socket_dir: &Path) -> tokio_postgres::Config {
    let mut config: tokio_postgres::Config = url.parse().unwrap();
    let env = environment(env);
    super::fill_defaults(
        &mut config,
        |name| env.get(name).cloned(),
        env.get("PGPASSFILE").map(PathBuf::from),
        home,
        socket_dir,
    );
    config
}

#[test]
fn what_the_url_leaves_out_comes_from_where_libpq_takes_it() {
    use tokio_postgres::config::Host;
    let sockets = tempfile::tempdir().unwrap();
    let config = filled(
        "postgres:///locks",
        &[("USER", "svc"), ("PGPASSWORD", "pw")],
        None,
        sockets.path(),
    );
    assert_eq!(
        config.get_user(),
        Some("svc"),
        "the operating system's user"
    );
    assert_eq!(config.get_hosts(), [Host::Unix(sockets.path().to_owned())]);
    assert_eq!(config.get_dbname(), Some("locks"));
    assert_eq!(config.get_password(), Some(&b"pw"[..]));

    let config = filled(
        "postgres:///",
        &[
            ("PGUSER", "u"),
            ("USER", "svc"),
            ("PGHOST", "db1,db2"),
            ("PGPORT", "5433,5434"),
            ("PGDATABASE", "d"),
        ],
        None,
        sockets.path(),
    );
    assert_eq!(config.get_user(), Some("u"));
    assert_eq!(
        config.get_hosts(),
        [Host::Tcp("db1".into()), Host::Tcp("db2".into())]
    );
    assert_eq!(config.get_ports(), [5433, 5434]);
    assert_eq!(config.get_dbname(), Some("d"));
    assert_eq!(config.get_password(), None);

    // What the URL says wins.
    let config = filled(
        "postgres://a:b@h:6000/x",
        &[
            ("PGUSER", "u"),
            ("PGHOST", "db1"),
            ("PGPORT", "5433"),
            ("PGDATABASE", "d"),
            ("PGPASSWORD", "pw"),
        ],
        None,
        sockets.path(),
    );
    assert_eq!(config.get_user(), Some("a"));
    assert_eq!(config.get_hosts(), [Host::Tcp("h".into())]);
    assert_eq!(config.get_ports(), [6000]);
    assert_eq!(config.get_dbname(), Some("x"));
    assert_eq!(config.get_password(), Some(&b"b"[..]));
}

#[test]
fn a_password_file_is_read_as_libpq_reads_it() {
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let sockets = tempfile::tempdir().unwrap();
    let pgpass = home.path().join(".pgpass");
    std::fs::write(
        &pgpass,
        "# host:port:database:user:password\n\
         other:5432:*:u:wrong\n\
         db:*:locks:u:p\\:w\\\\1:x\n\
         localhost:5432:*:*:sock\n",
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let password = |url: &str| {
        filled(url, &[("USER", "u")], Some(home.path()), sockets.path())
            .get_password()
            .map(|password| String::from_utf8(password.to_vec()).unwrap())
    };
    assert_eq!(password("postgres://db/locks").as_deref(), Some("p:w\\1:x"));
    assert_eq!(
        password("postgres://db:7000/locks").as_deref(),
        Some("p:w\\1:x")
    );
    assert_eq!(password("postgres://db/other").as_deref(), None);
    // A socket directory matches as localhost.
    assert_eq!(password("postgres:///locks").as_deref(), Some("sock"));
    // A file that others may read is ignored, as libpq ignores it.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert_eq!(password("postgres://db/locks"), None);
}

/// A URL without a host (libpq: the server's default socket) reaches the test server over its
/// socket, without TLS (libpq ignores sslmode there). CI's server listens on Debian's default
/// socket directory.
#[tokio::test]
async fn a_url_without_a_host_connects_over_the_default_socket() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let DatabaseUrl::Postgres(url) = db.url().clone() else {
        unreachable!()
    };
    if !url.contains("@127.0.0.1:5432/") || !Path::new(super::DEFAULT_SOCKET_DIR).exists() {
        assert!(
            !postgres_required(),
            "CI's test server is at 127.0.0.1:5432 with its socket in {}",
            super::DEFAULT_SOCKET_DIR
        );
        eprintln!("\n!!!!! the test server is not the default one: socket test skipped\n");
        return;
    }
    let socket_url = url.replacen("@127.0.0.1:5432/", "@/", 1);
    assert_eq!(encrypted(&socket_url).await, Ok(false));
    assert_eq!(
        encrypted(&format!("{socket_url}?sslmode=require")).await,
        Ok(false),
        "sslmode does not apply to a socket"
    );
}

#[test]
fn only_a_socket_goes_without_the_tls_mode_the_url_asks_for() {
    let mode = |url: &str| {
        let config: tokio_postgres::Config = url.parse().unwrap();
        super::mode_for(&config, SslMode::Require)
    };
    assert_eq!(mode("postgres://db/x"), SslMode::Require);
    assert_eq!(
        mode("postgres://%2Fvar%2Frun%2Fpostgresql/x"),
        SslMode::Disable
    );
    assert_eq!(
        mode("postgres://%2Fvar%2Frun%2Fpostgresql,db/x"),
        SslMode::Require,
        "a socket and a TCP host"
    );
    // A host given by its address alone is reached over TCP.
    assert_eq!(mode("postgres:///x?hostaddr=10.0.0.5"), SslMode::Require);
}

#[test]
fn the_key_password_never_shows_in_debug_output() {
    let settings = read(&[("sslpassword", "s3cret-key-pw")], &[], None).unwrap();
    let shown = format!("{settings:?}");
    assert!(!shown.contains("s3cret-key-pw"), "{shown}");
    assert!(shown.contains("***"), "{shown}");
}

/// `url` configured as [`super::connect`] configures it, with `env` for the environment and
/// no home directory.
fn configured(url: &str, env: Pairs) -> Result<tokio_postgres::Config, ConnectError> {
    let env = environment(env);
    let sockets = tempfile::tempdir().unwrap();
    super::configure(url, |name| env.get(name).cloned(), None, sockets.path())
        .map(|(config, _)| config)
}

/// A password file holding `line`, that only its owner may read.
fn password_file(dir: &Path, name: &str, line: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let file = dir.join(name);
    std::fs::write(&file, format!("{line}\n")).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    file
}

#[test]
fn libpq_parameters_that_tokio_postgres_lacks_are_read_as_libpq_reads_them() {
    use tokio_postgres::config::{ChannelBinding, Host, LoadBalanceHosts, TargetSessionAttrs};
    let dir = tempfile::tempdir().unwrap();
    let named = password_file(dir.path(), "named", "h:*:db:u:from-passfile");
    let from_env = password_file(dir.path(), "env", "h:*:db:u:from-pgpassfile");
    let url = format!(
        "postgres://u@h/db?sslmode=disable&passfile={}&fallback_application_name=app\
         &keepalives_count=3&target_session_attrs=read-write&channel_binding=require\
         &load_balance_hosts=random&client_encoding=LATIN1&krbsrvname=postgres&gsslib=gssapi\
         &gssdelegation=0",
        named.display()
    );
    let config = configured(&url, &[("PGPASSFILE", from_env.to_str().unwrap())]).unwrap();
    assert_eq!(
        config.get_password(),
        Some(&b"from-passfile"[..]),
        "`passfile` before PGPASSFILE"
    );
    assert_eq!(config.get_application_name(), Some("app"));
    assert_eq!(config.get_keepalives_retries(), Some(3));
    assert_eq!(
        config.get_target_session_attrs(),
        TargetSessionAttrs::ReadWrite
    );
    assert_eq!(config.get_channel_binding(), ChannelBinding::Require);
    assert_eq!(config.get_load_balance_hosts(), LoadBalanceHosts::Random);

    // From the environment, where the URL leaves them out.
    let config = configured(
        "postgres://u@/db?sslmode=disable&fallback_application_name=app",
        &[
            ("PGPASSFILE", from_env.to_str().unwrap()),
            ("PGAPPNAME", "env-app"),
            ("PGTARGETSESSIONATTRS", "read-only"),
            ("PGCHANNELBINDING", "require"),
            ("PGLOADBALANCEHOSTS", "random"),
            ("PGOPTIONS", "-c statement_timeout=5s"),
            ("PGHOSTADDR", "127.0.0.2"),
        ],
    )
    .unwrap();
    assert_eq!(
        config.get_application_name(),
        Some("env-app"),
        "PGAPPNAME before fallback_application_name"
    );
    assert_eq!(
        config.get_target_session_attrs(),
        TargetSessionAttrs::ReadOnly
    );
    assert_eq!(config.get_channel_binding(), ChannelBinding::Require);
    assert_eq!(config.get_load_balance_hosts(), LoadBalanceHosts::Random);
    assert_eq!(config.get_options(), Some("-c statement_timeout=5s"));
    assert_eq!(config.get_hosts(), [] as [Host; 0]);
    assert_eq!(
        config.get_hostaddrs(),
        ["127.0.0.2".parse::<std::net::IpAddr>().unwrap()]
    );

    // What the URL says wins over the environment.
    let config = configured(
        "postgres://u@h/db?sslmode=disable&application_name=url-app&options=-c%20a%3Db\
         &target_session_attrs=any&channel_binding=disable",
        &[
            ("PGPASSFILE", from_env.to_str().unwrap()),
            ("PGAPPNAME", "env-app"),
            ("PGOPTIONS", "-c statement_timeout=5s"),
            ("PGTARGETSESSIONATTRS", "read-only"),
            ("PGCHANNELBINDING", "require"),
            ("PGHOSTADDR", "127.0.0.2"),
        ],
    )
    .unwrap();
    assert_eq!(config.get_password(), Some(&b"from-pgpassfile"[..]));
    assert_eq!(config.get_application_name(), Some("url-app"));
    assert_eq!(config.get_options(), Some("-c a=b"));
    assert_eq!(config.get_target_session_attrs(), TargetSessionAttrs::Any);
    assert_eq!(config.get_channel_binding(), ChannelBinding::Disable);
    assert_eq!(config.get_hosts(), [Host::Tcp("h".into())]);
    assert!(config.get_hostaddrs().is_empty());
}

#[test]
fn libpq_parameters_these_connections_cannot_honour_are_refused() {
    let refused: &[(&str, Pairs)] = &[
        ("service=locks", &[]),
        ("", &[("PGSERVICE", "locks")]),
        ("require_auth=scram-sha-256", &[]),
        ("", &[("PGREQUIREAUTH", "scram-sha-256")]),
        ("requirepeer=postgres", &[]),
        ("", &[("PGREQUIREPEER", "postgres")]),
        ("target_session_attrs=primary", &[]),
        ("", &[("PGTARGETSESSIONATTRS", "prefer-standby")]),
        ("keepalives_count=many", &[]),
        ("channel_binding=sometimes", &[]),
        ("load_balance_hosts=round-robin", &[]),
        ("replication=database", &[]),
    ];
    for (params, env) in refused {
        let url = format!("postgres://u:s3cret@h/db?sslmode=disable&{params}");
        match configured(&url, env) {
            Err(ConnectError::Settings(why)) => {
                assert!(!why.contains("s3cret"), "{params} {env:?}: {why}");
            }
            other => panic!("{params} {env:?}: {other:?}"),
        }
    }
    // Empty variables count as unset, as libpq counts them.
    assert!(configured(
        "postgres://u@h/db?sslmode=disable",
        &[("PGSERVICE", ""), ("PGREQUIREAUTH", "")]
    )
    .is_ok());
}

/// A URL with libpq's own parameters connects to the test server, which sees the application
/// name and the password they give.
#[tokio::test]
async fn a_url_with_libpq_parameters_connects() {
    let Some(db) = TestDatabase::postgres() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let passfile = password_file(dir.path(), "pgpass", "*:*:*:*:unused-by-trust");
    let url = url_with(
        &db,
        None,
        &format!(
            "passfile={}&fallback_application_name=lockd-hints-test&keepalives_count=2\
             &target_session_attrs=read-write&client_encoding=UTF8",
            passfile.display()
        ),
    );
    let (client, connection) = connect(&url, Duration::from_secs(5)).await.unwrap();
    let running = tokio::spawn(connection);
    let row = client
        .query_one("SELECT current_setting('application_name')", &[])
        .await
        .unwrap();
    assert_eq!(row.get::<_, String>(0), "lockd-hints-test");
    drop(client);
    let _ = running.await;
}
