DROP TRIGGER readers_end_at_takeover;
