-- A lock's readers that ran out end when an exclusive grant takes over the row that stands for
-- them (issue #15): their rows go in the same statement, before the grant's row is written, so
-- their expiries are recorded (by the readers' row trigger, a batch drawn before the grant's)
-- ahead of the grant, instead of by a sweep a minute after the new holder's grant. The row is
-- taken over only once every reader has run out; the grant's acquired_at_ms is the clock its
-- statement decided with. The trigger's WHEN keeps every other update from calling it.
CREATE FUNCTION lockd_readers_end_at_takeover() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM shared_holders
    WHERE tenant = OLD.tenant AND resource = OLD.resource AND expires_at_ms <= NEW.acquired_at_ms;
    RETURN NEW;
END $$;

CREATE TRIGGER readers_end_at_takeover BEFORE UPDATE ON distributed_locks
FOR EACH ROW WHEN (ascii(OLD.owner) = 1 AND ascii(NEW.owner) <> 1)
EXECUTE FUNCTION lockd_readers_end_at_takeover();
