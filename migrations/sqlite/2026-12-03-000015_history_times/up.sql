-- No index on the batches' times (issue #15, W1 with history >= 0.9x W1 without): with one
-- batch per commit, `history_batches_at` wrote a page of its own with nearly every commit (0.63
-- of the 7.1 pages a W1 commit wrote to the WAL). The writer now keeps `at_ms` from decreasing
-- with the ids (a batch written after the clock stepped back takes the last batch's time), so
-- where a time starts is found by a binary search over the primary key (the store's
-- `history/batches/times.rs`). The batches so far are made to agree: each takes the latest
-- time of those before it.
UPDATE history_batches SET at_ms = w.latest
FROM (SELECT first_id, MAX(at_ms) OVER (ORDER BY first_id) AS latest FROM history_batches) AS w
WHERE history_batches.first_id = w.first_id AND history_batches.at_ms < w.latest;
DROP INDEX history_batches_at;
