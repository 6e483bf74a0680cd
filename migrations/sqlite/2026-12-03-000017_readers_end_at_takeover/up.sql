-- A lock's readers that ran out end when an exclusive grant takes over the row that stands for
-- them (issue #15): their rows go in the same transaction, before the grant is written, so the
-- history records their expiry first (the capture's delete triggers), then the grant, instead of
-- a sweep recording it a minute after the new holder's grant. The row is taken over only once
-- every reader has run out; the grant's acquired_at_ms is the writer's clock.
CREATE TRIGGER readers_end_at_takeover BEFORE UPDATE OF owner ON distributed_locks
WHEN unicode(OLD.owner) = 1 AND unicode(NEW.owner) <> 1
BEGIN
    DELETE FROM shared_holders
    WHERE tenant = OLD.tenant AND resource = OLD.resource AND expires_at_ms <= NEW.acquired_at_ms;
END;
