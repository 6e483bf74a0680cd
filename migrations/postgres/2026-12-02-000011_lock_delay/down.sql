ALTER TABLE distributed_locks DROP COLUMN lock_delay_ms;
