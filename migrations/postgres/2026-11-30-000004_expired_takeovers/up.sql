-- How many grants took a resource over from another owner whose lease had expired. A release
-- keeps its row (see the store's postgres.rs) but marks it ended by release with
-- acquired_at_ms = expires_at_ms, which a lease that runs out never has (its TTL is at least
-- one second). A sequence, not a counter row: it takes no row lock, so concurrent takeovers
-- never wait on each other or deadlock; a takeover rolled back after counting stays counted.
CREATE SEQUENCE expired_takeovers;

CREATE FUNCTION count_expired_takeover() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM nextval('expired_takeovers');
    RETURN NULL;
END
$$;

CREATE TRIGGER distributed_locks_count_expired_takeover AFTER UPDATE ON distributed_locks
FOR EACH ROW
WHEN (OLD.owner IS DISTINCT FROM NEW.owner AND OLD.acquired_at_ms < OLD.expires_at_ms)
EXECUTE FUNCTION count_expired_takeover();
