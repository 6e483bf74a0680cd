//! PostgreSQL restarted (`pg_ctl restart -m fast`) under load, with two lockd instances on it:
//! every answer is a 2xx, a 409 of the workload or a 503 with `Retry-After`, never a 500; grants
//! succeed again within 2 s of PostgreSQL accepting connections; every lease acknowledged
//! before the restart is still held, with its token; and the `LISTEN` connection comes back: a
//! release through one instance wakes a waiter on the other at once, not at its 5 s safety look.

use std::time::Duration;

use super::load_cycles::{
    a_release_wakes_a_waiter_on_the_other, first_grant_after, two_instances_holding_four,
    unexpected, Load,
};
use crate::pg_cluster::Cluster;

/// Grants must succeed again this soon after PostgreSQL accepts connections.
const RECOVERY_WITHIN: Duration = Duration::from_secs(2);
/// Load threads per instance.
const CLIENTS: usize = 3;

#[test]
fn a_postgres_restart_under_load_breaks_no_promise_and_recovers_within_2_s() {
    let Some(cluster) = Cluster::start() else {
        return;
    };
    let (servers, held) = two_instances_holding_four(&cluster.url());
    let load = Load::start((0..CLIENTS * 2).map(|n| servers[n % 2].client()).collect());
    std::thread::sleep(Duration::from_millis(500));

    let accepting = cluster.restart_fast();
    std::thread::sleep(RECOVERY_WITHIN + Duration::from_millis(500));
    let answers = load.stop();
    let bad = unexpected(&answers);
    assert!(bad.is_empty(), "answers that are not 2xx or 503: {bad:?}");
    // The first grant asked for after PostgreSQL accepted connections, counted to its answer.
    let first_grant = first_grant_after(&answers, accepting).expect("a grant after the restart");
    let refused = answers.iter().filter(|a| a.what.starts_with('5')).count();
    eprintln!(
        "postgres restart: first grant {first_grant:?} after PostgreSQL accepted connections; \
         {refused} answers 503 of {}",
        answers.len()
    );
    assert!(first_grant <= RECOVERY_WITHIN, "{first_grant:?}");

    for (i, lock) in held.iter().enumerate() {
        let resource = lock["resource"].as_str().expect("resource");
        assert_eq!(&servers[i % 2].status(resource).body, lock, "{resource}");
        assert_eq!(
            &servers[1 - i % 2].status(resource).body,
            lock,
            "{resource}"
        );
    }

    // The LISTEN connection is back: a waiter on one instance hears a release on the other.
    a_release_wakes_a_waiter_on_the_other(&servers, "held:0", "holder");
    for server in &servers {
        let stderr = server.drain_stderr().join("\n");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}
