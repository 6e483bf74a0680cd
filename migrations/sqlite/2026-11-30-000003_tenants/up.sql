-- Locks belong to tenants: the key becomes (tenant, resource). Existing locks move to the
-- `default` tenant (the one tenant of a server without API keys). SQLite cannot change a primary
-- key in place: rebuild the table, then restore its index and triggers.
CREATE TABLE distributed_locks_by_tenant (
    tenant         TEXT    NOT NULL,
    resource       TEXT    NOT NULL,
    owner          TEXT    NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    fencing_token  INTEGER NOT NULL CHECK (fencing_token > 0),
    PRIMARY KEY (tenant, resource)
) WITHOUT ROWID;

INSERT INTO distributed_locks_by_tenant (tenant, resource, owner, acquired_at_ms, expires_at_ms, fencing_token)
SELECT 'default', resource, owner, acquired_at_ms, expires_at_ms, fencing_token FROM distributed_locks;

DROP TABLE distributed_locks;
ALTER TABLE distributed_locks_by_tenant RENAME TO distributed_locks;

CREATE INDEX distributed_locks_expires_at ON distributed_locks (expires_at_ms);

CREATE TRIGGER distributed_locks_token_after_insert AFTER INSERT ON distributed_locks
BEGIN
    UPDATE fencing_counter SET last_token = NEW.fencing_token
    WHERE id = 1 AND last_token < NEW.fencing_token;
END;

CREATE TRIGGER distributed_locks_token_after_update AFTER UPDATE OF fencing_token ON distributed_locks
BEGIN
    UPDATE fencing_counter SET last_token = NEW.fencing_token
    WHERE id = 1 AND last_token < NEW.fencing_token;
END;
