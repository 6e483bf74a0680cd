ALTER TABLE distributed_locks DROP COLUMN expiry_recorded;
