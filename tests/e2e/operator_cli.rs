//! The operator commands (`lockd locks`, `status`, `release`, `sessions`, `history`, `watch`,
//! `fence`) against a real server, on both backends: their tables and `--json` documents read
//! back and checked against what the server holds, and their exit statuses (0 found or done, 1
//! not found, 64 bad input, 69 unreachable, 77 a refused key); a force-release kept in the
//! history with its reason; and `watch` printing events as they happen until SIGTERM, or
//! until the server goes away.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use lock_store_diesel::testing::TestDatabase;
use serde_json::{json, Value};

use crate::processes::{exit_within, finish};
use crate::server::{lockd_binary, TestServer};
use crate::tenants::{as_key, ADMIN, PLAIN};

on_both_backends!(
    locks_lists_every_page_as_the_server_holds_them,
    status_shows_a_lock_a_semaphore_and_an_election,
    sessions_lists_the_live_sessions,
    release_forces_with_an_admin_key_and_history_keeps_the_reason,
    fence_says_valid_or_stale_by_its_status,
    watch_prints_events_as_they_happen_until_sigterm,
    watch_ends_69_when_the_server_goes_away,
);

/// What a finished command left: its status, stdout and stderr.
#[derive(Debug)]
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> Value {
        assert_eq!(self.code, 0, "{self:?}");
        serde_json::from_str(&self.stdout).unwrap_or_else(|_| panic!("one JSON document: {self:?}"))
    }

    /// The table printed: each row's cells by column title.
    fn table(&self) -> Vec<Vec<(String, String)>> {
        parse_table(&self.stdout)
    }
}

/// Runs `lockd ARGS` (with no key or server from the environment, and `env` added) and waits
/// for it, at most 60 s.
fn lockd_with(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let child = Command::new(lockd_binary())
        .args(args)
        .env_remove("LOCKD_API_KEY")
        .env_remove("LOCKD_SERVER")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn lockd");
    let output = wait_output(child, Duration::from_secs(60));
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Runs `lockd SUBCOMMAND ARGS --server SERVER`.
fn lockd(server: &TestServer, args: &[&str]) -> Ran {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--server", &server.base]);
    lockd_with(&all, &[])
}

/// [`lockd`] with `--api-key KEY`.
fn lockd_as(server: &TestServer, key: &str, args: &[&str]) -> Ran {
    let mut all = args.to_vec();
    all.extend_from_slice(&["--api-key", key]);
    lockd(server, &all)
}

fn wait_output(mut child: Child, within: Duration) -> std::process::Output {
    // Read both pipes while waiting, so a long output cannot block the child.
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let out = std::thread::spawn(move || read_all(stdout));
    let err = std::thread::spawn(move || read_all(stderr));
    let status = exit_within(&mut child, within);
    std::process::Output {
        status,
        stdout: out.join().expect("stdout reader"),
        stderr: err.join().expect("stderr reader"),
    }
}

fn read_all(mut pipe: impl std::io::Read) -> Vec<u8> {
    let mut bytes = Vec::new();
    let _ = pipe.read_to_end(&mut bytes);
    bytes
}

/// Splits a table into rows of (title, cell): columns are where the header's titles start.
fn parse_table(text: &str) -> Vec<Vec<(String, String)>> {
    let mut lines = text.lines();
    let header = lines.next().expect("a header line");
    let mut starts = Vec::new();
    let mut previous = ' ';
    for (index, c) in header.char_indices() {
        if c != ' ' && previous == ' ' {
            starts.push(index);
        }
        previous = c;
    }
    let titles: Vec<String> = header.split_whitespace().map(str::to_owned).collect();
    assert_eq!(titles.len(), starts.len(), "one word a title: {header}");
    lines
        .map(|line| {
            titles
                .iter()
                .enumerate()
                .map(|(column, title)| {
                    let start = starts[column];
                    let end = starts.get(column + 1).copied().unwrap_or(line.len());
                    let cell = line.get(start..end.min(line.len())).unwrap_or("");
                    (title.clone(), cell.trim().to_owned())
                })
                .collect()
        })
        .collect()
}

fn column<'a>(row: &'a [(String, String)], title: &str) -> &'a str {
    row.iter()
        .find(|(t, _)| t == title)
        .map(|(_, cell)| cell.as_str())
        .unwrap_or_else(|| panic!("no column {title} in {row:?}"))
}

