DROP TRIGGER distributed_locks_count_expired_takeover ON distributed_locks;
CREATE TRIGGER distributed_locks_count_expired_takeover AFTER UPDATE ON distributed_locks
FOR EACH ROW
WHEN (OLD.owner IS DISTINCT FROM NEW.owner AND OLD.acquired_at_ms < OLD.expires_at_ms)
EXECUTE FUNCTION count_expired_takeover();

ALTER TABLE distributed_locks DROP COLUMN expiry_recorded;
