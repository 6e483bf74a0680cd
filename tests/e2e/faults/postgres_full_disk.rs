//! PostgreSQL's tables on a file system that fills up under a running lockd (lockd's tables in
//! a tablespace on a small tmpfs; PostgreSQL's catalogs and WAL elsewhere): a write that needs a
//! new page answers 503 `/problems/storage-full` with `Retry-After` and changes nothing, reads
//! go on, writes succeed again as soon as space is freed, and nothing acknowledged is lost.
//! Needs root (the mount), as `full_disk`; CI fails where it cannot mount.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

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
    let granted = loop {
        let reply = server.acquire(&refused_resource, "filler", 300);
        if reply.status == 200 {
            break reply;
        }
        reply.assert_problem(503, "storage-full");
        assert!(
            freed.elapsed() < Duration::from_secs(2),
            "lockd does not write again after space was freed: {reply:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
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
