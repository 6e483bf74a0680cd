-- An expiry an observer saw is recorded in the history at once (the store's
-- `history/expiry.rs`), by ending the run-out lease in place (acquired_at_ms = expires_at_ms) as
-- a release does. `expiry_recorded` tells such a row from a released one: a takeover of it is
-- still a takeover of a lease that ran out, and counted. A new grant clears it.
ALTER TABLE distributed_locks ADD COLUMN expiry_recorded BOOLEAN NOT NULL DEFAULT FALSE;

DROP TRIGGER distributed_locks_count_expired_takeover ON distributed_locks;
CREATE TRIGGER distributed_locks_count_expired_takeover AFTER UPDATE ON distributed_locks
FOR EACH ROW
WHEN (OLD.owner IS DISTINCT FROM NEW.owner
      AND (OLD.acquired_at_ms < OLD.expires_at_ms OR OLD.expiry_recorded))
EXECUTE FUNCTION count_expired_takeover();
