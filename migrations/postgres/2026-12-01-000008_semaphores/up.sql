-- Semaphores (issue #13): one row per holder's lease, in a table of their own so that the locks'
-- table and statements pay nothing for them. Semaphore `x` and lock `x` are unrelated names.
-- A holder's lease is live while now < expires_at_ms (the server's clock); ended rows are
-- deleted by the next new grant of the semaphore and by the sweeper. Fencing tokens come from the
-- `fencing_tokens` sequence, as every lock grant's. Writers of one semaphore are serialised by a
-- transaction-level advisory lock on its (tenant, name) (see the store's `semaphores` module).
-- `regranted` (0 or 1) marks a lease last re-granted to the owner that already held it (see
-- distributed_locks.regranted). `value` is the holder's value, compact JSON of at most 4 KiB,
-- or NULL when never set. No index on expires_at_ms, so that renews stay HOT updates (migration 7).
CREATE TABLE semaphore_holders (
    tenant          TEXT   COLLATE "C" NOT NULL,
    name            TEXT   COLLATE "C" NOT NULL,
    owner           TEXT   COLLATE "C" NOT NULL,
    permits         BIGINT NOT NULL CHECK (permits >= 1),
    semaphore_limit BIGINT NOT NULL CHECK (semaphore_limit BETWEEN permits AND 10000),
    acquired_at_ms  BIGINT NOT NULL,
    expires_at_ms   BIGINT NOT NULL,
    fencing_token   BIGINT NOT NULL CHECK (fencing_token > 0),
    regranted       BIGINT NOT NULL DEFAULT 0 CHECK (regranted IN (0, 1)),
    value           TEXT CHECK (value IS NULL OR octet_length(value) <= 4096),
    PRIMARY KEY (tenant, name, owner)
) WITH (fillfactor = 70);
