-- How many grants took a resource over from another owner whose lease had expired. A release
-- deletes its row, so a grant that changes the owner of an existing row (the acquire's
-- upsert updates only expired rows or the owner's own) replaces a lease that ran out.
CREATE TABLE expired_takeovers (
    id    INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    count INTEGER NOT NULL
);
INSERT INTO expired_takeovers (id, count) VALUES (1, 0);

CREATE TRIGGER distributed_locks_count_expired_takeover AFTER UPDATE OF owner ON distributed_locks
WHEN OLD.owner <> NEW.owner
BEGIN
    UPDATE expired_takeovers SET count = count + 1 WHERE id = 1;
END;
