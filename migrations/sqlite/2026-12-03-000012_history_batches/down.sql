-- Back to a row per record, with the triggers of migration 11.
CREATE TABLE lease_history (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant        TEXT    NOT NULL,
    kind          TEXT    NOT NULL CHECK (kind IN ('lock', 'semaphore', 'election')),
    name          TEXT    NOT NULL,
    owner         TEXT    NOT NULL,
    fencing_token INTEGER NOT NULL,
    event         TEXT    NOT NULL CHECK (event IN ('granted', 're-granted', 'renewed', 'released',
                                                    'expired', 'force-released', 'undone')),
    at_ms         INTEGER NOT NULL,
    reason        TEXT,
    shared        INTEGER NOT NULL DEFAULT 0 CHECK (shared IN (0, 1))
);

-- One lock's, semaphore's or election's history, newest first; a tenant's, newest first.
CREATE INDEX lease_history_by_name ON lease_history (tenant, kind, name, id);
CREATE INDEX lease_history_by_tenant ON lease_history (tenant, id);

INSERT INTO lease_history (id, tenant, kind, name, owner, fencing_token, event, at_ms, reason, shared)
SELECT b.first_id + j.key, j.value ->> 0, j.value ->> 1, j.value ->> 2, j.value ->> 3, j.value ->> 4,
       j.value ->> 5, b.at_ms, j.value ->> 6, j.value ->> 7
FROM history_batches AS b, json_each(b.records) AS j;
DELETE FROM sqlite_sequence WHERE name = 'lease_history';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'lease_history', last_id FROM history_context WHERE id = 1;

DROP INDEX history_batches_at;
DROP INDEX history_tenants_by_segment;
DROP TABLE history_tenants;
DROP INDEX history_names_by_segment;
DROP TABLE history_names;
ALTER TABLE history_context DROP COLUMN last_id;
DROP TABLE history_batches;

CREATE TRIGGER lease_history_lock_inserted AFTER INSERT ON distributed_locks
WHEN unicode(NEW.owner) <> 1 AND NEW.acquired_at_ms <> NEW.expires_at_ms
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms)
    SELECT CASE WHEN substr(NEW.tenant, -10) = '/elections'
                THEN substr(NEW.tenant, 1, length(NEW.tenant) - 10) ELSE NEW.tenant END,
           CASE WHEN substr(NEW.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
           NEW.resource, NEW.owner, NEW.fencing_token, 'granted', c.now_ms
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;

CREATE TRIGGER lease_history_lock_updated AFTER UPDATE ON distributed_locks
BEGIN
    -- The lease a new one replaces ran out (a released one was recorded when it was released).
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms)
    SELECT CASE WHEN substr(OLD.tenant, -10) = '/elections'
                THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END,
           CASE WHEN substr(OLD.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
           OLD.resource, OLD.owner, OLD.fencing_token, 'expired', c.now_ms
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND unicode(OLD.owner) <> 1 AND OLD.acquired_at_ms <> OLD.expires_at_ms
      AND (OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token);
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason)
    SELECT CASE WHEN substr(NEW.tenant, -10) = '/elections'
                THEN substr(NEW.tenant, 1, length(NEW.tenant) - 10) ELSE NEW.tenant END,
           CASE WHEN substr(NEW.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
           NEW.resource, NEW.owner, NEW.fencing_token,
           CASE WHEN OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token THEN 'granted'
                WHEN NEW.acquired_at_ms = NEW.expires_at_ms AND OLD.expires_at_ms <= c.now_ms
                    THEN 'expired'
                WHEN NEW.acquired_at_ms = NEW.expires_at_ms THEN COALESCE(c.ending, 'released')
                WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                ELSE 'renewed' END,
           c.now_ms,
           CASE WHEN NEW.acquired_at_ms = NEW.expires_at_ms AND OLD.expires_at_ms > c.now_ms
                     AND c.ending = 'force-released'
                THEN c.reason END
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND unicode(NEW.owner) <> 1
      AND (((OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token)
            AND NEW.acquired_at_ms <> NEW.expires_at_ms)
        OR (OLD.owner = NEW.owner AND OLD.fencing_token = NEW.fencing_token
            AND OLD.acquired_at_ms <> OLD.expires_at_ms
            AND (NEW.acquired_at_ms <> OLD.acquired_at_ms OR NEW.expires_at_ms <> OLD.expires_at_ms)));
END;

CREATE TRIGGER lease_history_lock_deleted AFTER DELETE ON distributed_locks
WHEN unicode(OLD.owner) <> 1 AND OLD.acquired_at_ms <> OLD.expires_at_ms
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason)
    SELECT CASE WHEN substr(OLD.tenant, -10) = '/elections'
                THEN substr(OLD.tenant, 1, length(OLD.tenant) - 10) ELSE OLD.tenant END,
           CASE WHEN substr(OLD.tenant, -10) = '/elections' THEN 'election' ELSE 'lock' END,
           OLD.resource, OLD.owner, OLD.fencing_token,
           CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                ELSE COALESCE(c.ending, 'released') END,
           c.now_ms,
           CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released' THEN c.reason END
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;

