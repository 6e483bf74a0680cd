-- Lock-delay (issue #14): how long, in ms, a lease that ends by expiry keeps its place from other
-- owners after its end. An acquire sets it (0 to 60,000); a release ends the lease by deleting
-- the row, so only a lease that ran out (its row still here) delays anyone. The row that stands
-- for a lock's shared holders has 0.
ALTER TABLE distributed_locks ADD COLUMN lock_delay_ms INTEGER NOT NULL DEFAULT 0
    CHECK (lock_delay_ms BETWEEN 0 AND 60000);
