-- Shared (read/write) locks (issue #13): one row per shared holder's lease. While a lock has live
-- shared holders, its distributed_locks row stands for them all: its owner is a marker no client
-- can name itself (it starts with a control character), its expiry the latest end among their
-- leases and its token the largest of theirs, so that the exclusive statements refuse it as "held
-- by another owner" and take it over exactly when the last shared lease has ended. Every shared
-- operation holds that row's lock (FOR UPDATE) and rewrites it in the same transaction (see the
-- store's `shared_locks` module). Tokens come from `fencing_tokens`. `regranted` (0 or 1) marks a
-- lease last re-granted to the owner that already held it. Ended rows are deleted by the next
-- grant of the lock and by the sweeper. No index on expires_at_ms (migration 7).
CREATE TABLE shared_holders (
    tenant         TEXT   COLLATE "C" NOT NULL,
    resource       TEXT   COLLATE "C" NOT NULL,
    owner          TEXT   COLLATE "C" NOT NULL,
    acquired_at_ms BIGINT NOT NULL,
    expires_at_ms  BIGINT NOT NULL,
    fencing_token  BIGINT NOT NULL CHECK (fencing_token > 0),
    regranted      BIGINT NOT NULL DEFAULT 0 CHECK (regranted IN (0, 1)),
    PRIMARY KEY (tenant, resource, owner)
) WITH (fillfactor = 70);
