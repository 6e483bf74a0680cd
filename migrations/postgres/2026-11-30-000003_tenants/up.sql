-- Locks belong to tenants: the key becomes (tenant, resource). Existing locks move to the
-- `default` tenant (the one tenant of a server without API keys).
ALTER TABLE distributed_locks ADD COLUMN tenant TEXT COLLATE "C" NOT NULL DEFAULT 'default';
ALTER TABLE distributed_locks ALTER COLUMN tenant DROP DEFAULT;
ALTER TABLE distributed_locks DROP CONSTRAINT distributed_locks_pkey;
ALTER TABLE distributed_locks ADD PRIMARY KEY (tenant, resource);
