-- Back to segments of 4096 ids: each larger segment's entry becomes the four smaller ones it
-- spans (a segment listed that holds none of the name's records is read and yields nothing).
CREATE TABLE history_names_4k (
    tenant  TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, kind, name, segment)
) WITHOUT ROWID;
INSERT OR IGNORE INTO history_names_4k (tenant, kind, name, segment)
SELECT n.tenant, n.kind, n.name, n.segment * 4 + q.k
FROM history_names AS n, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) AS q;
DROP TABLE history_names;
ALTER TABLE history_names_4k RENAME TO history_names;
CREATE INDEX history_names_by_segment ON history_names (segment);

CREATE TABLE history_tenants_4k (
    tenant  TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, segment)
) WITHOUT ROWID;
INSERT OR IGNORE INTO history_tenants_4k (tenant, segment)
SELECT t.tenant, t.segment * 4 + q.k
FROM history_tenants AS t, (SELECT 0 AS k UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3) AS q;
DROP TABLE history_tenants;
ALTER TABLE history_tenants_4k RENAME TO history_tenants;
CREATE INDEX history_tenants_by_segment ON history_tenants (segment);
