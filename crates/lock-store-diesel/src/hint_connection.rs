//! How the two hint connections of a PostgreSQL store (the `LISTEN`er, `freed_listener.rs`, and
//! the notifier, `freed_notifier.rs`: tokio-postgres, beside the pool's libpq connections) reach
//! the database: from the same URL, with the TLS that libpq gives the pool for it.
//!
//! libpq reads `sslmode` (default `prefer`) and the files the URL names, or that it finds under
//! `~/.postgresql/`, and the `PGSSL…` environment variables. tokio-postgres knows only the modes
//! `disable`, `prefer` and `require`, checks no certificate, reads no file, and refuses a URL
//! with any other TLS parameter. So this module takes the TLS parameters out of the URL, reads
//! them as libpq does, and hands tokio-postgres an OpenSSL connector set up as libpq sets up
//! its own:
//! - `disable`: no TLS; `allow` and `prefer`: TLS when the server offers it (`allow` tries TLS
//!   first too, where libpq tries without); `require`, `verify-ca`, `verify-full`: TLS or no
//!   connection;
//! - the server's certificate is checked against the root certificates (`sslrootcert`, by
//!   default `~/.postgresql/root.crt`; `system` for the system's) whenever that file exists,
//!   and must exist for `verify-ca` and `verify-full`; `verify-full` also checks that the
//!   certificate names the host;
//! - a client certificate (`sslcert`, `sslkey`, by default `~/.postgresql/postgresql.crt` and
//!   `.key` when they exist; `sslpassword` for an encrypted key), `sslsni`, and
//!   `ssl_min_protocol_version` (by default TLS 1.2) / `ssl_max_protocol_version`.
//!
//! What libpq takes from the environment, the system or `~/.pgpass` when the URL leaves it out
//! (the user, host, port, database, options and password) is filled in the same way
//! ([`fill_defaults`]), and libpq's parameters that tokio-postgres does not know (`passfile`,
//! `fallback_application_name`, `keepalives_count`, …) are read here ([`LIBPQ_PARAMETERS`]).
//!
//! Any other TLS setting (`sslcrl`, `sslcrldir`, `sslcertmode`, `requiressl`, or `gssencmode =
//! require`) is refused, as are `service`, `require_auth` and `requirepeer`: a hint connection
//! never connects with less protection than the pool's, nor to another server.
//! A refused URL gives no hints (`ConnectError::Settings`): the process polls instead.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use openssl::pkey::PKey;
use openssl::ssl::{SslConnector, SslFiletype, SslMethod, SslVerifyMode, SslVersion};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::X509;
use postgres_openssl::{MakeTlsConnector, TlsStream};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::{Client, Connection, Socket};

use crate::database_url::{scrub_secrets, take_parameters};

/// A hint connection, over TLS or not, as its URL asks.
pub(crate) type HintConnection = Connection<Socket, TlsStream<Socket>>;

