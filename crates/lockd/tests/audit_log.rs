//! The audit log through lockd's real log formats (issue #11, fault 8): a resource, owner or
//! tenant can never forge a field. Each audit line of the text format parses as logfmt with
//! exactly one of each key and values that round-trip; in JSON each value is the plain string.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use actix_web::test::{call_service, init_service, TestRequest};
use actix_web::App;
use lock_domain::SystemClock;
use lock_http_actix::{hash_key, ApiKeys, ApiSettings};
use lock_service::WaiterLimits;
use lock_store_diesel::testing::TestDatabase;
use lock_store_diesel::{DieselLockRepository, StoreConfig};
use lockd::application::StoreWiring;
use lockd::cli::LogFormat;
use lockd::telemetry::LogQueue;
use serde_json::{json, Value};
use tracing_subscriber::EnvFilter;

const RESOURCE: &str = "x fencing_token=1 event=released owner=victim";
const OWNER: &str = "mallory tenant=globex";
/// A tenant named in the API keys file: the operator's, but quoted all the same.
const TENANT: &str = "acme";
const KEY: &str = "acme-key-000000001";

/// A writer the subscriber appends to.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn audit_lines(&self) -> Vec<String> {
        String::from_utf8(self.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .filter(|line| line.contains("lockd::audit"))
            .map(str::to_owned)
            .collect()
    }
}

/// Grant, deny, renew, forbid and release on `RESOURCE`, with the log going to `format` through
/// lockd's log queue and writer thread, as `lockd serve` writes it.
async fn audited_requests(format: LogFormat) -> Vec<String> {
    let captured = Captured::default();
    let dropped = Arc::new(AtomicU64::new(0));
    let (queue, log_writer) = LogQueue::start(captured.clone(), 1 << 20, Arc::clone(&dropped))
        .expect("the log writer starts");
    let subscriber =
        lockd::telemetry::subscriber(EnvFilter::new("lockd::audit=info"), format, queue, false);
    let _default = tracing::subscriber::set_default(subscriber);

    let db = TestDatabase::sqlite();
    let config = StoreConfig::new(db.url().clone());
    let store = tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(SystemClock))
    })
    .await
    .unwrap()
    .unwrap();
    let store = Arc::new(store);
    let keys = ApiKeys::parse(&format!("{TENANT} {}\n", hash_key(KEY))).unwrap();
    let settings = ApiSettings {
        api_keys: Some(Arc::new(keys)),
        ..ApiSettings::default()
    };
    let app = init_service(
        App::new().configure(
            lockd::application::compose(StoreWiring::of(store), settings, WaiterLimits::default())
                .configure(),
        ),
    )
    .await;
    let path = format!(
        "/locks/{}",
        percent_encoding::utf8_percent_encode(RESOURCE, percent_encoding::NON_ALPHANUMERIC)
    );
    let request = |method: TestRequest, path: &str, body: Value| {
        method
            .uri(path)
            .insert_header(("authorization", format!("Bearer {KEY}")))
            .insert_header(("content-type", "application/json"))
            .set_payload(body.to_string())
            .to_request()
    };
    for (method, path, body, status) in [
        (
            TestRequest::post(),
            path.clone(),
            json!({"owner": OWNER, "ttl_seconds": 60}),
            200,
        ),
        (
            TestRequest::post(),
            path.clone(),
            json!({"owner": "other", "ttl_seconds": 60}),
            200,
        ),
        (
            TestRequest::post(),
            format!("{path}/renew"),
            json!({"owner": OWNER, "ttl_seconds": 60}),
            200,
        ),
        (
            TestRequest::delete(),
            path.clone(),
            json!({"owner": "other"}),
            403,
        ),
        (
            TestRequest::delete(),
            path.clone(),
            json!({"owner": OWNER}),
            204,
        ),
    ] {
        let response = call_service(&app, request(method, &path, body)).await;
        assert_eq!(response.status().as_u16(), status);
    }
    drop(app);
    // What the store does on its own (a grant nobody heard of, undone) goes through the same
    // adapter the composition root gives the store, into the same log.
    lock_domain::StoreEvents::unheard_grant(
        &lock_telemetry::MetricsAndAudit::new(Arc::new(lock_telemetry::Metrics::default())),
        &lock_domain::UnheardGrant {
            tenant: lock_domain::Tenant::parse(TENANT).unwrap(),
            kind: lock_domain::UnheardKind::Lock,
            name: lock_domain::ResourceName::parse(RESOURCE).unwrap(),
            owner: lock_domain::Owner::parse(OWNER).unwrap(),
            fencing_token: lock_domain::FencingToken::new(7).unwrap(),
            undone: true,
        },
    );
    drop(db);
    // Writes out what is still queued.
    drop(log_writer);
    assert_eq!(dropped.load(Ordering::Relaxed), 0);
    captured.audit_lines()
}

