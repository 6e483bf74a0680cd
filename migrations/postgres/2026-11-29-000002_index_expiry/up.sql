-- The sweeper deletes expired rows in batches, oldest expiry first.
CREATE INDEX distributed_locks_expires_at ON distributed_locks (expires_at_ms);
