-- Whether the row's current lease was last re-granted to the owner that already held it (the
-- acquire kept its fencing token) rather than granted anew. Undoing a grant nobody will use
-- (its requester hung up, or heard 503 before the grant committed) ends only a new grant: a
-- re-grant is the continuation of a lease its owner was already told it holds.
ALTER TABLE distributed_locks ADD COLUMN regranted INTEGER NOT NULL DEFAULT 0 CHECK (regranted IN (0, 1));
