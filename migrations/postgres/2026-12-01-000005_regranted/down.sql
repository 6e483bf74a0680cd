ALTER TABLE distributed_locks DROP COLUMN regranted;