fn post(server: &TestServer, path: &str, body: Value) -> Value {
    let reply = server.send("POST", path, Some(&body));
    assert!(reply.status == 200 || reply.status == 201, "{reply:?}");
    reply.body
}

fn get(server: &TestServer, path: &str) -> Value {
    let reply = server.send("GET", path, None);
    assert_eq!(reply.status, 200, "{reply:?}");
    reply.body
}

/// A document without its `ttl_remaining_ms` (which moves between two reads).
fn without_ttl(mut document: Value) -> Value {
    if let Some(object) = document.as_object_mut() {
        object.remove("ttl_remaining_ms");
    }
    document
}

/// A listing's documents, each [`without_ttl`].
fn without_ttls(list: &Value) -> Vec<Value> {
    list.as_array()
        .expect("a list")
        .iter()
        .cloned()
        .map(without_ttl)
        .collect()
}

/// A port on which nothing listens: bound, then freed.
fn closed_port() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    format!("http://127.0.0.1:{port}")
}

fn locks_lists_every_page_as_the_server_holds_them(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    // 1,024 locks: more than the 1,000 of a page, so the listing follows a cursor.
    for batch in 0..16 {
        let locks: Vec<Value> = (0..64)
            .map(|i| json!({"resource": format!("bulk:{:04}", batch * 64 + i)}))
            .collect();
        let reply = post(
            &server,
            "/locks",
            json!({"owner": "bulk-owner", "ttl_seconds": 120, "locks": locks}),
        );
        assert_eq!(reply["acquired"], true, "{reply}");
    }
    post(
        &server,
        "/locks/payment:42",
        json!({"owner": "worker-7", "ttl_seconds": 60}),
    );
    for reader in ["r1", "r2"] {
        post(
            &server,
            "/locks/report",
            json!({"owner": reader, "ttl_seconds": 60, "mode": "shared"}),
        );
    }

    let all = lockd(&server, &["locks", "--json"]).json();
    let listed = all["locks"].as_array().expect("locks");
    assert_eq!(listed.len(), 1_024 + 3);
    let bulk = lockd(&server, &["locks", "--prefix", "bulk:", "--json"]).json();
    let bulk = bulk["locks"].as_array().expect("locks");
    assert_eq!(bulk.len(), 1_024, "both pages");
    let names: Vec<&str> = bulk
        .iter()
        .map(|l| l["resource"].as_str().unwrap())
        .collect();
    let expected: Vec<String> = (0..1_024).map(|i| format!("bulk:{i:04}")).collect();
    assert_eq!(names, expected, "every lock once, in order");
    // The same documents as the server's own listing.
    let page = get(&server, "/locks?prefix=payment&limit=10");
    let mine = lockd(&server, &["locks", "--prefix", "payment", "--json"]).json();
    assert_eq!(without_ttls(&mine["locks"]), without_ttls(&page["locks"]));
    let limited = lockd(&server, &["locks", "--limit", "3", "--json"]).json();
    assert_eq!(limited["locks"].as_array().unwrap().len(), 3);

    // The table: a row a holder, with the server's owners and tokens.
    let table = lockd(&server, &["locks", "--prefix", "re"]);
    assert_eq!(table.code, 0, "{table:?}");
    let rows = table.table();
    let held = get(&server, "/locks/report");
    assert_eq!(rows.len(), 2, "{table:?}");
    for (row, holder) in rows.iter().zip(held["holders"].as_array().unwrap()) {
        assert_eq!(column(row, "RESOURCE"), "report");
        assert_eq!(column(row, "MODE"), "shared");
        assert_eq!(column(row, "OWNER"), holder["owner"].as_str().unwrap());
        assert_eq!(column(row, "TOKEN"), holder["fencing_token"].to_string());
        assert!(column(row, "EXPIRES").starts_with("expires in "), "{row:?}");
        assert_eq!(column(row, "WAITING"), "0");
    }

    // Nothing under a prefix: 1, said on stdout; --json still one document.
    let none = lockd(&server, &["locks", "--prefix", "zz"]);
    assert_eq!(none.code, 1, "{none:?}");
    assert_eq!(none.stdout, "no live locks starting with \"zz\"\n");
    let none = lockd(&server, &["locks", "--prefix", "zz", "--json"]);
    assert_eq!((none.code, none.stdout.as_str()), (1, "{\"locks\":[]}\n"));
    // A prefix the server refuses: 64 and its detail; a bad flag: 64.
    let refused = lockd(&server, &["locks", "--prefix", "a\u{1}b"]);
    assert_eq!(refused.code, 64, "{refused:?}");
    assert!(
        refused.stderr.starts_with("lockd locks: invalid input"),
        "{refused:?}"
    );
    assert_eq!(refused.stderr.lines().count(), 1, "{refused:?}");
    assert_eq!(lockd(&server, &["locks", "--limit", "0"]).code, 64);
    assert_eq!(lockd(&server, &["locks", "--bogus"]).code, 64);
}

