-- Every acquire, release and renew changes expires_at_ms. While that column had an index, no
-- update could be HOT (heap-only): each one wrote a new row version elsewhere in the table and
-- a new entry into both indexes, so a few hot locks bloated the table by megabytes a minute and
-- every lookup walked the dead versions. Without it, a write updates its row in place on the same
-- page (pruned as it goes), and only the primary key is indexed.
--
-- What used the index reads the table instead: the sweeper walks it in ranges of pages (a TID
-- range scan, PostgreSQL 14 or later), and the live-lock count behind /metrics (every 5 s) scans it.
DROP INDEX distributed_locks_expires_at;

-- Room on each page for the new version of a row, so that its update stays on the page.
ALTER TABLE distributed_locks SET (fillfactor = 70);
