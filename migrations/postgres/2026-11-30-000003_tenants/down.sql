-- Only possible while every lock belongs to the default tenant.
DELETE FROM distributed_locks WHERE tenant <> 'default';
ALTER TABLE distributed_locks DROP CONSTRAINT distributed_locks_pkey;
ALTER TABLE distributed_locks DROP COLUMN tenant;
ALTER TABLE distributed_locks ADD PRIMARY KEY (resource);
