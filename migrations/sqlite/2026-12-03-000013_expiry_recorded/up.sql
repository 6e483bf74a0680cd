-- PostgreSQL's migration 14 marks a row whose expiry an observer recorded, for its count of
-- expired takeovers. SQLite counts every takeover of a row (a release deletes it) and needs no
-- mark, but the statements written once for both backends clear it on a new grant.
ALTER TABLE distributed_locks ADD COLUMN expiry_recorded INTEGER NOT NULL DEFAULT 0
    CHECK (expiry_recorded IN (0, 1));