/// Why a hint connection was not made. Neither message holds a password of the URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ConnectError {
    /// The URL asks for a setting these connections cannot honour, or names a file that cannot
    /// be used: trying again changes nothing.
    Settings(String),
    /// The server could not be reached in time, refused, or the TLS handshake failed.
    Failed(String),
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Settings(why) => write!(f, "the database URL's settings: {why}"),
            Self::Failed(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ConnectError {}

/// Connects to `url` within `timeout`, as the pool's libpq connections would (see the module's
/// documentation). The caller spawns the returned connection.
///
/// # Errors
/// [`ConnectError::Settings`] when the URL asks for what these connections cannot do (or a
/// file it names cannot be read); [`ConnectError::Failed`] when the connection failed.
pub(crate) async fn connect(
    url: &str,
    timeout: Duration,
) -> Result<(Client, HintConnection), ConnectError> {
    let scrubbed = |error: &dyn fmt::Display| scrub_secrets(url, &error.to_string());
    let (mut config, settings) = configure(
        url,
        |name| std::env::var(name).ok(),
        home().as_deref(),
        Path::new(DEFAULT_SOCKET_DIR),
    )?;
    config.connect_timeout(timeout);
    config.ssl_mode(mode_for(&config, settings.mode));
    let tls = settings
        .connector()
        .map_err(|e| ConnectError::Settings(scrubbed(&e)))?;
    tokio::time::timeout(timeout, config.connect(tls))
        .await
        .map_err(|e| ConnectError::Failed(scrubbed(&e)))?
        .map_err(|e| ConnectError::Failed(scrubbed(&e)))
}

/// `url` read as libpq reads it, with `env` (the environment), `home` (the user's home
/// directory) and `socket_dir` (the default socket directory) for what it leaves out: the
/// connection's settings, and its TLS.
///
/// # Errors
/// [`ConnectError::Settings`] when the URL or the environment asks for what these connections
/// cannot do.
fn configure(
    url: &str,
    env: impl Fn(&str) -> Option<String> + Copy,
    home: Option<&Path>,
    socket_dir: &Path,
) -> Result<(tokio_postgres::Config, TlsSettings), ConnectError> {
    let scrubbed = |error: &dyn fmt::Display| scrub_secrets(url, &error.to_string());
    let (rest, taken) = take_parameters(url, |key| {
        is_tls_parameter(key) || LIBPQ_PARAMETERS.iter().any(|(known, _)| *known == key)
    });
    let (libpq, tls): (Vec<_>, Vec<_>) = taken
        .into_iter()
        .partition(|(key, _)| LIBPQ_PARAMETERS.iter().any(|(known, _)| known == key));
    let settings = TlsSettings::read(&tls, env, home).map_err(ConnectError::Settings)?;
    let mut config: tokio_postgres::Config = rest
        .parse()
        .map_err(|e| ConnectError::Settings(scrubbed(&e)))?;
    let passfile = read_libpq_parameters(&mut config, &libpq, env)
        .map_err(|e| ConnectError::Settings(scrubbed(&e)))?;
    fill_defaults(&mut config, env, passfile, home, socket_dir);
    Ok((config, settings))
}

/// The TLS mode for `config`'s hosts: `mode`, except where every host is a Unix-domain socket,
/// for which libpq ignores `sslmode` (PostgreSQL serves no TLS on a socket). A host given only
/// by its address (`hostaddr`) is reached over TCP.
fn mode_for(config: &tokio_postgres::Config, mode: SslMode) -> SslMode {
    let hosts = config.get_hosts();
    let sockets_only = config.get_hostaddrs().is_empty()
        && !hosts.is_empty()
        && hosts.iter().all(|host| !matches!(host, Host::Tcp(_)));
    if sockets_only {
        SslMode::Disable
    } else {
        mode
    }
}

/// Where libpq looks for the server's socket when the URL names no host (Debian's and most
/// distributions' build; upstream's is `/tmp`, tried when this one is missing).
const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// The URL parameters that libpq reads and tokio-postgres does not (or reads from the URL only,
/// not from the environment), each with the environment variable libpq falls back to. They are
/// taken out of the URL and read by [`read_libpq_parameters`]:
/// - read: `passfile`, `fallback_application_name`, `keepalives_count` (tokio-postgres's
///   `keepalives_retries`), `target_session_attrs` (`any`, `read-write`, `read-only`),
///   `channel_binding`, `load_balance_hosts`;
/// - without effect on these connections, so accepted and left out: `client_encoding` (both
///   ends of a hint speak UTF-8 through tokio-postgres), and GSSAPI authentication's
///   `krbsrvname`, `gsslib`, `gssdelegation` (tokio-postgres has no GSSAPI authentication: a
///   server that asks for it refuses the connection, which is retried);
/// - refused (a connection without them would differ from the pool's, or be less strict):
///   `service`, `require_auth`, `requirepeer`.
const LIBPQ_PARAMETERS: [(&str, Option<&str>); 13] = [
    ("passfile", Some("PGPASSFILE")),
    ("fallback_application_name", None),
    ("keepalives_count", None),
    ("target_session_attrs", Some("PGTARGETSESSIONATTRS")),
    ("channel_binding", Some("PGCHANNELBINDING")),
    ("load_balance_hosts", Some("PGLOADBALANCEHOSTS")),
    ("client_encoding", Some("PGCLIENTENCODING")),
    ("krbsrvname", Some("PGKRBSRVNAME")),
    ("gsslib", Some("PGGSSLIB")),
    ("gssdelegation", Some("PGGSSDELEGATION")),
    ("service", Some("PGSERVICE")),
    ("require_auth", Some("PGREQUIREAUTH")),
    ("requirepeer", Some("PGREQUIREPEER")),
];

/// Applies the [`LIBPQ_PARAMETERS`] `taken` out of the URL, or set in `env`, to `config`;
/// returns the password file named (`passfile`, else `PGPASSFILE`).
///
/// # Errors
/// A refused parameter, or a value libpq would not accept or these connections cannot honour
/// (`target_session_attrs` other than `any`, `read-write` or `read-only`).
fn read_libpq_parameters(
    config: &mut tokio_postgres::Config,
    taken: &[(String, String)],
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<PathBuf>, String> {
    use tokio_postgres::config::{ChannelBinding, LoadBalanceHosts, TargetSessionAttrs};
    // An empty value counts as none, as libpq counts it for these.
    let given = |key: &str| {
        given_or_in_env(key, taken, &LIBPQ_PARAMETERS, &env).filter(|value| !value.is_empty())
    };
    let not_supported = "is not supported by the connections that carry hints of released locks";
    if given("service").is_some() {
        return Err(format!(
            "`service` (a connection service file) {not_supported}"
        ));
    }
    for refused in ["require_auth", "requirepeer"] {
        if given(refused).is_some() {
            return Err(format!("`{refused}` {not_supported}"));
        }
    }
    if config.get_application_name().is_none() {
        let app_name = env("PGAPPNAME").filter(|name| !name.is_empty());
        if let Some(name) = app_name.or_else(|| given("fallback_application_name")) {
            config.application_name(name);
        }
    }
    if let Some(count) = given("keepalives_count") {
        let count = count
            .trim()
            .parse()
            .map_err(|_| format!("keepalives_count must be a whole number, not {count:?}"))?;
        config.keepalives_retries(count);
    }
    // libpq's `primary`, `standby` and `prefer-standby` have no equivalent here.
    let attrs = [
        ("any", TargetSessionAttrs::Any),
        ("read-write", TargetSessionAttrs::ReadWrite),
        ("read-only", TargetSessionAttrs::ReadOnly),
    ];
    if let Some(attrs) = one_of(
        "target_session_attrs",
        given("target_session_attrs"),
        &attrs,
    )? {
        config.target_session_attrs(attrs);
    }
    let bindings = [
        ("disable", ChannelBinding::Disable),
        ("prefer", ChannelBinding::Prefer),
        ("require", ChannelBinding::Require),
    ];
    if let Some(binding) = one_of("channel_binding", given("channel_binding"), &bindings)? {
        config.channel_binding(binding);
    }
    let balances = [
        ("disable", LoadBalanceHosts::Disable),
        ("random", LoadBalanceHosts::Random),
    ];
    if let Some(balance) = one_of("load_balance_hosts", given("load_balance_hosts"), &balances)? {
        config.load_balance_hosts(balance);
    }
    Ok(given("passfile").map(PathBuf::from))
}

/// The setting that `value` of parameter `key` names among `choices`, if given.
///
/// # Errors
/// A value that names none of them.
fn one_of<T: Copy>(
    key: &str,
    value: Option<String>,
    choices: &[(&str, T)],
) -> Result<Option<T>, String> {
    let Some(value) = value else {
        return Ok(None);
    };
    choices
        .iter()
        .find(|(name, _)| *name == value)
        .map(|(_, choice)| Some(*choice))
        .ok_or_else(|| {
            format!(
                "{key}={value} is not supported by the connections that carry hints of released \
                 locks"
            )
        })
}

/// The value of parameter `key`: the last one `taken` out of the URL, else that of the
/// environment variable `parameters` names for it.
fn given_or_in_env(
    key: &str,
    taken: &[(String, String)],
    parameters: &[(&str, Option<&str>)],
    env: impl Fn(&str) -> Option<String>,
) -> Option<String> {
    taken
        .iter()
        .rev()
        .find(|(taken, _)| taken == key)
        .map(|(_, value)| value.clone())
        .or_else(|| {
            parameters
                .iter()
                .find(|(known, _)| *known == key)
                .and_then(|(_, variable)| variable.and_then(&env))
        })
}

/// Fills in what libpq would take from elsewhere for what the URL leaves out, and tokio-postgres
/// does not: the user (`PGUSER`, else the operating system's user), the host (`PGHOST`, or
/// `PGHOSTADDR`, else the default socket directory), the port (`PGPORT`), the database
/// (`PGDATABASE`), the server options (`PGOPTIONS`), and the password (`PGPASSWORD`, else the
/// matching line of `passfile`, by default `~/.pgpass`).
fn fill_defaults(
    config: &mut tokio_postgres::Config,
    env: impl Fn(&str) -> Option<String>,
    passfile: Option<PathBuf>,
    home: Option<&Path>,
    socket_dir: &Path,
) {
    if config.get_user().is_none() {
        if let Some(user) = env("PGUSER")
            .or_else(|| env("USER"))
            .or_else(|| env("LOGNAME"))
        {
            config.user(user);
        }
    }
    if config.get_hosts().is_empty() && config.get_hostaddrs().is_empty() {
        let addresses: Option<Vec<std::net::IpAddr>> = env("PGHOSTADDR")
            .filter(|addresses| !addresses.is_empty())
            .and_then(|addresses| {
                addresses
                    .split(',')
                    .map(|address| address.trim().parse().ok())
                    .collect()
            });
        match env("PGHOST").filter(|hosts| !hosts.is_empty()) {
            Some(hosts) => {
                for host in hosts.split(',') {
                    config.host(host);
                }
            }
            None if addresses.is_some() => {}
            None if socket_dir.exists() => {
                config.host_path(socket_dir);
            }
            None => {
                config.host_path("/tmp");
            }
        }
        for address in addresses.unwrap_or_default() {
            config.hostaddr(address);
        }
    }
    if config.get_ports().is_empty() {
        let ports = env("PGPORT").unwrap_or_default();
        for port in ports.split(',').filter_map(|port| port.trim().parse().ok()) {
            config.port(port);
        }
    }
    if config.get_dbname().is_none() {
        if let Some(dbname) = env("PGDATABASE") {
            config.dbname(dbname);
        }
    }
    if config.get_options().is_none() {
        if let Some(options) = env("PGOPTIONS").filter(|options| !options.is_empty()) {
            config.options(options);
        }
    }
    if config.get_password().is_none() {
        let password = env("PGPASSWORD").or_else(|| {
            let file = passfile.or_else(|| home.map(|home| home.join(".pgpass")))?;
            if !private(&file) {
                // libpq ignores a password file that others may read, and so do these.
                return None;
            }
            password_from_file(config, &std::fs::read_to_string(file).ok()?)
        });
        if let Some(password) = password {
            config.password(password);
        }
    }
}

/// The password of the first line of a `.pgpass` file (`host:port:database:user:password`,
/// `*` matching anything, `\` escaping `:` and `\`) that matches `config`'s first host, as
/// libpq matches it (a socket directory as `localhost`, no port as 5432, no database as the
/// user's).
fn password_from_file(config: &tokio_postgres::Config, text: &str) -> Option<String> {
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(host)) => host.clone(),
        Some(_) | None => "localhost".to_owned(),
    };
    let port = config
        .get_ports()
        .first()
        .copied()
        .unwrap_or(5432)
        .to_string();
    let user = config.get_user()?;
    let dbname = config.get_dbname().unwrap_or(user);
    let wanted = [host.as_str(), port.as_str(), dbname, user];
    text.lines()
        .filter(|line| !line.trim_start().starts_with('#'))
        .find_map(|line| {
            let fields = pgpass_fields(line);
            if fields.len() != 5 {
                return None;
            }
            let matches = fields[..4]
                .iter()
                .zip(wanted)
                .all(|(field, wanted)| field == "*" || field == wanted);
            matches.then(|| fields[4].clone())
        })
}

