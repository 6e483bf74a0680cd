-- The history's triggers on SQLite (see `capture.rs`): TEMP triggers of the writer's own
-- connection, created when it opens in a process that records history. Each change to a lease
-- calls `lockd_history(json_array(tenant, kind, name, owner, fencing_token, event, reason,
-- shared))`, which hands the record, as the JSON element it is stored as, to the writer; the
-- writer writes the records of a transaction as one row of `history_batches` before its COMMIT.
--
-- They are the SQL copy of the domain's `name_change`: a new lease is 'granted'; the lease it
-- replaced, unless released, 'expired'; an acquire by the live holder 're-granted'; a moved end
-- 'renewed'; a deleted live lease 'released' (or what the write says: 'undone',
-- 'force-released'), a deleted ended one 'expired'. The row of a lock's shared holders (owner
-- starting with the control character U+0001) records nothing: each reader's row does. An
-- election is stored in its tenant's `<tenant>/elections` namespace and recorded as the tenant's.
-- `temp.lockd_write` (the writer connection's own, see `history.rs`) holds the transaction's clock
-- and what the write says an ending is (a grant needs neither, so the inserts do not read it).

CREATE TEMP TRIGGER lockd_history_lock_inserted AFTER INSERT ON main.distributed_locks
WHEN unicode(NEW.owner) <> 1 AND NEW.acquired_at_ms <> NEW.expires_at_ms
BEGIN
    SELECT lockd_history(json_array(
               CASE WHEN substr(NEW.tenant, -10) = '/elections'
                    THEN substr(NEW.tenant, 1, length(NEW.tenant) - 10) ELSE NEW.tenant END,
               CASE WHEN substr(NEW.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
               NEW.resource, NEW.owner, NEW.fencing_token, 'granted', NULL, 0));
END;

CREATE TEMP TRIGGER lockd_history_lock_updated AFTER UPDATE ON main.distributed_locks
BEGIN
    -- The lease a new one replaces ran out (a released one was recorded when it was released).
    SELECT lockd_history(json_array(
               CASE WHEN substr(OLD.tenant, -10) = '/elections'
                    THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END,
               CASE WHEN substr(OLD.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
               OLD.resource, OLD.owner, OLD.fencing_token, 'expired', NULL, 0))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND unicode(OLD.owner) <> 1
      AND OLD.acquired_at_ms <> OLD.expires_at_ms
      AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token);
    SELECT lockd_history(json_array(
               CASE WHEN substr(NEW.tenant, -10) = '/elections'
                    THEN substr(NEW.tenant, 1, length(NEW.tenant) - 10) ELSE NEW.tenant END,
               CASE WHEN substr(NEW.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
               NEW.resource, NEW.owner, NEW.fencing_token,
               CASE WHEN OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token
                        THEN 'granted'
                    WHEN NEW.acquired_at_ms = NEW.expires_at_ms AND OLD.expires_at_ms <= c.now_ms
                        THEN 'expired'
                    WHEN NEW.acquired_at_ms = NEW.expires_at_ms THEN COALESCE(c.ending, 'released')
                    WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                    ELSE 'renewed' END,
               CASE WHEN NEW.acquired_at_ms = NEW.expires_at_ms AND OLD.expires_at_ms > c.now_ms
                         AND c.ending = 'force-released'
                    THEN c.reason END,
               0))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND unicode(NEW.owner) <> 1
      AND (((OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token)
            AND NEW.acquired_at_ms <> NEW.expires_at_ms)
        OR (OLD.owner = NEW.owner AND OLD.fencing_token = NEW.fencing_token
            AND OLD.acquired_at_ms <> OLD.expires_at_ms
            AND (NEW.acquired_at_ms <> OLD.acquired_at_ms
                 OR NEW.expires_at_ms <> OLD.expires_at_ms)));
END;

CREATE TEMP TRIGGER lockd_history_lock_deleted AFTER DELETE ON main.distributed_locks
WHEN unicode(OLD.owner) <> 1 AND OLD.acquired_at_ms <> OLD.expires_at_ms
BEGIN
    SELECT lockd_history(json_array(
               CASE WHEN substr(OLD.tenant, -10) = '/elections'
                    THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END,
               CASE WHEN substr(OLD.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
               OLD.resource, OLD.owner, OLD.fencing_token,
               CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                    ELSE COALESCE(c.ending, 'released') END,
               CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released'
                    THEN c.reason END,
               0))
    FROM temp.lockd_write AS c WHERE c.id = 1;
END;

-- A semaphore's holders and a lock's readers: one row per holder, so the owner never changes
-- in place, and none is released in place.

CREATE TEMP TRIGGER lockd_history_permit_inserted AFTER INSERT ON main.semaphore_holders
BEGIN
    SELECT lockd_history(json_array(NEW.tenant, 'semaphore', NEW.name, NEW.owner, NEW.fencing_token,
                         'granted', NULL, 0));
END;

CREATE TEMP TRIGGER lockd_history_permit_updated AFTER UPDATE ON main.semaphore_holders
BEGIN
    SELECT lockd_history(json_array(OLD.tenant, 'semaphore', OLD.name, OLD.owner, OLD.fencing_token,
                         'expired', NULL, 0))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND OLD.fencing_token <> NEW.fencing_token;
    SELECT lockd_history(json_array(NEW.tenant, 'semaphore', NEW.name, NEW.owner, NEW.fencing_token,
                         CASE WHEN OLD.fencing_token <> NEW.fencing_token THEN 'granted'
                              WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                              ELSE 'renewed' END,
                         NULL, 0))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND (OLD.fencing_token <> NEW.fencing_token
        OR NEW.acquired_at_ms <> OLD.acquired_at_ms OR NEW.expires_at_ms <> OLD.expires_at_ms);
END;

CREATE TEMP TRIGGER lockd_history_permit_deleted AFTER DELETE ON main.semaphore_holders
BEGIN
    SELECT lockd_history(json_array(OLD.tenant, 'semaphore', OLD.name, OLD.owner, OLD.fencing_token,
                         CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                              ELSE COALESCE(c.ending, 'released') END,
                         CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released'
                              THEN c.reason END,
                         0))
    FROM temp.lockd_write AS c WHERE c.id = 1;
END;

CREATE TEMP TRIGGER lockd_history_reader_inserted AFTER INSERT ON main.shared_holders
BEGIN
    SELECT lockd_history(json_array(NEW.tenant, 'lock', NEW.resource, NEW.owner, NEW.fencing_token,
                         'granted', NULL, 1));
END;

CREATE TEMP TRIGGER lockd_history_reader_updated AFTER UPDATE ON main.shared_holders
BEGIN
    SELECT lockd_history(json_array(OLD.tenant, 'lock', OLD.resource, OLD.owner, OLD.fencing_token,
                         'expired', NULL, 1))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND OLD.fencing_token <> NEW.fencing_token;
    SELECT lockd_history(json_array(NEW.tenant, 'lock', NEW.resource, NEW.owner, NEW.fencing_token,
                         CASE WHEN OLD.fencing_token <> NEW.fencing_token THEN 'granted'
                              WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                              ELSE 'renewed' END,
                         NULL, 1))
    FROM temp.lockd_write AS c
    WHERE c.id = 1 AND (OLD.fencing_token <> NEW.fencing_token
        OR NEW.acquired_at_ms <> OLD.acquired_at_ms OR NEW.expires_at_ms <> OLD.expires_at_ms);
END;

CREATE TEMP TRIGGER lockd_history_reader_deleted AFTER DELETE ON main.shared_holders
BEGIN
    SELECT lockd_history(json_array(OLD.tenant, 'lock', OLD.resource, OLD.owner, OLD.fencing_token,
                         CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                              ELSE COALESCE(c.ending, 'released') END,
                         CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released'
                              THEN c.reason END,
                         1))
    FROM temp.lockd_write AS c WHERE c.id = 1;
END;