-- A semaphore's holders and a lock's readers: one row per holder, so the owner never changes
-- in place, and none is released in place.

CREATE TRIGGER lease_history_permit_inserted AFTER INSERT ON semaphore_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT NEW.tenant, 'semaphore', NEW.name, NEW.owner, NEW.fencing_token, 'granted', c.now_ms, 0
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;

CREATE TRIGGER lease_history_permit_updated AFTER UPDATE ON semaphore_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT OLD.tenant, 'semaphore', OLD.name, OLD.owner, OLD.fencing_token, 'expired', c.now_ms, 0
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND OLD.fencing_token <> NEW.fencing_token;
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT NEW.tenant, 'semaphore', NEW.name, NEW.owner, NEW.fencing_token,
           CASE WHEN OLD.fencing_token <> NEW.fencing_token THEN 'granted'
                WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                ELSE 'renewed' END,
           c.now_ms, 0
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND (OLD.fencing_token <> NEW.fencing_token
        OR NEW.acquired_at_ms <> OLD.acquired_at_ms OR NEW.expires_at_ms <> OLD.expires_at_ms);
END;

CREATE TRIGGER lease_history_permit_deleted AFTER DELETE ON semaphore_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason, shared)
    SELECT OLD.tenant, 'semaphore', OLD.name, OLD.owner, OLD.fencing_token,
           CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                ELSE COALESCE(c.ending, 'released') END,
           c.now_ms,
           CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released' THEN c.reason END,
           0
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;

CREATE TRIGGER lease_history_reader_inserted AFTER INSERT ON shared_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT NEW.tenant, 'lock', NEW.resource, NEW.owner, NEW.fencing_token, 'granted', c.now_ms, 1
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;

CREATE TRIGGER lease_history_reader_updated AFTER UPDATE ON shared_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT OLD.tenant, 'lock', OLD.resource, OLD.owner, OLD.fencing_token, 'expired', c.now_ms, 1
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND OLD.fencing_token <> NEW.fencing_token;
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, shared)
    SELECT NEW.tenant, 'lock', NEW.resource, NEW.owner, NEW.fencing_token,
           CASE WHEN OLD.fencing_token <> NEW.fencing_token THEN 'granted'
                WHEN NEW.acquired_at_ms <> OLD.acquired_at_ms THEN 're-granted'
                ELSE 'renewed' END,
           c.now_ms, 1
    FROM history_context AS c
    WHERE c.id = 1 AND c.recording = 1 AND (OLD.fencing_token <> NEW.fencing_token
        OR NEW.acquired_at_ms <> OLD.acquired_at_ms OR NEW.expires_at_ms <> OLD.expires_at_ms);
END;

CREATE TRIGGER lease_history_reader_deleted AFTER DELETE ON shared_holders
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason, shared)
    SELECT OLD.tenant, 'lock', OLD.resource, OLD.owner, OLD.fencing_token,
           CASE WHEN OLD.expires_at_ms <= c.now_ms THEN 'expired'
                ELSE COALESCE(c.ending, 'released') END,
           c.now_ms,
           CASE WHEN OLD.expires_at_ms > c.now_ms AND c.ending = 'force-released' THEN c.reason END,
           1
    FROM history_context AS c WHERE c.id = 1 AND c.recording = 1;
END;
