-- Whether the transaction `writer` (a row version's `xmax`: the transaction that is updating,
-- deleting or locking it) had not completed when the calling statement's snapshot was taken:
-- it was in progress then, or started after. The row version such a statement reads is then
-- about to be replaced by a write it cannot see yet. A lock read uses this to tell an ended
-- lease that is really over from one that an in-flight renew, decided before the end and
-- committing after it, is about to extend (see `postgres.rs`, `ended_in_flight`).
--
-- `xmax` is a 32-bit transaction id; the snapshot's ids are 64-bit (epoch and id). The id is
-- placed in the epoch that puts it within 2^31 of the snapshot's `xmax`, where every id still
-- in use lies. Zero (no writer) is never in flight.
CREATE FUNCTION lockd_written_in_flight(writer xid) RETURNS boolean
LANGUAGE sql STABLE STRICT PARALLEL SAFE AS $$
  SELECT writer <> '0'::xid AND NOT pg_visible_in_snapshot(
    GREATEST(s.next + CASE WHEN s.ahead < 2147483648 THEN s.ahead ELSE s.ahead - 4294967296 END,
             3)::text::xid8,
    s.snap)
  FROM (SELECT snap, pg_snapshot_xmax(snap)::text::bigint AS next,
               ((writer::text::bigint - pg_snapshot_xmax(snap)::text::bigint % 4294967296)
                % 4294967296 + 4294967296) % 4294967296 AS ahead
        FROM pg_current_snapshot() AS snap) AS s
$$;