/// Whether `file` is a regular file that neither its group nor others may read or write.
fn private(file: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(file)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o077 == 0)
}

/// The fields of one `.pgpass` line, unescaped.
fn pgpass_fields(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(escaped) = chars.next() {
                    fields.last_mut().expect("one field").push(escaped);
                }
            }
            ':' if fields.len() < 5 => fields.push(String::new()),
            c => fields.last_mut().expect("one field").push(c),
        }
    }
    fields
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").map(PathBuf::from)
}

/// The URL parameters this module reads (or refuses): every TLS and GSS encryption setting
/// but `sslnegotiation`, which tokio-postgres reads itself.
fn is_tls_parameter(key: &str) -> bool {
    (key.starts_with("ssl") && key != "sslnegotiation")
        || matches!(key, "requiressl" | "gssencmode")
}

/// Each parameter this module honours, and the environment variable libpq reads for it when
/// the URL does not set it.
const HONOURED: [(&str, Option<&str>); 9] = [
    ("sslmode", Some("PGSSLMODE")),
    ("sslrootcert", Some("PGSSLROOTCERT")),
    ("sslcert", Some("PGSSLCERT")),
    ("sslkey", Some("PGSSLKEY")),
    ("sslpassword", None),
    ("sslsni", Some("PGSSLSNI")),
    ("ssl_min_protocol_version", Some("PGSSLMINPROTOCOLVERSION")),
    ("ssl_max_protocol_version", Some("PGSSLMAXPROTOCOLVERSION")),
    ("sslcompression", Some("PGSSLCOMPRESSION")),
];