fn status_shows_a_lock_a_semaphore_and_an_election(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    post(
        &server,
        "/locks/payment:42",
        json!({"owner": "worker-7", "ttl_seconds": 60, "value": {"job": 7}}),
    );
    post(
        &server,
        "/semaphores/export",
        json!({"owner": "exporter", "ttl_seconds": 60, "limit": 4, "permits": 3}),
    );
    post(
        &server,
        "/elections/scheduler/campaign",
        json!({"candidate": "node-a", "ttl_seconds": 60, "value": "10.0.0.7:8080"}),
    );

    // --json: the server's own document.
    for (args, path) in [
        (vec!["status", "payment:42"], "/locks/payment:42"),
        (
            vec!["status", "--semaphore", "export"],
            "/semaphores/export",
        ),
        (
            vec!["status", "--election", "scheduler"],
            "/elections/scheduler",
        ),
    ] {
        let mut args = args.clone();
        args.push("--json");
        assert_eq!(lockd(&server, &args).json(), get(&server, path), "{args:?}");
    }

    let lock = get(&server, "/locks/payment:42");
    let table = lockd(&server, &["status", "payment:42"]);
    assert_eq!(table.code, 0, "{table:?}");
    let rows = table.table();
    assert_eq!(rows.len(), 1, "{table:?}");
    assert_eq!(column(&rows[0], "OWNER"), "worker-7");
    assert_eq!(column(&rows[0], "MODE"), "exclusive");
    assert_eq!(column(&rows[0], "TOKEN"), lock["fencing_token"].to_string());
    assert_eq!(column(&rows[0], "VALUE"), r#"{"job":7}"#);
    assert!(column(&rows[0], "ACQUIRED").ends_with(" ago"), "{rows:?}");
    assert!(column(&rows[0], "EXPIRES").starts_with("in "), "{rows:?}");

    let semaphore = lockd(&server, &["status", "--semaphore", "export"]);
    assert_eq!(semaphore.code, 0, "{semaphore:?}");
    let (first, rest) = semaphore.stdout.split_once('\n').unwrap();
    assert_eq!(
        first,
        "semaphore export: 3 of 4 permits in use, 1 available, 0 waiting"
    );
    let rows = parse_table(rest);
    assert_eq!(column(&rows[0], "OWNER"), "exporter");
    assert_eq!(column(&rows[0], "PERMITS"), "3");

    let leader = get(&server, "/elections/scheduler");
    let rows = lockd(&server, &["status", "--election", "scheduler"]).table();
    assert_eq!(column(&rows[0], "LEADER"), "node-a");
    assert_eq!(column(&rows[0], "TERM"), leader["term"].to_string());
    assert_eq!(column(&rows[0], "VALUE"), "10.0.0.7:8080");

    // Not held: 1, with the server's detail on one line.
    let none = lockd(&server, &["status", "free"]);
    assert_eq!(none.code, 1, "{none:?}");
    assert_eq!(none.stdout, "");
    assert_eq!(
        none.stderr,
        "lockd status: no live lock on resource \"free\"\n"
    );
    assert_eq!(lockd(&server, &["status", "--election", "free"]).code, 1);
    assert_eq!(lockd(&server, &["status", "--semaphore", "free"]).code, 1);
    // A name the server refuses, two kinds at once, no name: 64.
    assert_eq!(lockd(&server, &["status", "a\u{1}b"]).code, 64);
    assert_eq!(
        lockd(&server, &["status", "--semaphore", "--election", "x"]).code,
        64
    );
    assert_eq!(lockd(&server, &["status"]).code, 64);
}

fn sessions_lists_the_live_sessions(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let none = lockd(&server, &["sessions"]);
    assert_eq!((none.code, none.stdout.as_str()), (1, "no live sessions\n"));
    let open = |owner: &str| {
        post(
            &server,
            "/sessions",
            json!({"owner": owner, "ttl_seconds": 60}),
        )["session"]["id"]
            .as_str()
            .expect("an id")
            .to_owned()
    };
    let (a, b) = (open("worker-a"), open("worker-b"));
    post(&server, "/locks/held", json!({"session": a}));

    let listed = lockd(&server, &["sessions", "--json"]).json();
    let served = get(&server, "/sessions");
    assert_eq!(
        without_ttls(&listed["sessions"]),
        without_ttls(&served["sessions"])
    );
    assert_eq!(listed["sessions"].as_array().unwrap().len(), 2);

    let table = lockd(&server, &["sessions"]);
    assert_eq!(table.code, 0, "{table:?}");
    let rows = table.table();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let (owner, holds) = if column(row, "ID") == a {
            ("worker-a", "1")
        } else {
            assert_eq!(column(row, "ID"), b);
            ("worker-b", "0")
        };
        assert_eq!(column(row, "OWNER"), owner);
        assert_eq!(column(row, "HOLDS"), holds);
        assert_eq!(column(row, "TTL"), "60s");
        assert!(column(row, "EXPIRES").starts_with("expires in "), "{row:?}");
        assert!(column(row, "CREATED").ends_with(" ago"), "{row:?}");
    }
    let one = lockd(&server, &["sessions", "--prefix", &a, "--json"]).json();
    assert_eq!(one["sessions"][0]["id"], json!(a));
    assert_eq!(one["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(
        lockd(&server, &["sessions", "--limit", "1", "--json"]).json()["sessions"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(lockd(&server, &["sessions", "--prefix", "a\u{1}"]).code, 64);
}

fn release_forces_with_an_admin_key_and_history_keeps_the_reason(db: TestDatabase) {
    let (server, _keys) =
        crate::tenants::start_with_keys(&db, &[("acme", ADMIN, true), ("acme", PLAIN, false)]);
    let take = |resource: &str, owner: &str| {
        let body = json!({"owner": owner, "ttl_seconds": 60});
        let reply = as_key(
            &server,
            PLAIN,
            "POST",
            &format!("/locks/{resource}"),
            Some(&body),
        );
        reply.token()
    };
    let token = take("pay", "worker-9");

    // No --force: 64 and why, nothing sent.
    let plain = lockd_as(&server, ADMIN, &["release", "pay"]);
    assert_eq!(plain.code, 64, "{plain:?}");
    assert!(
        plain.stderr.contains("a plain release needs the owner"),
        "{plain:?}"
    );
    assert_eq!(plain.stderr.lines().count(), 1, "{plain:?}");
    assert_eq!(
        lockd_as(&server, ADMIN, &["release", "pay", "--force"]).code,
        64
    );
    assert_eq!(
        lockd_as(&server, ADMIN, &["release", "pay", "--reason", "x"]).code,
        64
    );
    // A plain key, a wrong key, no key: 77, and the lock still held.
    let why = [
        "release",
        "pay",
        "--force",
        "--reason",
        "worker-9 is wedged (INC-1)",
    ];
    let refused = lockd_as(&server, PLAIN, &why);
    assert_eq!(refused.code, 77, "{refused:?}");
    assert!(refused.stderr.starts_with("lockd release: "), "{refused:?}");
    assert_eq!(lockd_as(&server, "no-such-key-0123456789", &why).code, 77);
    assert_eq!(lockd(&server, &why).code, 77);
    let held = as_key(&server, PLAIN, "GET", "/locks/pay", None);
    assert_eq!(held.body["owner"], "worker-9", "{held:?}");
    // A reason the server refuses: 64.
    assert_eq!(
        lockd_as(
            &server,
            ADMIN,
            &["release", "pay", "--force", "--reason", ""]
        )
        .code,
        64
    );

    let done = lockd_as(&server, ADMIN, &why);
    assert_eq!(done.code, 0, "{done:?}");
    let rows = done.table();
    assert_eq!(column(&rows[0], "FORCE-RELEASED"), "worker-9");
    assert_eq!(column(&rows[0], "TOKEN"), token.to_string());
    as_key(&server, PLAIN, "GET", "/locks/pay", None).assert_problem(404, "not-found");
    // Nothing held any more: 1.
    let again = lockd_as(&server, ADMIN, &why);
    assert_eq!(again.code, 1, "{again:?}");
    // --json: the server's answer, through LOCKD_API_KEY.
    let next = take("pay", "worker-1");
    let json_release = lockd_with(
        &[
            "release",
            "pay",
            "--force",
            "--reason",
            "second",
            "--json",
            "--server",
            &server.base,
        ],
        &[("LOCKD_API_KEY", ADMIN)],
    );
    assert_eq!(
        json_release.json(),
        json!({"force_released": [{"owner": "worker-1", "fencing_token": next}]})
    );

    // The history keeps both, newest first, with their reasons.
    let served = as_key(&server, ADMIN, "GET", "/locks/pay/history", None);
    let history = lockd_as(&server, ADMIN, &["history", "pay", "--json"]).json();
    assert_eq!(history["records"], served.body["records"]);
    let records = history["records"].as_array().unwrap();
    assert_eq!(records[0]["event"], "force-released");
    assert_eq!(records[0]["reason"], "second");
    let table = lockd_as(&server, ADMIN, &["history", "pay"]);
    assert_eq!(table.code, 0, "{table:?}");
    let rows = table.table();
    assert_eq!(rows.len(), records.len());
    let forced: Vec<&Vec<(String, String)>> = rows
        .iter()
        .filter(|row| column(row, "EVENT") == "force-released")
        .collect();
    assert_eq!(forced.len(), 2, "{table:?}");
    assert_eq!(column(forced[1], "OWNER"), "worker-9");
    assert_eq!(column(forced[1], "TOKEN"), token.to_string());
    assert_eq!(column(forced[1], "REASON"), "worker-9 is wedged (INC-1)");
    assert!(column(forced[1], "WHEN").ends_with(" ago"), "{table:?}");
    // --limit, --since (a span and a time), and nothing found.
    let newest = lockd_as(
        &server,
        ADMIN,
        &["history", "pay", "--limit", "1", "--json"],
    )
    .json();
    assert_eq!(newest["records"], json!([records[0]]));
    let recent = lockd_as(
        &server,
        ADMIN,
        &["history", "pay", "--since", "1h", "--json"],
    )
    .json();
    assert_eq!(recent["records"], history["records"]);
    let future = lockd_as(
        &server,
        ADMIN,
        &["history", "pay", "--since", "2999-01-01T00:00:00Z"],
    );
    assert_eq!(future.code, 1, "{future:?}");
    assert_eq!(lockd_as(&server, ADMIN, &["history", "never-held"]).code, 1);
    assert_eq!(
        lockd_as(&server, ADMIN, &["history", "pay", "--since", "yesterday"]).code,
        64
    );
    assert_eq!(lockd(&server, &["history", "pay"]).code, 77);

    // A semaphore's grants and an election's leader, the same way.
    let grant = json!({"owner": "s1", "ttl_seconds": 60, "limit": 2});
    let reply = as_key(&server, PLAIN, "POST", "/semaphores/pool", Some(&grant));
    assert_eq!(reply.body["acquired"], true, "{reply:?}");
    let campaign = json!({"candidate": "c1", "ttl_seconds": 60});
    let reply = as_key(
        &server,
        PLAIN,
        "POST",
        "/elections/lead/campaign",
        Some(&campaign),
    );
    assert_eq!(reply.body["elected"], true, "{reply:?}");
    for (kind, name, holder) in [("--semaphore", "pool", "s1"), ("--election", "lead", "c1")] {
        let reason = format!("{holder} is stuck");
        let done = lockd_as(
            &server,
            ADMIN,
            &["release", kind, name, "--force", "--reason", &reason],
        );
        assert_eq!(done.code, 0, "{done:?}");
        assert_eq!(column(&done.table()[0], "FORCE-RELEASED"), holder);
        let gone = lockd_as(&server, ADMIN, &["status", kind, name]);
        assert_eq!(gone.code, 1, "{gone:?}");
        let history = lockd_as(&server, ADMIN, &["history", kind, name, "--json"]).json();
        assert_eq!(
            history["records"][0]["event"], "force-released",
            "{history}"
        );
        assert_eq!(history["records"][0]["reason"], json!(reason), "{history}");
        assert_eq!(history["records"][0]["owner"], holder, "{history}");
    }

    // Every other command with no key: 77.
    for args in [
        vec!["locks"],
        vec!["status", "pay"],
        vec!["sessions"],
        vec!["fence", "pay", "1"],
        vec!["watch"],
    ] {
        let ran = lockd(&server, &args);
        assert_eq!(ran.code, 77, "{args:?}: {ran:?}");
        assert_eq!(ran.stderr.lines().count(), 1, "{ran:?}");
    }
    // And with the key through the environment: 0.
    take("kept", "worker-2");
    let listed = lockd_with(
        &["locks", "--json", "--server", &server.base],
        &[("LOCKD_API_KEY", PLAIN)],
    );
    assert_eq!(listed.json()["locks"][0]["owner"], "worker-2", "{listed:?}");
}

fn fence_says_valid_or_stale_by_its_status(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let token = server.acquire("fenced", "writer", 60).token();
    let valid = lockd(&server, &["fence", "fenced", &token.to_string()]);
    assert_eq!(valid.code, 0, "{valid:?}");
    assert!(
        valid
            .stdout
            .starts_with(&format!("valid: token {token} is writer's")),
        "{valid:?}"
    );
    let verdict = lockd(&server, &["fence", "fenced", &token.to_string(), "--json"]).json();
    assert_eq!(
        verdict,
        get(&server, &format!("/locks/fenced/fence?token={token}"))
    );
    assert_eq!(verdict["valid"], true);

    // A newer holder: the old token is stale (1), and says which is current.
    assert_eq!(server.release("fenced", "writer").status, 204);
    let newer = server.acquire("fenced", "next", 60).token();
    let stale = lockd(&server, &["fence", "fenced", &token.to_string()]);
    assert_eq!(stale.code, 1, "{stale:?}");
    assert!(
        stale.stdout.contains(&format!("the newest is {newer}")),
        "{stale:?}"
    );
    let stale = lockd(&server, &["fence", "fenced", &token.to_string(), "--json"]);
    assert_eq!(stale.code, 1);
    assert_eq!(
        serde_json::from_str::<Value>(&stale.stdout).unwrap(),
        json!({"valid": false, "current": newer})
    );
    // No holder at all: 1.
    let free = lockd(&server, &["fence", "free", "1"]);
    assert_eq!(free.code, 1, "{free:?}");
    assert!(free.stdout.contains("no one holds it"), "{free:?}");

    // A semaphore's grant, an election's term.
    let permit = post(
        &server,
        "/semaphores/pool",
        json!({"owner": "w", "ttl_seconds": 60, "limit": 2}),
    )["permit"]["fencing_token"]
        .as_i64()
        .unwrap();
    assert_eq!(
        lockd(
            &server,
            &["fence", "--semaphore", "pool", &permit.to_string()]
        )
        .code,
        0
    );
    assert_eq!(
        lockd(
            &server,
            &["fence", "--semaphore", "pool", &(permit + 1).to_string()]
        )
        .code,
        1
    );
    let term = post(
        &server,
        "/elections/primary/campaign",
        json!({"candidate": "node-a", "ttl_seconds": 60}),
    )["leader"]["term"]
        .as_i64()
        .unwrap();
    let leading = lockd(
        &server,
        &["fence", "--election", "primary", &term.to_string()],
    );
    assert_eq!(leading.code, 0, "{leading:?}");
    assert!(leading.stdout.contains("node-a's"), "{leading:?}");
    assert_eq!(
        lockd(&server, &["fence", "--election", "primary", "1"]).code,
        1
    );

    // Tokens the server refuses, and ones that are no number: 64.
    for token in ["0", "-3", "abc", "99999999999999999999"] {
        let ran = lockd(&server, &["fence", "fenced", token]);
        assert_eq!(ran.code, 64, "{token}: {ran:?}");
    }
    assert_eq!(lockd(&server, &["fence", "fenced"]).code, 64);
}

/// A `lockd watch` running, its stdout read line by line.
struct Watch {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Watch {
    /// Starts `lockd watch ARGS` and waits (generously) until it follows the stream.
    fn start(server: &TestServer, args: &[&str]) -> Self {
        let mut child = Command::new(lockd_binary())
            .arg("watch")
            .args(args)
            .args(["--server", &server.base])
            .env_remove("LOCKD_API_KEY")
            .env_remove("LOCKD_SERVER")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn lockd watch");
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut first = String::new();
        stderr.read_line(&mut first).expect("a line on stderr");
        assert!(
            first.starts_with("lockd watch: following the events of "),
            "{first:?}"
        );
        // The rest of stderr is read by `finish`.
        child.stderr = None;
        std::thread::spawn(move || {
            let mut rest = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut rest);
        });
        let stdout = child.stdout.take().expect("stdout");
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self { child, lines }
    }

    /// The next line printed, within 20 s.
    fn line(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(20))
            .expect("an event line within 20 s")
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
    }
}

fn watch_prints_events_as_they_happen_until_sigterm(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let json_watch = Watch::start(&server, &["--prefix", "w:", "--json"]);
    let table_watch = Watch::start(&server, &["--prefix", "w:"]);

    // Each event is printed as it happens, before the next is made.
    let token = server.acquire("w:1", "worker-7", 60).token();
    let granted: Value = serde_json::from_str(&json_watch.line()).expect("JSON");
    assert_eq!(granted["event"], "granted");
    assert_eq!(granted["name"], "w:1");
    assert_eq!(granted["owner"], "worker-7");
    assert_eq!(granted["fencing_token"], token);
    server.acquire("other", "x", 60);
    assert_eq!(server.release("w:1", "worker-7").status, 204);
    let released: Value = serde_json::from_str(&json_watch.line()).expect("JSON");
    assert_eq!(released["event"], "released", "not the other name's");
    // The same records as the server's history.
    let history = get(&server, "/history?prefix=w:");
    let mut records = history["records"].as_array().unwrap().clone();
    records.reverse();
    assert_eq!(vec![granted, released], records);

    // The table's lines: when, kind, event, name, owner, token.
    for (line, record) in [table_watch.line(), table_watch.line()]
        .iter()
        .zip(&records)
    {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(fields[0], record["at"].as_str().unwrap(), "{line}");
        assert_eq!(fields[1], "lock", "{line}");
        assert_eq!(fields[2], record["event"].as_str().unwrap(), "{line}");
        assert_eq!(fields[3], "w:1", "{line}");
        assert_eq!(fields[4], "worker-7", "{line}");
        assert_eq!(fields[5], format!("token={token}"), "{line}");
    }

    // SIGTERM and SIGINT: 0, promptly.
    json_watch.signal("TERM");
    let (code, stderr) = finish(json_watch.child, Duration::from_secs(10));
    assert_eq!(code, 0, "{stderr}");
    table_watch.signal("INT");
    let (code, stderr) = finish(table_watch.child, Duration::from_secs(10));
    assert_eq!(code, 0, "{stderr}");

    // A prefix the server refuses: 64; no server: 69.
    let refused = lockd(&server, &["watch", "--prefix", "a\u{1}"]);
    assert_eq!(refused.code, 64, "{refused:?}");
    let gone = lockd_with(&["watch", "--server", &closed_port()], &[]);
    assert_eq!(gone.code, 69, "{gone:?}");
}

fn watch_ends_69_when_the_server_goes_away(db: TestDatabase) {
    let server = TestServer::start(&db, &[]);
    let watch = Watch::start(&server, &[]);
    server.acquire("before", "worker-7", 60);
    assert!(watch.line().contains("granted"));
    server.kill9();
    let (code, stderr) = finish(watch.child, Duration::from_secs(30));
    assert_eq!(code, 69, "{stderr}");
}

/// With no server on the port: 69 from every command, with one line saying so; a bad flag of
/// any of them: 64 (clap's own 2 elsewhere).
#[test]
fn every_command_exits_69_unreachable_and_64_on_a_bad_flag() {
    let server = closed_port();
    for args in [
        vec!["locks"],
        vec!["status", "x"],
        vec!["release", "x", "--force", "--reason", "r"],
        vec!["sessions"],
        vec!["history", "x"],
        vec!["watch"],
        vec!["fence", "x", "1"],
    ] {
        let mut all = args.clone();
        all.extend_from_slice(&["--server", &server]);
        let ran = lockd_with(&all, &[]);
        assert_eq!(ran.code, 69, "{args:?}: {ran:?}");
        assert_eq!(ran.stderr.lines().count(), 1, "{ran:?}");
        assert!(ran.stderr.contains(&server), "{ran:?}");
        let mut bad = args.clone();
        bad.push("--bogus");
        assert_eq!(lockd_with(&bad, &[]).code, 64, "{bad:?}");
    }
    // Through LOCKD_SERVER.
    let ran = lockd_with(&["locks"], &[("LOCKD_SERVER", &server)]);
    assert_eq!(ran.code, 69, "{ran:?}");
    // Other commands keep clap's status for a bad flag.
    assert_eq!(lockd_with(&["run", "--bogus"], &[]).code, 2);
    // --help documents the statuses.
    let help = lockd_with(&["fence", "--help"], &[]);
    assert_eq!(help.code, 0);
    assert!(help.stdout.contains("1 stale"), "{help:?}");
}
