-- The leases that ran out, each noted by the write that recorded its end `expired` (the writer's
-- TEMP triggers, see the store's `expired_holds.rs`), with how long it was held, until a process
-- takes it for its `lockd_hold_seconds` metric (and deletes it): every process sharing the file
-- notes and takes, so each lease is counted once among them.
CREATE TABLE expired_holds (
    id      INTEGER NOT NULL PRIMARY KEY,
    kind    TEXT NOT NULL,
    shared  INTEGER NOT NULL,
    held_ms INTEGER NOT NULL
);
