-- The leases that ran out, each noted by the write that records its end `expired` in the history
-- (by the same rule as `lockd_history_of_lease_row` and the lock triggers of migration 15, the SQL
-- copy of the domain's `name_change`), with how long it was held, until an instance takes it for
-- its `lockd_hold_seconds` metric (and deletes it): every instance takes, so each lease is counted
-- once among them. Noted whether or not the instance records history.
--
-- Row triggers whose `WHEN`, of the rows' columns alone, lets through a superset of those
-- leases, so that a grant of a free or released place, a renew and a release of a live lease call
-- nothing; the function decides by the rule. (A `WHEN` is planned again at every statement: one
-- that called `lockd_write_now()` cost 17 us a statement to inline it, four triggers per table
-- 30 us.) Not the row of a lock's shared holders (owner U+0001). A session's hold (owner U+0002) has a row that says "while the session lives":
-- it ran out with its session, at the session's end, and is noted when it is replaced (only a
-- session that ran out lets its place go), or ended or deleted by a write that says the ending
-- is `expired` (the sweeper ending the session; an admin's force-release after it ran out), while
-- the session's row says it ran out. A release under a live session reads no session.
CREATE TABLE expired_holds (
    kind    TEXT NOT NULL,
    shared  BOOLEAN NOT NULL,
    held_ms BIGINT NOT NULL
);

CREATE FUNCTION lockd_note_expired_hold() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
    election BOOLEAN := TG_TABLE_NAME = 'distributed_locks' AND right(OLD.tenant, 10) = '/elections';
    replaced BOOLEAN := TG_OP = 'UPDATE'
                        AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token);
    ended_ms BIGINT;
BEGIN
    IF ascii(OLD.owner) = 1 OR OLD.acquired_at_ms = OLD.expires_at_ms THEN
        RETURN NULL;
    ELSIF ascii(OLD.owner) = 2 THEN
        IF NOT replaced AND current_setting('lockd.ending', true) IS DISTINCT FROM 'expired' THEN
            RETURN NULL;
        END IF;
        SELECT s.expires_at_ms INTO ended_ms
        FROM sessions AS s
        WHERE s.tenant = CASE WHEN election THEN left(OLD.tenant, -10) ELSE OLD.tenant END
          AND s.id = substr(OLD.owner, 2, 22) AND s.expires_at_ms <= lockd_write_now();
    ELSIF replaced OR OLD.expires_at_ms <= lockd_write_now() THEN
        ended_ms := OLD.expires_at_ms;
    END IF;
    IF ended_ms > OLD.acquired_at_ms THEN
        INSERT INTO expired_holds (kind, shared, held_ms)
        VALUES (CASE WHEN TG_TABLE_NAME = 'semaphore_holders' THEN 'semaphore'
                     WHEN election THEN 'election' ELSE 'lock' END,
                TG_TABLE_NAME = 'shared_holders', ended_ms - OLD.acquired_at_ms);
    END IF;
    RETURN NULL;
END $$;

-- The same two triggers on each table of leases. An update lets through a lease replaced, or
-- ended in place at or after its end (the write's clock is the new end: a release writes it, an
-- observer's record keeps the old) or with the ending said `expired`; a delete, a lease run out
-- by the write's clock (`lockd_write_now()`'s expression, written out) or with that ending said.
DO $$
DECLARE
    leases TEXT;
BEGIN
    FOREACH leases IN ARRAY ARRAY['distributed_locks', 'semaphore_holders', 'shared_holders'] LOOP
        EXECUTE format($sql$
            CREATE TRIGGER expired_hold_updated AFTER UPDATE ON %I FOR EACH ROW
            WHEN (OLD.acquired_at_ms <> OLD.expires_at_ms
                  AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token
                       OR (NEW.acquired_at_ms = NEW.expires_at_ms
                           AND (OLD.expires_at_ms <= NEW.expires_at_ms
                                OR current_setting('lockd.ending', true) = 'expired'))))
            EXECUTE FUNCTION lockd_note_expired_hold()$sql$, leases);
        EXECUTE format($sql$
            CREATE TRIGGER expired_hold_deleted AFTER DELETE ON %I FOR EACH ROW
            WHEN (OLD.acquired_at_ms <> OLD.expires_at_ms
                  AND (OLD.expires_at_ms
                           <= COALESCE(NULLIF(current_setting('lockd.now', true), '')::BIGINT,
                                       FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT)
                       OR current_setting('lockd.ending', true) = 'expired'))
            EXECUTE FUNCTION lockd_note_expired_hold()$sql$, leases);
    END LOOP;
END $$;
