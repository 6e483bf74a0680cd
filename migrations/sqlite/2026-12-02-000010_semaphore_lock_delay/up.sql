-- Lock-delay of semaphore grants (issue #14): how long, in ms, a grant that ends by expiry keeps
-- its permits taken for other owners. A release deletes the row, so only a grant that ran out
-- delays anyone; new grants and the sweeper keep a row until its delay is over.
ALTER TABLE semaphore_holders ADD COLUMN lock_delay_ms INTEGER NOT NULL DEFAULT 0
    CHECK (lock_delay_ms BETWEEN 0 AND 60000);
