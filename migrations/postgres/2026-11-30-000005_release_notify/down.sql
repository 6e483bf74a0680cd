DROP TRIGGER distributed_locks_notify_freed ON distributed_locks;
DROP FUNCTION lockd_notify_freed();
