DO $$
DECLARE
    leases TEXT;
BEGIN
    FOREACH leases IN ARRAY ARRAY['distributed_locks', 'semaphore_holders', 'shared_holders'] LOOP
        EXECUTE format('DROP TRIGGER expired_hold_updated ON %I', leases);
        EXECUTE format('DROP TRIGGER expired_hold_deleted ON %I', leases);
    END LOOP;
END $$;
DROP FUNCTION lockd_note_expired_hold();
DROP TABLE expired_holds;
