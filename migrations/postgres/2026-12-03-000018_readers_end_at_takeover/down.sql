DROP TRIGGER readers_end_at_takeover ON distributed_locks;
DROP FUNCTION lockd_readers_end_at_takeover();