/// Settings libpq has that these connections do not, each with the environment variable that
/// sets it.
const REFUSED_ENVIRONMENT: [(&str, &str); 3] = [
    ("sslcrl", "PGSSLCRL"),
    ("sslcrldir", "PGSSLCRLDIR"),
    ("sslcertmode", "PGSSLCERTMODE"),
];

/// Where the trusted root certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Roots {
    /// None: the server's certificate is not checked.
    Unchecked,
    /// The certificates of this file.
    File(PathBuf),
    /// The system's (`sslrootcert=system`).
    System,
}

/// The TLS that libpq would use for one URL. Its `Debug` shows no key password.
#[derive(Clone, PartialEq, Eq)]
struct TlsSettings {
    mode: SslMode,
    roots: Roots,
    /// `verify-full`: the certificate must name the host.
    check_host: bool,
    /// The client's certificate and key files.
    client: Option<(PathBuf, PathBuf)>,
    key_password: Option<String>,
    sni: bool,
    min_version: Option<SslVersion>,
    max_version: Option<SslVersion>,
}

impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("mode", &self.mode)
            .field("roots", &self.roots)
            .field("check_host", &self.check_host)
            .field("client", &self.client)
            .field("key_password", &self.key_password.as_ref().map(|_| "***"))
            .field("sni", &self.sni)
            .field("min_version", &self.min_version)
            .field("max_version", &self.max_version)
            .finish()
    }
}

