-- Sessions (issue #35): one lease that keeps many holds alive. A hold under a session is an
-- ordinary row of `distributed_locks`, `shared_holders` or `semaphore_holders` whose owner is the
-- session's holder (U+0002, the 22-character id, ':', the label) and whose `expires_at_ms` is
-- 4000000000000000 while the session lives: every statement that decides by the row alone takes
-- it as live, and the session's row here has the real end. A keepalive writes this row only.
CREATE TABLE sessions (
    tenant         TEXT    NOT NULL,
    id             TEXT    NOT NULL CHECK (length(id) = 22),
    owner          TEXT    NOT NULL,
    ttl_ms         INTEGER NOT NULL CHECK (ttl_ms > 0),
    lock_delay_ms  INTEGER NOT NULL CHECK (lock_delay_ms BETWEEN 0 AND 60000),
    created_at_ms  INTEGER NOT NULL,
    expires_at_ms  INTEGER NOT NULL,
    PRIMARY KEY (tenant, id)
) WITHOUT ROWID;

-- The sweeper ends sessions that ran out, oldest end first.
CREATE INDEX sessions_by_expiry ON sessions (expires_at_ms);

-- Where a session has taken holds: one row per place, written with the grant in the grant's
-- transaction, so that closing, forcing, looking at or listing a session finds its holds
-- without an index on the holds' tables (their writes, and PostgreSQL's HOT renews, pay nothing
-- for sessions). A row may outlive its hold (released, or taken over once the session ran out):
-- the hold is what the place's row says; the row goes with its session.
CREATE TABLE session_holds (
    tenant     TEXT NOT NULL,
    session_id TEXT NOT NULL,
    kind       TEXT NOT NULL CHECK (kind IN ('lock', 'semaphore', 'election')),
    name       TEXT NOT NULL,
    PRIMARY KEY (tenant, session_id, kind, name)
) WITHOUT ROWID;
