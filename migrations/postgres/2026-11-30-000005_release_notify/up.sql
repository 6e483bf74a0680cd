-- Tells listening lockd processes that a lock may have become free: a release ends a lease early
-- (expires_at_ms goes down) and so does a renew with a shorter TTL. Grants and longer renews
-- (expires_at_ms goes up) send nothing. The payload is `tenant` LF `resource` (tenant names
-- cannot contain a line feed). NOTIFY is sent at commit, so a listener never hears of a release
-- that did not happen.
CREATE FUNCTION lockd_notify_freed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lockd_freed', NEW.tenant || E'\n' || NEW.resource);
    RETURN NULL;
END;
$$;

CREATE TRIGGER distributed_locks_notify_freed
    AFTER UPDATE OF expires_at_ms ON distributed_locks
    FOR EACH ROW
    WHEN (NEW.expires_at_ms < OLD.expires_at_ms)
    EXECUTE FUNCTION lockd_notify_freed();
