-- Segments of 1024 batch numbers (67,108,864 ids) instead of 64 (issue #15, W1 with history
-- >= 0.9x W1 without). W1 writes about a thousand batches a second, so a segment of 64 filled
-- sixteen times a second and the indexer wrote about as many `history_names` entries as there
-- were batches (930 a second for 960 batches, each with two index entries): half of the
-- history's rows. A segment of 1024 takes one entry per name a second. A page still reads at
-- most 2048 batch numbers (2 segments, 32 of the old ones). The entries so far become those of
-- the larger segments that hold them (exactly: a name is in a large segment when it is in one
-- of its sixteen small ones).
CREATE TABLE history_names_coarse AS
SELECT DISTINCT tenant, kind, name, segment / 16 AS segment FROM history_names;
TRUNCATE history_names;
INSERT INTO history_names (tenant, kind, name, segment)
SELECT tenant, kind, name, segment FROM history_names_coarse;
DROP TABLE history_names_coarse;

CREATE TABLE history_tenants_coarse AS
SELECT DISTINCT tenant, segment / 16 AS segment FROM history_tenants;
TRUNCATE history_tenants;
INSERT INTO history_tenants (tenant, segment)
SELECT tenant, segment FROM history_tenants_coarse;
DROP TABLE history_tenants_coarse;
