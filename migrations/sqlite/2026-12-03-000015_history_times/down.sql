-- The index on the batches' times again (migration 12); the times stay as the writer clamped
-- them.
CREATE INDEX history_batches_at ON history_batches (at_ms);
