-- Segments of 16,384 ids instead of 4096 (issue #15, W1 with history >= 0.9x W1 without): a
-- name's entries are kept together in `history_names`, so a new segment's entries, written
-- once for every name that changes in it, land on as many different pages as there are names;
-- with 4096 ids a segment that was some 600 scattered pages a second in W1 (64 names, a new
-- segment every tenth of a second), about a tenth of its throughput. Four times fewer new
-- segments; a page reads at most 8 of them (131,072 records, as before). The entries so far
-- become those of the larger segments that hold them.
CREATE TABLE history_names_16k (
    tenant  TEXT    NOT NULL,
    kind    TEXT    NOT NULL,
    name    TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, kind, name, segment)
) WITHOUT ROWID;
INSERT OR IGNORE INTO history_names_16k (tenant, kind, name, segment)
SELECT tenant, kind, name, segment / 4 FROM history_names;
DROP TABLE history_names;
ALTER TABLE history_names_16k RENAME TO history_names;
CREATE INDEX history_names_by_segment ON history_names (segment);

CREATE TABLE history_tenants_16k (
    tenant  TEXT    NOT NULL,
    segment INTEGER NOT NULL,
    PRIMARY KEY (tenant, segment)
) WITHOUT ROWID;
INSERT OR IGNORE INTO history_tenants_16k (tenant, segment)
SELECT tenant, segment / 4 FROM history_tenants;
DROP TABLE history_tenants;
ALTER TABLE history_tenants_16k RENAME TO history_tenants;
CREATE INDEX history_tenants_by_segment ON history_tenants (segment);
