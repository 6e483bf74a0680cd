-- Only possible while every lock belongs to the default tenant.
CREATE TABLE distributed_locks_by_resource (
    resource       TEXT    NOT NULL PRIMARY KEY,
    owner          TEXT    NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    fencing_token  INTEGER NOT NULL CHECK (fencing_token > 0)
) WITHOUT ROWID;
INSERT INTO distributed_locks_by_resource
SELECT resource, owner, acquired_at_ms, expires_at_ms, fencing_token FROM distributed_locks WHERE tenant = 'default';
DROP TABLE distributed_locks;
ALTER TABLE distributed_locks_by_resource RENAME TO distributed_locks;
CREATE INDEX distributed_locks_expires_at ON distributed_locks (expires_at_ms);
CREATE TRIGGER distributed_locks_token_after_insert AFTER INSERT ON distributed_locks
BEGIN
    UPDATE fencing_counter SET last_token = NEW.fencing_token WHERE id = 1 AND last_token < NEW.fencing_token;
END;
CREATE TRIGGER distributed_locks_token_after_update AFTER UPDATE OF fencing_token ON distributed_locks
BEGIN
    UPDATE fencing_counter SET last_token = NEW.fencing_token WHERE id = 1 AND last_token < NEW.fencing_token;
END;
