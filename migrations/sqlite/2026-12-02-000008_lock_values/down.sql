ALTER TABLE shared_holders DROP COLUMN value;
ALTER TABLE distributed_locks DROP COLUMN value;
