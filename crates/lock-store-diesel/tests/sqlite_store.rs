//! SQLite-specific behaviour of the store: opening, refusing and the schema it leaves behind.

use std::sync::Arc;

use lock_domain::{AcquireOutcome, Owner, ResourceName, SystemClock, Tenant, Ttl};
use lock_store_diesel::{DatabaseUrl, DieselLockRepository, StoreConfig, StoreError};

#[test]
fn a_missing_directory_is_refused_rather_than_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no-such-dir").join("locks.db");
    let config = StoreConfig::new(DatabaseUrl::Sqlite(path.clone()));
    let error = DieselLockRepository::open(&config, Arc::new(SystemClock)).unwrap_err();
    assert!(
        matches!(error, StoreError::MissingDirectory { .. }),
        "{error}"
    );
    assert!(!error.is_transient());
    assert!(!path.exists());
    assert!(!path.parent().unwrap().exists());
}

#[test]
fn a_new_file_is_created_in_wal_mode_and_reopened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("locks.db");
    let config = StoreConfig::new(DatabaseUrl::Sqlite(path.clone()));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let repo = DieselLockRepository::open(&config, Arc::new(SystemClock)).unwrap();
    let outcome = runtime
        .block_on(lock_domain::testing::calls::LeaseCalls::acquire(
            &repo,
            Tenant::default_tenant(),
            ResourceName::parse("r").unwrap(),
            Owner::parse("o").unwrap(),
            Ttl::parse(60, 86_400).unwrap(),
            None,
        ))
        .unwrap();
    assert!(matches!(outcome, AcquireOutcome::Granted(_)));
    drop(repo);
    assert!(path.exists());
    // The journal mode is stored in the file: a WAL file's header has version 2 at offsets 18/19.
    let header = std::fs::read(&path).unwrap();
    assert_eq!((header[18], header[19]), (2, 2), "file is in WAL mode");
    // Reopening runs no migration twice and keeps the lock.
    let repo = DieselLockRepository::open(&config, Arc::new(SystemClock)).unwrap();
    let held = runtime
        .block_on(lock_domain::testing::calls::LeaseCalls::status(
            &repo,
            Tenant::default_tenant(),
            ResourceName::parse("r").unwrap(),
        ))
        .unwrap();
    assert!(held.is_some());
}
