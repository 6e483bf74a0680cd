-- Back to segments of 64 batch numbers (migration 15): the entries of the batches indexed so
-- far are written again from the batches themselves, a record's segment by its own id.
CREATE TABLE history_names_fine AS
SELECT DISTINCT r.tenant, r.kind, r.name, (b.first_id + r.place - 1) / 4194304 AS segment
FROM history_batches AS b, history_indexed AS i,
     unnest(b.tenants, b.kinds, b.names) WITH ORDINALITY AS r(tenant, kind, name, place)
WHERE i.id = 1 AND b.first_id <= i.through;
TRUNCATE history_names;
INSERT INTO history_names (tenant, kind, name, segment)
SELECT tenant, kind, name, segment FROM history_names_fine;
DROP TABLE history_names_fine;

CREATE TABLE history_tenants_fine AS
SELECT DISTINCT r.tenant, (b.first_id + r.place - 1) / 4194304 AS segment
FROM history_batches AS b, history_indexed AS i,
     unnest(b.tenants) WITH ORDINALITY AS r(tenant, place)
WHERE i.id = 1 AND b.first_id <= i.through;
TRUNCATE history_tenants;
INSERT INTO history_tenants (tenant, segment)
SELECT tenant, segment FROM history_tenants_fine;
DROP TABLE history_tenants_fine;
