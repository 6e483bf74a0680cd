DROP SEQUENCE fencing_tokens;
DROP TABLE distributed_locks;
