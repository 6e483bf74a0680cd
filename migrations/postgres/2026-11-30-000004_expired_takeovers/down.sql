DROP TRIGGER distributed_locks_count_expired_takeover ON distributed_locks;
DROP FUNCTION count_expired_takeover();
DROP SEQUENCE expired_takeovers;
