-- History by batch on PostgreSQL too (issue #15, W1 with history >= 0.9x W1 without): the
-- records of one statement are one row of `history_batches`, an array per field, instead of a
-- row and three index entries per record (about 10 us of PostgreSQL's time per changed lease
-- row, pgbench on this schema). The batch statement of acquires, releases and renews writes its
-- records itself, from the rows it locked and wrote (the store's `postgres/writes.rs`), and says
-- so (`lockd_recorded_by_statement`); every other write is still recorded by the triggers, which
-- keep the rules of migration 13 and now write a batch per call.
--
-- A batch draws one number from `history_batch_numbers`, after its statement has written its
-- lease rows (so its transaction has an id: see the store's `history/postgres_frontier.rs`).
-- Its records' ids are `number * 65536` plus their place in the arrays, from 0: ids grow in the
-- order batches are drawn, a batch's ids are contiguous, and more than 65,536 records of one
-- call take more than one number. `at_ms` is the server's clock when the batch is written.
CREATE SEQUENCE history_batch_numbers AS BIGINT MINVALUE 1 START WITH 1;

CREATE TABLE history_batches (
    first_id BIGINT    NOT NULL PRIMARY KEY CHECK (first_id > 0),
    last_id  BIGINT    NOT NULL CHECK (last_id >= first_id),
    at_ms    BIGINT    NOT NULL,
    tenants  TEXT[]    COLLATE "C" NOT NULL,
    kinds    TEXT[]    COLLATE "C" NOT NULL,
    names    TEXT[]    COLLATE "C" NOT NULL,
    owners   TEXT[]    COLLATE "C" NOT NULL,
    tokens   BIGINT[]  NOT NULL,
    events   TEXT[]    COLLATE "C" NOT NULL,
    reasons  TEXT[]    NOT NULL,
    shared   BOOLEAN[] NOT NULL
);
-- Where the records since a time start (`since`, pruning): one entry per batch.
CREATE INDEX history_batches_at ON history_batches (at_ms);

-- Where to look for a name's, or a tenant's, records: the segments (ids 4,194,304 * segment
-- to the next segment, 64 batch numbers) holding at least one, as on SQLite. The store's indexer
-- writes them after the fact, off the writes' path, for the batches up to
-- `history_indexed.through` (one indexer at a time: it holds that row); a read scans the
-- batches above it directly.
CREATE TABLE history_names (
    tenant  TEXT   COLLATE "C" NOT NULL,
    kind    TEXT   COLLATE "C" NOT NULL,
    name    TEXT   COLLATE "C" NOT NULL,
    segment BIGINT NOT NULL,
    PRIMARY KEY (tenant, kind, name, segment)
);
CREATE INDEX history_names_by_segment ON history_names (segment);

CREATE TABLE history_tenants (
    tenant  TEXT   COLLATE "C" NOT NULL,
    segment BIGINT NOT NULL,
    PRIMARY KEY (tenant, segment)
);
CREATE INDEX history_tenants_by_segment ON history_tenants (segment);

-- Every batch whose first id is at most `through` has its segment entries.
CREATE TABLE history_indexed (
    id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    through BIGINT  NOT NULL
);
INSERT INTO history_indexed (id, through) VALUES (1, 0);

-- Writes the records given as one array per field (in order; NULL or empty: none).
CREATE FUNCTION lockd_write_batch(tenants TEXT[], kinds TEXT[], names TEXT[], owners TEXT[],
                                  tokens BIGINT[], events TEXT[], reasons TEXT[],
                                  shared BOOLEAN[])
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    total INTEGER := COALESCE(cardinality(tenants), 0);
    batch_at BIGINT := FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT;
    batch_first BIGINT;
    low INTEGER := 1;
    high INTEGER;
BEGIN
    WHILE low <= total LOOP
        high := LEAST(total, low + 65535);
        batch_first := nextval('history_batch_numbers') * 65536;
        INSERT INTO history_batches (first_id, last_id, at_ms, tenants, kinds, names, owners,
                                     tokens, events, reasons, shared)
        VALUES (batch_first, batch_first + high - low, batch_at, tenants[low:high],
                kinds[low:high], names[low:high], owners[low:high], tokens[low:high],
                events[low:high], reasons[low:high], shared[low:high]);
        low := high + 1;
    END LOOP;
END $$;

-- The row triggers of semaphore holders and shared holders: a batch of one record each.
CREATE OR REPLACE FUNCTION lockd_record_lease(stored_tenant TEXT, table_kind TEXT,
                                              lease_name TEXT, lease_owner TEXT, token BIGINT,
                                              event TEXT, is_shared BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    election BOOLEAN := table_kind = 'lock' AND right(stored_tenant, 10) = '/elections';
BEGIN
    PERFORM lockd_write_batch(
        ARRAY[CASE WHEN election THEN left(stored_tenant, -10) ELSE stored_tenant END],
        ARRAY[CASE WHEN election THEN 'election' ELSE table_kind END],
        ARRAY[lease_name], ARRAY[lease_owner], ARRAY[token], ARRAY[event],
        ARRAY[CASE WHEN event = 'force-released'
                   THEN NULLIF(current_setting('lockd.reason', true), '') END],
        ARRAY[is_shared]);
END $$;

-- Whether the running statement recorded its changes itself: the batch statement says so with
-- `set_config('lockd.recorded', <this>, true)` once it has written its records (for its
-- transaction, and this statement only: the next one starts at another time).
CREATE FUNCTION lockd_statement_mark() RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT (EXTRACT(EPOCH FROM statement_timestamp()) * 1000000)::BIGINT::TEXT
$$;

CREATE FUNCTION lockd_recorded_by_statement() RETURNS BOOLEAN LANGUAGE sql STABLE AS $$
    SELECT COALESCE(current_setting('lockd.recorded', true) = lockd_statement_mark(), FALSE)
$$;

-- The locks' table, by statement, as in migration 13, each statement's records one batch:
-- within it the endings come first, then the grants, each by name.
CREATE OR REPLACE FUNCTION lockd_history_of_lock_inserts() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('lockd.history', true) = 'off' OR lockd_recorded_by_statement() THEN
        RETURN NULL;
    END IF;
    PERFORM lockd_write_batch(array_agg(lockd_history_tenant(c.tenant)),
                              array_agg(lockd_history_kind(c.tenant)), array_agg(c.resource),
                              array_agg(c.owner), array_agg(c.fencing_token),
                              array_agg('granted'::TEXT), array_agg(NULL::TEXT),
                              array_agg(FALSE))
    FROM (SELECT n.tenant, n.resource, n.owner, n.fencing_token
          FROM new_rows AS n
          WHERE ascii(n.owner) <> 1 AND n.acquired_at_ms <> n.expires_at_ms
          ORDER BY n.tenant, n.resource) AS c;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lockd_history_of_lock_updates() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
    reason TEXT := NULLIF(current_setting('lockd.reason', true), '');
BEGIN
    IF current_setting('lockd.history', true) = 'off' OR lockd_recorded_by_statement() THEN
        RETURN NULL;
    END IF;
    PERFORM lockd_write_batch(array_agg(lockd_history_tenant(c.tenant)),
                              array_agg(lockd_history_kind(c.tenant)), array_agg(c.resource),
                              array_agg(c.owner), array_agg(c.token), array_agg(c.event),
                              array_agg(CASE WHEN c.event = 'force-released' THEN reason END),
                              array_agg(FALSE))
    FROM (
        -- The lease a new one replaces ran out (a released one was recorded when released).
        SELECT o.tenant, o.resource, o.owner, o.fencing_token AS token, 'expired' AS event,
               0 AS side
        FROM old_rows AS o JOIN new_rows AS n USING (tenant, resource)
        WHERE ascii(o.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms
          AND (o.owner <> n.owner OR o.fencing_token <> n.fencing_token)
        UNION ALL
        SELECT n.tenant, n.resource, n.owner, n.fencing_token,
               CASE WHEN o.owner <> n.owner OR o.fencing_token <> n.fencing_token THEN 'granted'
                    -- Ended in place: by its owner or an admin when it was live.
                    WHEN n.acquired_at_ms = n.expires_at_ms THEN
                        CASE WHEN o.expires_at_ms <= lockd_write_now() THEN 'expired'
                             ELSE lockd_ending() END
                    WHEN n.acquired_at_ms <> o.acquired_at_ms THEN 're-granted'
                    ELSE 'renewed' END,
               1
        FROM old_rows AS o JOIN new_rows AS n USING (tenant, resource)
        WHERE ascii(n.owner) <> 1
          AND (((o.owner <> n.owner OR o.fencing_token <> n.fencing_token)
                AND n.acquired_at_ms <> n.expires_at_ms)
            OR (o.owner = n.owner AND o.fencing_token = n.fencing_token
                AND o.acquired_at_ms <> o.expires_at_ms
                AND (n.acquired_at_ms <> o.acquired_at_ms OR n.expires_at_ms <> o.expires_at_ms)))
        ORDER BY side, tenant, resource
    ) AS c;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lockd_history_of_lock_deletes() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
    reason TEXT := NULLIF(current_setting('lockd.reason', true), '');
BEGIN
    IF current_setting('lockd.history', true) = 'off' OR lockd_recorded_by_statement() THEN
        RETURN NULL;
    END IF;
    PERFORM lockd_write_batch(array_agg(lockd_history_tenant(c.tenant)),
                              array_agg(lockd_history_kind(c.tenant)), array_agg(c.resource),
                              array_agg(c.owner), array_agg(c.fencing_token), array_agg(c.event),
                              array_agg(CASE WHEN c.event = 'force-released' THEN reason END),
                              array_agg(FALSE))
    FROM (
        SELECT o.tenant, o.resource, o.owner, o.fencing_token,
               CASE WHEN o.expires_at_ms <= lockd_write_now() THEN 'expired'
                    ELSE lockd_ending() END AS event
        FROM old_rows AS o
        WHERE ascii(o.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms
        ORDER BY o.tenant, o.resource
    ) AS c;
    RETURN NULL;
END $$;

-- The records written so far move over, one batch each, under their ids; new batches are
-- numbered above them.
INSERT INTO history_batches (first_id, last_id, at_ms, tenants, kinds, names, owners, tokens,
                             events, reasons, shared)
SELECT id, id, at_ms, ARRAY[tenant], ARRAY[kind], ARRAY[name], ARRAY[owner],
       ARRAY[fencing_token], ARRAY[event], ARRAY[reason], ARRAY[shared]
FROM lease_history;
-- (The ids below 65,536 are batch number 0's, which is never drawn.)
SELECT setval('history_batch_numbers', drawn.id / 65536)
FROM (SELECT GREATEST((SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM history_ids),
                      (SELECT COALESCE(MAX(id), 0) FROM lease_history)) AS id) AS drawn
WHERE drawn.id >= 65536;
INSERT INTO history_names (tenant, kind, name, segment)
SELECT DISTINCT tenant, kind, name, id / 4194304 FROM lease_history;
INSERT INTO history_tenants (tenant, segment)
SELECT DISTINCT tenant, id / 4194304 FROM lease_history;
UPDATE history_indexed
SET through = (SELECT CASE WHEN is_called THEN last_value * 65536 + 65535 ELSE 65535 END
               FROM history_batch_numbers)
WHERE id = 1;

DROP TABLE lease_history;
