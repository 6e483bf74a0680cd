-- One row per resource that has (or had, until swept) a lock. Timestamps are Unix epoch
-- milliseconds (UTC); a lock is live while now < expires_at_ms.
CREATE TABLE distributed_locks (
    resource       TEXT    NOT NULL PRIMARY KEY,
    owner          TEXT    NOT NULL,
    acquired_at_ms INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    fencing_token  INTEGER NOT NULL CHECK (fencing_token > 0)
) WITHOUT ROWID;

-- The highest fencing token ever issued. Rows are deleted on release, so the next token of a
-- resource cannot come from its own row: it comes from here, which only ever grows.
CREATE TABLE fencing_counter (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    last_token INTEGER NOT NULL
);
INSERT INTO fencing_counter (id, last_token) VALUES (1, 0);

-- Keep the counter at the highest token written, inside the same statement as the grant.
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