impl TlsSettings {
    /// No TLS (`sslmode=disable`): libpq reads none of its files, and neither does this.
    fn without_tls() -> Self {
        Self {
            mode: SslMode::Disable,
            roots: Roots::Unchecked,
            check_host: false,
            client: None,
            key_password: None,
            sni: true,
            min_version: None,
            max_version: None,
        }
    }

    /// Reads the TLS parameters `taken` out of a URL, falling back to `env` (libpq's
    /// `PGSSL…` variables) and to the files under `home`/.postgresql, as libpq does.
    fn read(
        taken: &[(String, String)],
        env: impl Fn(&str) -> Option<String>,
        home: Option<&Path>,
    ) -> Result<Self, String> {
        if let Some((key, _)) = taken
            .iter()
            .find(|(key, _)| !HONOURED.iter().any(|(honoured, _)| honoured == key))
        {
            if key != "gssencmode" {
                return Err(format!(
                    "`{key}` is not supported by the connections that carry hints of released \
                     locks"
                ));
            }
        }
        for (key, variable) in REFUSED_ENVIRONMENT {
            if env(variable).is_some_and(|value| !value.is_empty()) {
                return Err(format!(
                    "{variable} (`{key}`) is not supported by the connections that carry hints \
                     of released locks"
                ));
            }
        }
        let given = |key: &str| given_or_in_env(key, taken, &HONOURED, &env);
        let gss = given("gssencmode").or_else(|| env("PGGSSENCMODE"));
        if gss.as_deref() == Some("require") {
            return Err(
                "`gssencmode=require`: GSSAPI encryption is not supported by the connections \
                 that carry hints of released locks"
                    .to_owned(),
            );
        }
        let sslmode = given("sslmode").unwrap_or_else(|| "prefer".to_owned());
        let (mode, verify_required, check_host) = match sslmode.as_str() {
            "disable" => (SslMode::Disable, false, false),
            "allow" | "prefer" => (SslMode::Prefer, false, false),
            "require" => (SslMode::Require, false, false),
            "verify-ca" => (SslMode::Require, true, false),
            "verify-full" => (SslMode::Require, true, true),
            other => return Err(format!("unknown sslmode {other:?}")),
        };
        if mode == SslMode::Disable {
            return Ok(Self::without_tls());
        }
        let postgresql = home.map(|home| home.join(".postgresql"));
        let default_file = |name: &str| postgresql.as_ref().map(|dir| dir.join(name));
        let roots = match given("sslrootcert") {
            Some(system) if system == "system" => Roots::System,
            Some(file) => Roots::File(PathBuf::from(file)),
            None => default_file("root.crt").map_or(Roots::Unchecked, Roots::File),
        };
        // libpq checks the server whenever the root file exists, and insists on it for the
        // verify modes.
        if verify_required && roots == Roots::Unchecked {
            return Err(format!(
                "no root certificate file (sslmode={sslmode} needs one: set sslrootcert, or \
                 sslrootcert=system)"
            ));
        }
        let roots = match roots {
            Roots::File(file) if !file.exists() => {
                if verify_required {
                    return Err(format!(
                        "root certificate file {:?} does not exist (sslmode={sslmode} needs \
                         it; or use sslrootcert=system)",
                        file.display()
                    ));
                }
                Roots::Unchecked
            }
            roots => roots,
        };
        let client = match (given("sslcert"), given("sslkey")) {
            (Some(cert), key) => {
                let cert = PathBuf::from(cert);
                if !cert.exists() {
                    return Err(format!(
                        "client certificate file {:?} does not exist",
                        cert.display()
                    ));
                }
                let key = key
                    .map(PathBuf::from)
                    .or_else(|| default_file("postgresql.key"))
                    .ok_or("sslcert without sslkey, and no home directory to find one in")?;
                Some((cert, key))
            }
            (None, key) => default_file("postgresql.crt")
                .filter(|cert| cert.exists())
                .and_then(|cert| {
                    key.map(PathBuf::from)
                        .or_else(|| default_file("postgresql.key"))
                        .map(|key| (cert, key))
                }),
        };
        let sni = match given("sslsni").as_deref() {
            None | Some("1") => true,
            Some("0") => false,
            Some(other) => return Err(format!("sslsni must be 0 or 1, not {other:?}")),
        };
        let min_version = match given("ssl_min_protocol_version") {
            None => Some(SslVersion::TLS1_2),
            Some(version) => protocol_version(&version)?,
        };
        let max_version = given("ssl_max_protocol_version")
            .map(|version| protocol_version(&version))
            .transpose()?
            .flatten();
        Ok(Self {
            mode,
            roots,
            check_host,
            client,
            key_password: given("sslpassword"),
            sni,
            min_version,
            max_version,
        })
    }

