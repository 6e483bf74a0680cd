-- One row per resource that has (or had, until swept) a lock. Timestamps are Unix epoch
-- milliseconds (UTC) taken from the database server's clock; a lock is live while
-- now < expires_at_ms. Resource names compare bytewise (COLLATE "C").
CREATE TABLE distributed_locks (
    resource       TEXT   COLLATE "C" NOT NULL PRIMARY KEY,
    owner          TEXT   NOT NULL,
    acquired_at_ms BIGINT NOT NULL,
    expires_at_ms  BIGINT NOT NULL,
    fencing_token  BIGINT NOT NULL CHECK (fencing_token > 0)
);

-- Fencing tokens for every grant of every resource: strictly increasing, never reused, and
-- independent of the rows (which are deleted on release).
CREATE SEQUENCE fencing_tokens AS BIGINT MINVALUE 1 START WITH 1;
