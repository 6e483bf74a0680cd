-- History by batch (issue #15, W1 with history >= 0.9x W1 without): the records of one
-- transaction of the writer are one row, a JSON array, written once before COMMIT, instead of a
-- row and two index entries per record written by a trigger per change. Per record that was
-- about 14 us of the writer's time (the per-name index alone dirtied some 60 pages a commit);
-- now the writer's connection collects the records (TEMP triggers calling a function of its
-- own, see `history/capture.rs`) and writes them here.
--
-- A record's id is `first_id` plus its place in `records` (ids are dense, in commit order, and
-- never reused: `history_context.last_id` keeps the last one drawn, pruned or not; that row is
-- written by every transaction anyway, for its clock). Each element is
-- `[tenant, kind, name, owner, fencing_token, event, reason, shared]`; `at_ms` is the
-- transaction's clock.
CREATE TABLE history_batches (
    first_id INTEGER NOT NULL PRIMARY KEY CHECK (first_id > 0),
    last_id  INTEGER NOT NULL CHECK (last_id >= first_id),
    at_ms    INTEGER NOT NULL,
    records  TEXT    NOT NULL
);

ALTER TABLE history_context ADD COLUMN last_id INTEGER NOT NULL DEFAULT 0 CHECK (last_id >= 0);

-- Where to look for a name's, or a tenant's, records: the segments (ids 4096 * segment to
-- 4096 * segment + 4095) holding at least one. Written once a name and segment, so a busy name
-- costs one index entry per 4096 records rather than one per record.
CREATE TABLE history_names (
    tenant  TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, kind, name, segment)
) WITHOUT ROWID;
CREATE INDEX history_names_by_segment ON history_names (segment);

CREATE TABLE history_tenants (
    tenant  TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, segment)
) WITHOUT ROWID;
CREATE INDEX history_tenants_by_segment ON history_tenants (segment);
-- Where the records since a time start (`since`, pruning): one entry per transaction.
CREATE INDEX history_batches_at ON history_batches (at_ms);

-- The records written so far move over, one batch each, under their ids.
INSERT INTO history_batches (first_id, last_id, at_ms, records)
SELECT id, id, at_ms,
       json_array(json_array(tenant, kind, name, owner, fencing_token, event, reason, shared))
FROM lease_history;
UPDATE history_context
SET last_id = MAX(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'lease_history'), 0),
                  COALESCE((SELECT MAX(id) FROM lease_history), 0))
WHERE id = 1;
INSERT OR IGNORE INTO history_names (tenant, kind, name, segment)
SELECT tenant, kind, name, id / 4096 FROM lease_history;
INSERT OR IGNORE INTO history_tenants (tenant, segment)
SELECT tenant, id / 4096 FROM lease_history;

DROP TRIGGER lease_history_reader_deleted;
DROP TRIGGER lease_history_reader_updated;
DROP TRIGGER lease_history_reader_inserted;
DROP TRIGGER lease_history_permit_deleted;
DROP TRIGGER lease_history_permit_updated;
DROP TRIGGER lease_history_permit_inserted;
DROP TRIGGER lease_history_lock_deleted;
DROP TRIGGER lease_history_lock_updated;
DROP TRIGGER lease_history_lock_inserted;
DROP TABLE lease_history;
