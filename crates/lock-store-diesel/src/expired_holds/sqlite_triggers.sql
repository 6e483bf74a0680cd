-- The leases that ran out, noted on SQLite (see `expired_holds.rs`): TEMP triggers of the writer's
-- own connection, created whether or not the process records history. Each notes, in the write's
-- own transaction, a lease whose end the history's triggers (`history/sqlite_capture.sql`, the
-- SQL copy of the domain's `name_change`) record as `expired`: replaced by a new lease before it
-- was ended, ended in place or deleted once run out by the write's clock (`temp.lockd_write`).
-- Not the row of a lock's shared holders (owner U+0001).
--
-- A session's hold (owner U+0002) has a row that says "while the session lives": it ran out with
-- its session, at the session's end, and is noted when it is replaced (only a session that ran
-- out lets its place go), or ended or deleted by a write that says the ending is `expired` (the
-- sweeper ending the session; an admin's force-release after it ran out), while the session's
-- row says it ran out. A release under a live session reads no session.
--
-- One trigger per change of a table of leases, each with both cases: a trigger costs a call of
-- its program for every row it could fire on (about 0.45 us a release), whatever its `WHEN`.
-- `expired_holds.rs` writes them for each table, putting in for the names in braces the table,
-- the triggers' names, the kind noted (an expression) and whether it is a reader's.

CREATE TEMP TRIGGER lockd_expired_{short}_updated AFTER UPDATE ON main.{table}
WHEN OLD.acquired_at_ms <> OLD.expires_at_ms
  AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token
       OR NEW.acquired_at_ms = NEW.expires_at_ms)
BEGIN
    INSERT INTO expired_holds (kind, shared, held_ms)
    SELECT {kind}, {shared}, OLD.expires_at_ms - OLD.acquired_at_ms
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND unicode(OLD.owner) NOT IN (1, 2) AND OLD.acquired_at_ms < OLD.expires_at_ms
      AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token
           OR OLD.expires_at_ms <= c.now_ms);
    INSERT INTO expired_holds (kind, shared, held_ms)
    SELECT {kind}, {shared}, s.expires_at_ms - OLD.acquired_at_ms
    FROM main.sessions AS s, temp.lockd_write AS c
    WHERE unicode(OLD.owner) = 2 AND c.id = 1
      AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token
           OR c.ending = 'expired')
      AND s.id = substr(OLD.owner, 2, 22)
      AND s.tenant = CASE WHEN substr(OLD.tenant, -10) = '/elections'
                          THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END
      AND s.expires_at_ms <= c.now_ms AND OLD.acquired_at_ms < s.expires_at_ms;
END;

CREATE TEMP TRIGGER lockd_expired_{short}_deleted AFTER DELETE ON main.{table}
WHEN OLD.acquired_at_ms <> OLD.expires_at_ms
  AND (SELECT CASE WHEN unicode(OLD.owner) = 2 THEN c.ending = 'expired'
                   ELSE unicode(OLD.owner) <> 1 AND OLD.expires_at_ms <= c.now_ms END
       FROM temp.lockd_write AS c WHERE c.id = 1)
BEGIN
    INSERT INTO expired_holds (kind, shared, held_ms)
    SELECT {kind}, {shared}, OLD.expires_at_ms - OLD.acquired_at_ms
    WHERE unicode(OLD.owner) <> 2 AND OLD.acquired_at_ms < OLD.expires_at_ms;
    INSERT INTO expired_holds (kind, shared, held_ms)
    SELECT {kind}, {shared}, s.expires_at_ms - OLD.acquired_at_ms
    FROM main.sessions AS s, temp.lockd_write AS c
    WHERE unicode(OLD.owner) = 2 AND c.id = 1 AND s.id = substr(OLD.owner, 2, 22)
      AND s.tenant = CASE WHEN substr(OLD.tenant, -10) = '/elections'
                          THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END
      AND s.expires_at_ms <= c.now_ms AND OLD.acquired_at_ms < s.expires_at_ms;
END;
