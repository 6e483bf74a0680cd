ALTER TABLE distributed_locks RESET (fillfactor);
CREATE INDEX distributed_locks_expires_at ON distributed_locks (expires_at_ms);
