-- Back to a row per record (migration 13): the records move back under their ids, and
-- `history_ids` goes on past every id drawn, batch or not.
CREATE SEQUENCE history_ids AS BIGINT MINVALUE 1 START WITH 1;

CREATE TABLE lease_history (
    id            BIGINT NOT NULL DEFAULT nextval('history_ids') PRIMARY KEY,
    tenant        TEXT   COLLATE "C" NOT NULL,
    kind          TEXT   NOT NULL CHECK (kind IN ('lock', 'semaphore', 'election')),
    name          TEXT   COLLATE "C" NOT NULL,
    owner         TEXT   COLLATE "C" NOT NULL,
    fencing_token BIGINT NOT NULL,
    event         TEXT   NOT NULL CHECK (event IN ('granted', 're-granted', 'renewed', 'released',
                                                   'expired', 'force-released', 'undone')),
    at_ms         BIGINT NOT NULL,
    reason        TEXT,
    shared        BOOLEAN NOT NULL DEFAULT FALSE
);
ALTER SEQUENCE history_ids OWNED BY lease_history.id;
CREATE INDEX lease_history_by_name ON lease_history (tenant, kind, name, id);
CREATE INDEX lease_history_by_tenant ON lease_history (tenant, id);

INSERT INTO lease_history (id, tenant, kind, name, owner, fencing_token, event, at_ms, reason,
                           shared)
SELECT b.first_id + r.place - 1, r.tenant, r.kind, r.name, r.owner, r.token, r.event, b.at_ms,
       r.reason, r.shared
FROM history_batches AS b,
     unnest(b.tenants, b.kinds, b.names, b.owners, b.tokens, b.events, b.reasons, b.shared)
     WITH ORDINALITY AS r(tenant, kind, name, owner, token, event, reason, shared, place);
SELECT setval('history_ids', drawn.id)
FROM (SELECT GREATEST((SELECT COALESCE(MAX(last_id), 0) FROM history_batches),
                      (SELECT CASE WHEN is_called THEN last_value * 65536 + 65535 ELSE 0 END
                       FROM history_batch_numbers)) AS id) AS drawn
WHERE drawn.id > 0;

CREATE OR REPLACE FUNCTION lockd_record_lease(stored_tenant TEXT, table_kind TEXT, lease_name TEXT,
                                   lease_owner TEXT, token BIGINT, event TEXT, is_shared BOOLEAN)
RETURNS VOID LANGUAGE plpgsql AS $$
DECLARE
    election BOOLEAN := table_kind = 'lock' AND right(stored_tenant, 10) = '/elections';
BEGIN
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason, shared)
    VALUES (CASE WHEN election THEN left(stored_tenant, -10) ELSE stored_tenant END,
            CASE WHEN election THEN 'election' ELSE table_kind END,
            lease_name, lease_owner, token, event,
            FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT,
            CASE WHEN event = 'force-released'
                 THEN NULLIF(current_setting('lockd.reason', true), '') END,
            is_shared);
END $$;

CREATE OR REPLACE FUNCTION lockd_history_of_lock_inserts() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('lockd.history', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms)
    SELECT lockd_history_tenant(n.tenant), lockd_history_kind(n.tenant), n.resource, n.owner,
           n.fencing_token, 'granted', FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT
    FROM new_rows AS n
    WHERE ascii(n.owner) <> 1 AND n.acquired_at_ms <> n.expires_at_ms
    ORDER BY n.tenant, n.resource;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lockd_history_of_lock_updates() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('lockd.history', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason)
    SELECT lockd_history_tenant(c.tenant), lockd_history_kind(c.tenant), c.resource, c.owner,
           c.token, c.event, FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT,
           CASE WHEN c.event = 'force-released'
                THEN NULLIF(current_setting('lockd.reason', true), '') END
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
    ) AS c
    ORDER BY c.side, c.tenant, c.resource;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION lockd_history_of_lock_deletes() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    IF current_setting('lockd.history', true) = 'off' THEN
        RETURN NULL;
    END IF;
    INSERT INTO lease_history (tenant, kind, name, owner, fencing_token, event, at_ms, reason)
    SELECT lockd_history_tenant(c.tenant), lockd_history_kind(c.tenant), c.resource, c.owner,
           c.fencing_token, c.event, FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT,
           CASE WHEN c.event = 'force-released'
                THEN NULLIF(current_setting('lockd.reason', true), '') END
    FROM (
        SELECT o.tenant, o.resource, o.owner, o.fencing_token,
               CASE WHEN o.expires_at_ms <= lockd_write_now() THEN 'expired'
                    ELSE lockd_ending() END AS event
        FROM old_rows AS o
        WHERE ascii(o.owner) <> 1 AND o.acquired_at_ms <> o.expires_at_ms
    ) AS c
    ORDER BY c.tenant, c.resource;
    RETURN NULL;
END $$;

DROP FUNCTION lockd_recorded_by_statement();
DROP FUNCTION lockd_statement_mark();
DROP FUNCTION lockd_write_batch(TEXT[], TEXT[], TEXT[], TEXT[], BIGINT[], TEXT[], TEXT[],
                                BOOLEAN[]);
DROP TABLE history_indexed;
DROP TABLE history_tenants;
DROP TABLE history_names;
DROP TABLE history_batches;
DROP SEQUENCE history_batch_numbers;
