//! Upgrading a SQLite file made before tenants existed: its locks move to the default tenant,
//! unchanged, and fencing tokens keep increasing past them.

use lock_domain::testing::calls::LeaseCalls;
use std::sync::Arc;

use diesel::connection::SimpleConnection;
use diesel::{Connection, SqliteConnection};
use lock_domain::{AcquireOutcome, Owner, ResourceName, SystemClock, Tenant, Ttl};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig};

const BEFORE_TENANTS: [(&str, &str); 2] = [
    (
        "20261129000001",
        include_str!(
            "../../../migrations/sqlite/2026-11-29-000001_create_distributed_locks/up.sql"
        ),
    ),
    (
        "20261129000002",
        include_str!("../../../migrations/sqlite/2026-11-29-000002_index_expiry/up.sql"),
    ),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locks_of_a_file_from_before_tenants_survive_the_upgrade() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.db");
    {
        let mut old = SqliteConnection::establish(&path.to_string_lossy()).unwrap();
        old.batch_execute(
            "CREATE TABLE __diesel_schema_migrations (
                 version VARCHAR(50) PRIMARY KEY NOT NULL,
                 run_on TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP)",
        )
        .unwrap();
        for (version, sql) in BEFORE_TENANTS {
            old.batch_execute(sql).unwrap();
            old.batch_execute(&format!(
                "INSERT INTO __diesel_schema_migrations (version) VALUES ('{version}')"
            ))
            .unwrap();
        }
        let far = chrono::Utc::now().timestamp_millis() + 3_600_000;
        old.batch_execute(&format!(
            "INSERT INTO distributed_locks VALUES ('payment:42', 'worker-7', 1, {far}, 41);
             UPDATE fencing_counter SET last_token = 41;"
        ))
        .unwrap();
    }

    let config = StoreConfig::new(DatabaseUrl::Sqlite(path));
    let repo = tokio::task::spawn_blocking(move || {
        DieselLockRepository::open(&config, Arc::new(SystemClock))
    })
    .await
    .unwrap()
    .expect("the old file is migrated");
    let name = |raw: &str| ResourceName::parse(raw).unwrap();
    let held = repo
        .status(Tenant::default_tenant(), name("payment:42"))
        .await
        .unwrap()
        .expect("the old lock is now the default tenant's");
    assert_eq!(held.owner.as_str(), "worker-7");
    assert_eq!(held.fencing_token.value(), 41);
    let stolen = repo
        .acquire(
            Tenant::default_tenant(),
            name("payment:42"),
            Owner::parse("thief").unwrap(),
            Ttl::parse(30, 86_400).unwrap(),
            None,
        )
        .await
        .unwrap();
    assert_eq!(stolen, AcquireOutcome::Held);
    match repo
        .acquire(
            Tenant::default_tenant(),
            name("new"),
            Owner::parse("w").unwrap(),
            Ttl::parse(30, 86_400).unwrap(),
            None,
        )
        .await
        .unwrap()
    {
        AcquireOutcome::Granted(lock) => assert!(lock.fencing_token.value() > 41),
        AcquireOutcome::Held => panic!("a free resource was held"),
    }
}
