-- A value stored with each lock lease (issue #13): the compact JSON text of any JSON value, at
-- most 4 KiB, or NULL when never set. An acquire sets it (a re-grant to the same owner keeps it
-- unless given a new one), a renew replaces it when given one, another holder starts without one.
-- The row that stands for a lock's shared holders has none: each reader's is in shared_holders.
ALTER TABLE distributed_locks ADD COLUMN value TEXT
    CHECK (value IS NULL OR length(CAST(value AS BLOB)) <= 4096);
ALTER TABLE shared_holders ADD COLUMN value TEXT
    CHECK (value IS NULL OR length(CAST(value AS BLOB)) <= 4096);