/// A strict logfmt parser: `key=value` pairs separated by one space; a value is bare (printable
/// ASCII without `=`, `"` or `\`) or quoted with `\"`, `\\`, `\n`, `\r`, `\t` and `\u00XX`
/// escapes. Anything else is an error.
fn logfmt(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut pairs = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut key = String::new();
        while let Some(&c) = chars.peek() {
            if c == '=' {
                break;
            }
            if !(c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!("{c:?} in a key, after {pairs:?}"));
            }
            key.push(c);
            chars.next();
        }
        if key.is_empty() || chars.next() != Some('=') {
            return Err(format!("a key without a value after {pairs:?}"));
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next().ok_or("an unterminated quote")? {
                    '"' => break,
                    '\\' => match chars.next().ok_or("a lone backslash")? {
                        '"' => value.push('"'),
                        '\\' => value.push('\\'),
                        'n' => value.push('\n'),
                        'r' => value.push('\r'),
                        't' => value.push('\t'),
                        'u' => {
                            let hex: String = (0..4).filter_map(|_| chars.next()).collect();
                            let code = u32::from_str_radix(&hex, 16).map_err(|e| e.to_string())?;
                            value.push(char::from_u32(code).ok_or("a bad \\u escape")?);
                        }
                        other => return Err(format!("the escape \\{other}")),
                    },
                    c => value.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == ' ' {
                    break;
                }
                if !c.is_ascii_graphic() || c == '=' || c == '"' || c == '\\' {
                    return Err(format!("{c:?} in the bare value of {key}"));
                }
                value.push(c);
                chars.next();
            }
        }
        pairs.push((key, value));
        match chars.next() {
            None => return Ok(pairs),
            Some(' ') => {}
            Some(c) => {
                return Err(format!(
                    "{c:?} after the value of {}",
                    pairs.last().unwrap().0
                ))
            }
        }
    }
}

#[actix_web::test]
async fn text_audit_lines_parse_as_logfmt_with_one_of_each_key() {
    let lines = audited_requests(LogFormat::Text).await;
    let events: Vec<&str> = vec![
        "granted",
        "denied",
        "renewed",
        "forbidden",
        "released",
        "grant_undone",
    ];
    assert_eq!(lines.len(), events.len(), "{lines:#?}");
    for (line, event) in lines.iter().zip(events) {
        // The fields follow the target: `<time>  INFO lockd::audit: key=value ...`.
        let fields = line
            .split_once("lockd::audit: ")
            .unwrap_or_else(|| panic!("no target in {line}"))
            .1;
        let pairs = logfmt(fields).unwrap_or_else(|e| panic!("{e}: {line}"));
        let mut keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        let before = keys.len();
        keys.dedup();
        assert_eq!(keys.len(), before, "a key appears twice: {line}");
        let value = |key: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("no {key} in {line}"))
        };
        assert_eq!(value("event"), event, "{line}");
        assert_eq!(value("resource"), RESOURCE, "{line}");
        assert_eq!(value("tenant"), TENANT, "{line}");
        let expected_owner = if event == "denied" || event == "forbidden" {
            "other"
        } else {
            OWNER
        };
        assert_eq!(value("owner"), expected_owner, "{line}");
    }
}

#[actix_web::test]
async fn json_audit_lines_carry_the_values_as_plain_strings() {
    let lines = audited_requests(LogFormat::Json).await;
    assert_eq!(lines.len(), 6, "{lines:#?}");
    for line in &lines {
        let event: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let fields = &event["fields"];
        assert_eq!(fields["resource"], RESOURCE, "{line}");
        assert_eq!(fields["tenant"], TENANT, "{line}");
        assert!(
            fields["owner"] == OWNER || fields["owner"] == "other",
            "{line}"
        );
    }
    let granted: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(granted["fields"]["event"], "granted");
    assert!(granted["fields"]["fencing_token"].is_u64(), "{}", lines[0]);
    assert_eq!(granted["fields"]["mode"], "exclusive", "{}", lines[0]);
}
