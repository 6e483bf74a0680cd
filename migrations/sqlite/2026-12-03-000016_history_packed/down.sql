-- Back to batches of JSON text (migration 12), for the code before migration 16: the packed
-- ones are unpacked (by `lockd_records`, which lockd's connections have).
UPDATE history_batches SET records = lockd_records(records) WHERE typeof(records) = 'blob';
