//! The table's own checks: what `--quick` and a full run measure, and that every workload fits
//! its system.

use super::*;

fn plan(quick_only: bool) -> Vec<(String, String)> {
    TABLE
        .iter()
        .filter(|row| row.in_quick || !quick_only)
        .flat_map(|row| {
            row.workloads
                .iter()
                .filter(|w| w.in_quick() || !quick_only)
                .map(|w| (row.name.to_owned(), w.label()))
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(s, w)| ((*s).to_owned(), (*w).to_owned()))
        .collect()
}

/// `--quick`: W1 and W2 for lockd on both backends, Redis and etcd, after the HTTP ceiling's W1.
#[test]
fn quick_runs_w1_and_w2_of_lockd_redis_and_etcd() {
    assert_eq!(
        plan(true),
        pairs(&[
            (HTTP_CEILING, "W1"),
            ("lockd (SQLite)", "W1"),
            ("lockd (SQLite)", "W2"),
            ("lockd (PostgreSQL)", "W1"),
            ("lockd (PostgreSQL)", "W2"),
            ("Redis (no persistence)", "W1"),
            ("Redis (no persistence)", "W2"),
            ("etcd 3.4", "W1"),
            ("etcd 3.4", "W2"),
        ])
    );
}

/// A full run: every system on every workload it can serve, each pair once, in the order the
/// report shows them.
#[test]
fn a_full_run_measures_every_pair_once_in_report_order() {
    let (sqlite, postgres) = ("lockd (SQLite)", "lockd (PostgreSQL)");
    let (redis, redis_aof) = ("Redis (no persistence)", "Redis (appendfsync always)");
    assert_eq!(
        plan(false),
        pairs(&[
            (HTTP_CEILING, "W1"),
            (sqlite, "W1"),
            (sqlite, "W2"),
            (sqlite, "W4"),
            (sqlite, "W6"),
            (sqlite, "W7"),
            ("lockd (SQLite, audit log on)", "W1"),
            (sqlite, "W5 (same instance)"),
            (sqlite, "W5 (other instance)"),
            (
                "raw SQLite, a commit per statement (synchronous=FULL)",
                "W1"
            ),
            (
                "raw SQLite, a commit per statement (synchronous=NORMAL)",
                "W1"
            ),
            (postgres, "W1"),
            (postgres, "W2"),
            (postgres, "W4"),
            (postgres, "W6"),
            (postgres, "W7"),
            (postgres, "W5 (same instance)"),
            (postgres, "W5 (other instance)"),
            (
                "raw PostgreSQL, a commit per statement (tokio-postgres)",
                "W1"
            ),
            (
                "raw PostgreSQL, a commit per statement (tokio-postgres)",
                "W6"
            ),
            (
                "raw PostgreSQL, a commit per statement (tokio-postgres)",
                "W7"
            ),
            (sqlite, "W3 (1k live)"),
            (sqlite, "W3 (1M live)"),
            (postgres, "W3 (1k live)"),
            (postgres, "W3 (1M live)"),
            (sqlite, "W8"),
            (sqlite, "W1S"),
            (postgres, "W8"),
            (postgres, "W1S"),
            (redis, "W1"),
            (redis, "W2"),
            (redis, "W4"),
            (redis, "W6"),
            (redis, "W7"),
            (redis_aof, "W1"),
            (redis_aof, "W2"),
            (redis_aof, "W4"),
            (redis_aof, "W6"),
            (redis_aof, "W7"),
            ("etcd 3.4", "W1"),
            ("etcd 3.4", "W2"),
        ])
    );
}

/// Each workload runs only on a system that can serve it.
#[test]
fn workloads_fit_their_systems() {
    for row in TABLE {
        for &workload in row.workloads {
            let fits = match (workload, row.system) {
                (Workload::W5 { .. }, system) => matches!(system, System::LockdPair { .. }),
                (_, System::LockdPair { .. }) => false,
                (Workload::W3 { live }, System::Lockd { live_locks, .. }) => live == live_locks,
                (Workload::W3 { .. }, _) => false,
                (
                    Workload::W8 | Workload::W1S,
                    System::Lockd {
                        audit_log,
                        live_locks,
                        ..
                    },
                ) => !audit_log && live_locks == 0,
                (Workload::W8 | Workload::W1S, _) => false,
                (_, System::Lockd { live_locks, .. }) => live_locks == 0,
                (Workload::W6 | Workload::W7, system) => !matches!(
                    system,
                    System::HttpCeiling | System::Etcd | System::RawSqlite { .. }
                ),
                (Workload::W4, system) => !matches!(
                    system,
                    System::HttpCeiling
                        | System::Etcd
                        | System::RawSqlite { .. }
                        | System::RawPostgres
                ),
                _ => true,
            };
            assert!(fits, "{} cannot run {workload:?}", row.name);
        }
    }
}
