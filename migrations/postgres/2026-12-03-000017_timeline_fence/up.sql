-- Fencing tokens across a failover to a standby that was behind (asynchronous replication).
-- The transactions the old primary committed but did not send are lost, and with them the
-- `fencing_tokens` (and history numbers) they drew: the promoted standby would draw them again,
-- and a token that a client already holds would be given to another grant. So the first lockd
-- connection on a new timeline moves the sequences forward by a margin far larger than anything
-- a lag can lose (lockd passes its margins: 10^9 tokens, 10^6 history batches, in
-- lock-store-diesel's `postgres/timeline.rs`) before any grant is made there.
--
-- `lockd_timeline` holds the newest timeline lockd has written on. The current one is the
-- timeline of the WAL being written (`pg_walfile_name` names the segment by its timeline): it
-- changes the moment a standby is promoted, unlike `pg_control_checkpoint()`'s, which waits for
-- the first checkpoint on the new timeline.
CREATE TABLE lockd_timeline (
    only_row BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (only_row),
    timeline BIGINT NOT NULL
);

CREATE FUNCTION lockd_current_timeline() RETURNS BIGINT
LANGUAGE sql VOLATILE AS $$
    SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::BIGINT
$$;

-- Called by every new lockd connection before it is used. Returns the timeline it entered (and
-- moved the sequences for), 0 when lockd had written on this timeline already, or -1 on a standby
-- (lockd refuses the connection: one kept open across a promotion would write unfenced). Concurrent callers are serialised by the row's
-- lock: one moves the sequences, the others find the timeline recorded.
CREATE FUNCTION lockd_enter_timeline(token_margin BIGINT, batch_margin BIGINT) RETURNS BIGINT
LANGUAGE plpgsql AS $$
DECLARE
    current_timeline BIGINT;
    recorded BIGINT;
BEGIN
    IF pg_is_in_recovery() THEN
        RETURN -1;
    END IF;
    current_timeline := lockd_current_timeline();
    SELECT timeline INTO recorded FROM lockd_timeline;
    IF recorded >= current_timeline THEN
        RETURN 0;
    END IF;
    SELECT timeline INTO recorded FROM lockd_timeline FOR UPDATE;
    IF recorded >= current_timeline THEN
        RETURN 0;
    END IF;
    PERFORM setval('fencing_tokens',
                   (SELECT last_value FROM fencing_tokens) + token_margin);
    PERFORM setval('history_batch_numbers',
                   (SELECT last_value FROM history_batch_numbers) + batch_margin);
    INSERT INTO lockd_timeline (timeline) VALUES (current_timeline)
    ON CONFLICT (only_row) DO UPDATE SET timeline = EXCLUDED.timeline;
    RETURN current_timeline;
END
$$;

-- The timeline of the migration is the first one: a later one moves the sequences.
INSERT INTO lockd_timeline (timeline) SELECT lockd_current_timeline();
