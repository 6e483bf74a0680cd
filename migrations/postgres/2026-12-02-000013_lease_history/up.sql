-- Durable history (issue #15): one row per change to a lease, written by the triggers below in
-- the statement that makes the change, so in its transaction (batched with it, no commit of its
-- own). The trigger functions are the SQL copy of the domain's `name_change`: a new lease is
-- 'granted'; the lease it replaced, unless released, 'expired'; an acquire by the live holder
-- 're-granted'; a moved end 'renewed'; a lease ended by its owner 'released' (or what the write
-- says: 'undone', 'force-released'), a deleted ended one 'expired'. A release ends a lock's
-- lease in place (acquired_at_ms = expires_at_ms), which also marks it as recorded. The row of a
-- lock's shared holders (owner starting with U+0001) records nothing: each reader's row does.
--
-- `tenant` is the tenant, also of an election (stored in `<tenant>/elections`); `at_ms` is the
-- server's clock when the row is written. Whether a deleted lease had ended is decided against
-- the clock the write decided with: `lockd.now`, which the statements that read the clock in
-- one statement and write in a later one set (`set_config(..., true)`, for the transaction),
-- else the statement's start, never later than the clock a single statement decides with.
-- `lockd.ending` and `lockd.reason` say what an ending of a live lease is, and why.
--
-- Ids come from `history_ids` in the order rows are written, which is not always the order
-- their transactions commit: a reader of the stream goes on only past ids it knows are final
-- (see the store's `history` module). `txid` is the writing transaction.
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

-- Every record up to `through` was pruned (or never committed): where a reader of the stream
-- that fell behind the retention goes on from.
CREATE TABLE history_pruned (
    id      INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    through BIGINT  NOT NULL
);
INSERT INTO history_pruned (id, through) VALUES (1, 0);

CREATE INDEX lease_history_by_name ON lease_history (tenant, kind, name, id);
CREATE INDEX lease_history_by_tenant ON lease_history (tenant, id);

-- Writes one record of `lease` (a row of any lease table) for `event`.
CREATE FUNCTION lockd_record_lease(stored_tenant TEXT, table_kind TEXT, lease_name TEXT,
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

-- The clock a write decided with (see above).
CREATE FUNCTION lockd_write_now() RETURNS BIGINT LANGUAGE sql STABLE AS $$
    SELECT COALESCE(NULLIF(current_setting('lockd.now', true), '')::BIGINT,
                    FLOOR(EXTRACT(EPOCH FROM statement_timestamp()) * 1000)::BIGINT)
$$;

-- How a live lease ended, by the write's word or else by its owner.
CREATE FUNCTION lockd_ending() RETURNS TEXT LANGUAGE sql STABLE AS $$
    SELECT COALESCE(NULLIF(current_setting('lockd.ending', true), ''), 'released')
$$;

CREATE FUNCTION lockd_history_of_lease_row() RETURNS TRIGGER LANGUAGE plpgsql AS $$
DECLARE
    table_kind TEXT := CASE WHEN TG_TABLE_NAME = 'semaphore_holders' THEN 'semaphore' ELSE 'lock' END;
    is_shared BOOLEAN := TG_TABLE_NAME = 'shared_holders';
    old_name TEXT;
    new_name TEXT;
    old_counts BOOLEAN;
    new_counts BOOLEAN;
    new_lease BOOLEAN;
BEGIN
    -- A process started with --history-retention-hours 0 records none (a setting of its sessions).
    IF current_setting('lockd.history', true) = 'off' THEN
        RETURN NULL;
    END IF;
    IF TG_OP <> 'INSERT' THEN
        -- A branch of its own for each table: PL/pgSQL reads a field only when it runs it.
        IF TG_TABLE_NAME = 'semaphore_holders' THEN
            old_name := OLD.name;
        ELSE
            old_name := OLD.resource;
        END IF;
        -- Not the marker row of shared holders, and not a lease already ended by a release.
        old_counts := ascii(OLD.owner) <> 1 AND OLD.acquired_at_ms <> OLD.expires_at_ms;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        IF TG_TABLE_NAME = 'semaphore_holders' THEN
            new_name := NEW.name;
        ELSE
            new_name := NEW.resource;
        END IF;
        new_counts := ascii(NEW.owner) <> 1;
    END IF;
    IF TG_OP = 'INSERT' THEN
        IF new_counts AND NEW.acquired_at_ms <> NEW.expires_at_ms THEN
            PERFORM lockd_record_lease(NEW.tenant, table_kind, new_name, NEW.owner,
                                       NEW.fencing_token, 'granted', is_shared);
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP = 'DELETE' THEN
        IF old_counts THEN
            PERFORM lockd_record_lease(OLD.tenant, table_kind, old_name, OLD.owner, OLD.fencing_token,
                CASE WHEN OLD.expires_at_ms <= lockd_write_now() THEN 'expired' ELSE lockd_ending() END,
                is_shared);
        END IF;
        RETURN NULL;
    END IF;
    new_lease := OLD.owner <> NEW.owner OR OLD.fencing_token <> NEW.fencing_token;
    IF new_lease THEN
        IF old_counts THEN
            PERFORM lockd_record_lease(OLD.tenant, table_kind, old_name, OLD.owner,
                                       OLD.fencing_token, 'expired', is_shared);
        END IF;
        IF new_counts AND NEW.acquired_at_ms <> NEW.expires_at_ms THEN
            PERFORM lockd_record_lease(NEW.tenant, table_kind, new_name, NEW.owner,
                                       NEW.fencing_token, 'granted', is_shared);
        END IF;
    ELSIF new_counts AND old_counts THEN
        IF NEW.acquired_at_ms = NEW.expires_at_ms THEN
            -- Ended in place: by its owner or an admin when it was live, else it had run out.
            PERFORM lockd_record_lease(NEW.tenant, table_kind, new_name, NEW.owner,
                NEW.fencing_token,
                CASE WHEN OLD.expires_at_ms <= lockd_write_now() THEN 'expired' ELSE lockd_ending() END,
                is_shared);
        ELSIF NEW.acquired_at_ms <> OLD.acquired_at_ms THEN
            PERFORM lockd_record_lease(NEW.tenant, table_kind, new_name, NEW.owner,
                                       NEW.fencing_token, 're-granted', is_shared);
        ELSIF NEW.expires_at_ms <> OLD.expires_at_ms THEN
            PERFORM lockd_record_lease(NEW.tenant, table_kind, new_name, NEW.owner,
                                       NEW.fencing_token, 'renewed', is_shared);
        END IF;
    END IF;
    RETURN NULL;
END $$;

-- The locks' table, by statement: one batch statement writes many locks' rows, and one
-- `INSERT … SELECT` of the statement's records (from its transition tables, every row an
-- `INSERT`, an `UPDATE` or a `DELETE` of it changed, its `WITH` parts together) costs far less
-- than a trigger call and an insert per row. The same rule as `lockd_history_of_lease_row`;
-- within a statement the endings come first, then the grants, each by name.
CREATE FUNCTION lockd_history_tenant(stored TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN right(stored, 10) = '/elections' THEN left(stored, -10) ELSE stored END
$$;

CREATE FUNCTION lockd_history_kind(stored TEXT) RETURNS TEXT LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN right(stored, 10) = '/elections' THEN 'election' ELSE 'lock' END
$$;

CREATE FUNCTION lockd_history_of_lock_inserts() RETURNS TRIGGER LANGUAGE plpgsql AS $$
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

CREATE FUNCTION lockd_history_of_lock_updates() RETURNS TRIGGER LANGUAGE plpgsql AS $$
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

CREATE FUNCTION lockd_history_of_lock_deletes() RETURNS TRIGGER LANGUAGE plpgsql AS $$
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

CREATE TRIGGER lease_history_inserts AFTER INSERT ON distributed_locks
REFERENCING NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION lockd_history_of_lock_inserts();
CREATE TRIGGER lease_history_updates AFTER UPDATE ON distributed_locks
REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
FOR EACH STATEMENT EXECUTE FUNCTION lockd_history_of_lock_updates();
CREATE TRIGGER lease_history_deletes AFTER DELETE ON distributed_locks
REFERENCING OLD TABLE AS old_rows
FOR EACH STATEMENT EXECUTE FUNCTION lockd_history_of_lock_deletes();
CREATE TRIGGER lease_history AFTER INSERT OR UPDATE OR DELETE ON semaphore_holders
FOR EACH ROW EXECUTE FUNCTION lockd_history_of_lease_row();
CREATE TRIGGER lease_history AFTER INSERT OR UPDATE OR DELETE ON shared_holders
FOR EACH ROW EXECUTE FUNCTION lockd_history_of_lease_row();
