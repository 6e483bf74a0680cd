//! A SQLite database on a file system that fills up under a running lockd: writes answer 503
//! `/problems/storage-full` with `Retry-After` and change nothing, reads go on, the file stays
//! sound (`PRAGMA integrity_check`), writes succeed again as soon as space is freed, and nothing
//! acknowledged is lost, across a restart too.
//!
//! The file system is a 4 MB tmpfs mounted for the test, which takes root (CAP_SYS_ADMIN).
//! Where the mount fails, the test says so loudly and does nothing, except in CI (`CI` set),
//! where it fails.

use std::path::Path;
use std::time::{Duration, Instant};

use diesel::{Connection, QueryableByName, RunQueryDsl, SqliteConnection};
use serde_json::Value;

use super::load_cycles::grant_when_back;
use super::small_disk::SmallDisk;
use crate::server::TestServer;

#[test]
fn a_full_disk_answers_storage_full_keeps_reads_and_recovers_when_space_is_freed() {
    let Some(disk) = SmallDisk::mount(4) else {
        return;
    };
    let path = disk.dir.join("lockd.db");
    let url = format!("sqlite://{}", path.display());
    let server = TestServer::start_on(&url, &[]);
    let held: Vec<Value> = (0..5)
        .map(|i| {
            server
                .acquire(&format!("held:{i}"), "owner", 300)
                .granted()
                .clone()
        })
        .collect();
    let released = server.acquire("released", "owner", 300).token();
    assert_eq!(server.release("released", "owner").status, 204);
    let ended = server.acquire("ended", "owner", 1).token();
    std::thread::sleep(Duration::from_millis(1_100));

    let filler = disk.fill();
    let writes = [
        server.acquire("new", "newcomer", 120),
        server.acquire("released", "owner", 120),
        server.renew("held:0", "owner", 600),
        server.release("held:1", "owner"),
    ];
    for reply in &writes {
        reply.assert_problem(503, "storage-full");
        assert_eq!(reply.header("retry-after"), Some("1"), "{reply:?}");
    }
    // Reads need no room.
    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&server.status(resource).body, lock);
    }
    server.status("new").assert_problem(404, "not-found");
    // A lease that ran out: the read confirms it inside the writer (docs/architecture.md,
    // "Reads and writes still committing"), which writes nothing either.
    server.status("ended").assert_problem(404, "not-found");
    assert_eq!(server.send("GET", "/locks", None).status, 200);
    assert_eq!(server.send("GET", "/history?limit=5", None).status, 200);
    assert_eq!(server.send("GET", "/healthz", None).status, 200);
    assert_eq!(integrity_check(&path), ["ok"]);

    drop(filler);
    let freed = Instant::now();
    let granted = grant_when_back(
        &server,
        "new",
        "newcomer",
        Some("storage-full"),
        Duration::from_secs(2),
    );
    eprintln!(
        "sqlite: writes succeed again {:?} after space was freed",
        freed.elapsed()
    );
    assert!(
        granted.token() > released.max(ended),
        "no token was used up by a refused write"
    );
    assert_eq!(server.release("held:1", "owner").status, 204);
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Everything acknowledged is in the file, and nothing refused is.
    let status = server.terminate(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{status:?}");
    assert_eq!(integrity_check(&path), ["ok"]);
    let restarted = TestServer::start_on(&url, &[]);
    for lock in held.iter().filter(|l| l["resource"] != "held:1") {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&restarted.status(resource).body, lock, "not renewed");
    }
    restarted.status("held:1").assert_problem(404, "not-found");
    restarted
        .status("released")
        .assert_problem(404, "not-found");
    assert_eq!(restarted.status("new").body, *granted.granted());
}

#[derive(QueryableByName)]
struct Checked {
    #[diesel(sql_type = diesel::sql_types::Text)]
    integrity_check: String,
}

fn integrity_check(path: &Path) -> Vec<String> {
    let mut conn = SqliteConnection::establish(&path.to_string_lossy()).expect("open the file");
    diesel::sql_query("PRAGMA integrity_check")
        .load::<Checked>(&mut conn)
        .expect("integrity_check")
        .into_iter()
        .map(|c| c.integrity_check)
        .collect()
}