    /// The connector for these settings: files are read now.
    fn connector(&self) -> Result<MakeTlsConnector, Box<dyn std::error::Error>> {
        let mut builder = SslConnector::builder(SslMethod::tls_client())?;
        match &self.roots {
            Roots::Unchecked => builder.set_verify(SslVerifyMode::NONE),
            Roots::File(file) => {
                // Only the file's certificates, as libpq trusts: not the system's too, which
                // `SslConnector::builder` has loaded.
                let unusable = |e: &dyn fmt::Display| {
                    format!("root certificate file {:?}: {e}", file.display())
                };
                let pem = std::fs::read(file).map_err(|e| unusable(&e))?;
                let mut roots = X509StoreBuilder::new()?;
                for root in X509::stack_from_pem(&pem).map_err(|e| unusable(&e))? {
                    roots.add_cert(root)?;
                }
                builder.set_cert_store(roots.build());
                builder.set_verify(SslVerifyMode::PEER);
            }
            Roots::System => {
                builder.set_default_verify_paths()?;
                builder.set_verify(SslVerifyMode::PEER);
            }
        }
        if let Some((cert, key)) = &self.client {
            builder
                .set_certificate_chain_file(cert)
                .map_err(|e| format!("client certificate file {:?}: {e}", cert.display()))?;
            let unreadable =
                |e: &dyn fmt::Display| format!("client key file {:?}: {e}", key.display());
            match &self.key_password {
                Some(password) => {
                    let pem = std::fs::read(key).map_err(|e| unreadable(&e))?;
                    let pkey = PKey::private_key_from_pem_passphrase(&pem, password.as_bytes())
                        .map_err(|e| unreadable(&e))?;
                    builder.set_private_key(&pkey)?;
                }
                None => builder
                    .set_private_key_file(key, SslFiletype::PEM)
                    .map_err(|e| unreadable(&e))?,
            }
            builder.check_private_key()?;
        }
        builder.set_min_proto_version(self.min_version)?;
        builder.set_max_proto_version(self.max_version)?;
        let mut connector = MakeTlsConnector::new(builder.build());
        let (check_host, sni) = (self.check_host, self.sni);
        connector.set_callback(move |config, _host| {
            config.set_verify_hostname(check_host);
            config.set_use_server_name_indication(sni);
            Ok(())
        });
        Ok(connector)
    }
}

/// A libpq protocol version name (`TLSv1` to `TLSv1.3`; empty for no bound).
fn protocol_version(name: &str) -> Result<Option<SslVersion>, String> {
    match name {
        "" => Ok(None),
        "TLSv1" => Ok(Some(SslVersion::TLS1)),
        "TLSv1.1" => Ok(Some(SslVersion::TLS1_1)),
        "TLSv1.2" => Ok(Some(SslVersion::TLS1_2)),
        "TLSv1.3" => Ok(Some(SslVersion::TLS1_3)),
        other => Err(format!("unknown TLS protocol version {other:?}")),
    }
}

#[cfg(test)]
mod tests;
