//! PostgreSQL's tables on a file system that fills up under a running lockd (lockd's tables in
//! a tablespace on a small tmpfs; PostgreSQL's catalogs and WAL elsewhere): a write that needs a
//! new page answers 503 `/problems/storage-full` with `Retry-After` and changes nothing, reads
//! go on, writes succeed again as soon as space is freed, and nothing acknowledged is lost.
//! Needs root (the mount), as `full_disk`; CI fails where it cannot mount.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::load_cycles::grant_when_back;
use super::small_disk::SmallDisk;
use crate::pg_cluster::{run, sql, Cluster};
use crate::server::TestServer;

#[test]
fn postgres_tables_on_a_full_disk_answer_storage_full_keep_reads_and_recover() {
    let Some(disk) = SmallDisk::mount(4) else {
        return;
    };
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let location = disk.dir.join("tablespace");
    std::fs::create_dir(&location).expect("the tablespace's directory");
    own_by_postgres(&location);
    sql(
        &cluster,
        &format!("CREATE TABLESPACE small LOCATION '{}'", location.display()),
    );
    // lockd's tables (made by its migrations) go there; the catalogs stay where they are.
    sql(
        &cluster,
        "ALTER DATABASE locks SET default_tablespace = small",
    );
    let server = TestServer::start_on(&cluster.url(), &[]);
    let held: Vec<Value> = (0..5)
        .map(|i| {
            server
                .acquire(&format!("held:{i}"), "owner", 300)
                .granted()
                .clone()
        })
        .collect();

    let filler = disk.fill();
    // New leases fit in the pages' free room until one needs a new page.
    let mut acknowledged = Vec::new();
    let refused = loop {
        assert!(acknowledged.len() < 50_000, "the disk never filled");
        let resource = format!("fill:{}", acknowledged.len());
        let reply = server.acquire(&resource, "filler", 300);
        if reply.status == 503 {
            break (resource, reply);
        }
        acknowledged.push(reply.granted().clone());
    };
    let (refused_resource, refused) = refused;
    refused.assert_problem(503, "storage-full");
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    // Reads need no room.
    for lock in held.iter().chain(acknowledged.iter().take(20)) {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&server.status(resource).body, lock, "{resource}");
    }
    server
        .status(&refused_resource)
        .assert_problem(404, "not-found");
    assert_eq!(server.send("GET", "/locks?limit=5", None).status, 200);
    assert_eq!(server.send("GET", "/readyz", None).status, 200);

    drop(filler);
    let freed = Instant::now();
    let granted = grant_when_back(
        &server,
        &refused_resource,
        "filler",
        Some("storage-full"),
        Duration::from_secs(2),
    );
    eprintln!(
        "postgres full disk: {} leases granted before a write needed a new page; writes succeed \
         again {:?} after space was freed",
        acknowledged.len(),
        freed.elapsed()
    );
    let last = acknowledged
        .last()
        .map_or(0, |l| l["fencing_token"].as_i64().expect("token"));
    assert!(granted.token() > last, "{} after {last}", granted.token());
    // Everything acknowledged is still held.
    for lock in held.iter().chain(&acknowledged) {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&server.status(resource).body, lock, "{resource}");
    }
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn own_by_postgres(path: &Path) {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        run(Command::new("chown").arg("postgres").arg(path));
    }
}

/// PostgreSQL's WAL on a file system that fills up (`initdb -X` on a 48 MB tmpfs, 1 MB
/// segments): PostgreSQL writes into the segments it has until it needs a new one, then the
/// backend that cannot create it PANICs and the server restarts. lockd answers that request 503
/// `service-unavailable` (it may have happened), never 500, loses nothing acknowledged, and
/// serves again once there is room.
#[test]
fn postgres_wal_on_a_full_disk_answers_503_and_loses_nothing_acknowledged() {
    let Some(disk) = SmallDisk::mount(48) else {
        return;
    };
    let wal = disk.dir.join("wal");
    std::fs::create_dir(&wal).expect("the WAL directory");
    own_by_postgres(&wal);
    let wal_text = wal.display().to_string();
    let Some(cluster) = Cluster::start_initdb(&["-X", &wal_text, "--wal-segsize=1"]) else {
        return;
    };
    sql(&cluster, "ALTER SYSTEM SET min_wal_size = '4MB'");
    sql(&cluster, "ALTER SYSTEM SET max_wal_size = '16MB'");
    cluster.restart_fast();
    let server = TestServer::start_on(&cluster.url(), &[]);
    let held: Vec<Value> = (0..5)
        .map(|i| {
            server
                .acquire(&format!("held:{i}"), "owner", 600)
                .granted()
                .clone()
        })
        .collect();

    let filler = disk.fill();
    let started = Instant::now();
    let mut last_token = held
        .iter()
        .map(|l| l["fencing_token"].as_i64().expect("token"))
        .max();
    let mut cycles = 0;
    let refused = loop {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "PostgreSQL kept writing its WAL on a full disk for 60 s ({cycles} cycles)"
        );
        let reply = server.acquire("cycled", "cycler", 30);
        if reply.status != 200 {
            break reply;
        }
        let token = reply.token();
        assert!(Some(token) > last_token, "{token} after {last_token:?}");
        last_token = Some(token);
        cycles += 1;
        let released = server.release("cycled", "cycler");
        if released.status != 204 {
            break released;
        }
    };
    // PostgreSQL could not write its log: the operation may or may not have happened (its commit
    // may have been flushed before the write that failed), so not `storage-full`.
    refused.assert_problem(503, "service-unavailable");
    assert_eq!(refused.header("retry-after"), Some("1"), "{refused:?}");
    let refused_after = started.elapsed();
    let status = cluster.pg_ctl_status();
    eprintln!(
        "postgres WAL disk full: {cycles} acquire/release cycles, then {} ({:?} after the fill); \
         PostgreSQL afterwards: {status}",
        refused.body["type"], refused_after
    );

    drop(filler);
    let freed = Instant::now();
    if !status.contains("server is running") {
        cluster.pg_ctl(&["start", "-w"]);
    }
    let back = grant_when_back(&server, "after", "owner", None, Duration::from_secs(30));
    eprintln!(
        "postgres WAL disk full: first grant {:?} after space was freed",
        freed.elapsed()
    );
    assert!(Some(back.token()) > last_token);
    for lock in &held {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&server.status(resource).body, lock, "{resource}");
    }
    let log = cluster.log();
    let panics: Vec<&str> = log.lines().filter(|l| l.contains("PANIC")).collect();
    let refusals = log.lines().filter(|l| l.contains("No space left")).count();
    eprintln!(
        "postgres WAL disk full: the server logged {refusals} 'No space left' lines and {} \
         PANICs: {:?}",
        panics.len(),
        panics.first()
    );
    let stderr = server.drain_stderr().join("\n");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
