-- Semaphores (issue #13): one row per holder's lease, in a table of their own so that the locks'
-- table and statements pay nothing for them. Semaphore `x` and lock `x` are unrelated names.
-- A holder's lease is live while now < expires_at_ms; ended rows are deleted by the next new
-- grant of the semaphore and by the sweeper. Fencing tokens come from `fencing_counter`, the one
-- counter of every lock and semaphore grant. `regranted` marks a lease last re-granted to the
-- owner that already held it (see distributed_locks.regranted). `value` is the holder's value,
-- compact JSON of at most 4 KiB, or NULL when never set.
CREATE TABLE semaphore_holders (
    tenant          TEXT    NOT NULL,
    name            TEXT    NOT NULL,
    owner           TEXT    NOT NULL,
    permits         INTEGER NOT NULL CHECK (permits >= 1),
    semaphore_limit INTEGER NOT NULL CHECK (semaphore_limit BETWEEN permits AND 10000),
    acquired_at_ms  INTEGER NOT NULL,
    expires_at_ms   INTEGER NOT NULL,
    fencing_token   INTEGER NOT NULL CHECK (fencing_token > 0),
    regranted       INTEGER NOT NULL DEFAULT 0 CHECK (regranted IN (0, 1)),
    value           TEXT CHECK (value IS NULL OR length(CAST(value AS BLOB)) <= 4096),
    PRIMARY KEY (tenant, name, owner)
) WITHOUT ROWID;

-- The sweeper deletes ended rows, oldest end first.
CREATE INDEX semaphore_holders_expires_at ON semaphore_holders (expires_at_ms);
