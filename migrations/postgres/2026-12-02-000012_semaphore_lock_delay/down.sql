ALTER TABLE semaphore_holders DROP COLUMN lock_delay_ms;
