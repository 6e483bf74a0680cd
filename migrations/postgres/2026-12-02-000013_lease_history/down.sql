DROP TRIGGER lease_history ON shared_holders;
DROP TRIGGER lease_history ON semaphore_holders;
DROP TRIGGER lease_history ON distributed_locks;
DROP FUNCTION lockd_history_of_lease_row();
DROP FUNCTION lockd_ending();
DROP FUNCTION lockd_write_now();
DROP FUNCTION lockd_record_lease(TEXT, TEXT, TEXT, TEXT, BIGINT, TEXT, BOOLEAN);
DROP TABLE history_pruned;
DROP TABLE lease_history;
