//! The lock statements on PostgreSQL. The database server's clock is the clock, so that instances
//! whose own clocks disagree still agree on who holds a lock: every "now" below is the server's
//! clock in epoch milliseconds, and the application's clock is not used. Reads use
//! `statement_timestamp()`; writes read `clock_timestamp()` after they hold the row's lock (see
//! [`clock_ms`]), so that they decide against the row as it is when they reach it.
//!
//! Fencing tokens come from the `fencing_tokens` sequence. A release does not delete the row but
//! ends its lease (`expires_at_ms = now`), so every later grant of the resource goes through the
//! `DO UPDATE` branch and draws its token while it holds the row lock: grants of one resource are
//! serialized by that lock and their tokens are drawn in the same order. Only the first grant of
//! a resource (or the first after the sweeper deleted its row) takes the token drawn in `VALUES`
//! before the row exists; the sweeper deletes only rows expired for longer than its grace, far
//! longer than `statement_timeout`, so no statement can still hold a token drawn before the last
//! grant of a row it is about to recreate.
//!
//! Every acquire, release and renew runs as [`writes::WRITE_BATCH`] (or one of its smaller
//! variants, [`writes::WRITE_BATCHES`]): the three writes over arrays, for many requests at once
//! (see `writer::postgres_batch`) or for one. The rule of each
//! (who may acquire, release or renew) is written once, in the fragments the statements share.
//! The reads ([`reads`]) never answer from a row that a write still in flight may make live
//! again.

/// The database server's clock now, in epoch milliseconds, read when the expression is
/// evaluated (`clock_timestamp()`), not when the statement started: a decision about a row must
/// use a "now" read after that row's lock was taken. A statement that waited for a row lock while
/// another instance released the lease would otherwise compare the released row (which ends at
/// the release's "now") with an earlier "now" of its own, find it live, and renew it or re-grant
/// its old fencing token.
macro_rules! clock_ms {
    () => {
        "FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000)::BIGINT"
    };
}

// The lock rule, written once for every statement that decides it (the domain's
// `decide_acquire`, `decide_release` and `decide_renew` are its only other copy).

/// The `DO UPDATE` of an acquire in [`writes::WRITE_BATCH`]. It takes over the row only when the
/// same owner holds it, or the row's lease has ended and its lock-delay is over (a release sets
/// the delay to 0: only a lease that ran out delays anyone; the domain's `delayed_until` is the
/// rule).
/// `ON CONFLICT DO UPDATE` locks the conflicting row, waiting for a concurrent writer, and
/// evaluates its `WHERE` and `SET` on the row's newest version after that, so both read the
/// clock then. The `SET`
/// reads it once for all its columns (`c.ms`); the `WHERE` reads it just before, which is never
/// later: a lease the `WHERE` finds expired is expired for the `SET` too.
macro_rules! acquire_on_conflict {
    () => {
        concat!(
            "ON CONFLICT (tenant, resource) DO UPDATE SET
    (owner, acquired_at_ms, expires_at_ms, fencing_token, regranted, value, lock_delay_ms,
     expiry_recorded) = (
        SELECT EXCLUDED.owner, c.ms,
               CASE WHEN starts_with(EXCLUDED.owner, chr(2)) THEN EXCLUDED.expires_at_ms
                    ELSE c.ms + (EXCLUDED.expires_at_ms - EXCLUDED.acquired_at_ms) END,
               CASE WHEN l.expires_at_ms > c.ms THEN l.fencing_token
                    ELSE nextval('fencing_tokens') END,
               l.expires_at_ms > c.ms,
               CASE WHEN l.expires_at_ms > c.ms THEN COALESCE(EXCLUDED.value, l.value)
                    ELSE EXCLUDED.value END,
               EXCLUDED.lock_delay_ms, FALSE
        FROM (SELECT ",
            clock_ms!(),
            " AS ms) AS c)
WHERE l.expires_at_ms + l.lock_delay_ms <= ",
            clock_ms!(),
            " OR l.owner = EXCLUDED.owner"
        )
    };
}

/// The rule of a release and a renew: the row's lease is live at `n.ms` (read after the row
/// lock, see [`lock_then_clock`]) and `$owner` holds it. Shared by [`writes::RELEASE`],
/// [`writes::RENEW`] and [`writes::WRITE_BATCH`].
macro_rules! live_and_held_by {
    ($owner:literal) => {
        concat!("l.owner = ", $owner, " AND l.expires_at_ms > n.ms")
    };
}

/// How a release ends a lease: at `n.ms`, with `acquired_at_ms = expires_at_ms` marking it as
/// released (see [`writes::RELEASE`]), and no lock-delay: a released lease's place is free at
/// once.
macro_rules! end_lease {
    () => {
        "SET acquired_at_ms = n.ms, expires_at_ms = n.ms, lock_delay_ms = 0"
    };
}

/// Locks the rows of `$keys` (waiting for a concurrent writer), then reads the clock (`n.ms`):
/// the head of [`writes::RELEASE`], [`writes::RENEW`], `UNDO_GRANT` and [`writes::WRITE_BATCH`].
/// `n` counts the locked rows, so it is evaluated only after `k` has taken every lock; the
/// `UPDATE` then re-checks its `WHERE` on the row's newest version (READ COMMITTED) against
/// that later "now". `k` keeps each locked row's lease as it was, for the batch's history
/// records ([`batch_records`]).
macro_rules! lock_then_clock {
    ($keys:expr) => {
        lock_then_clock!("", $keys)
    };
    // `$before`: common table expressions (each followed by a comma) that run before `k`, for
    // `k` names them in `$keys` (the sessions of `writes::WRITE_BATCH`).
    ($before:expr, $keys:expr) => {
        concat!(
            "WITH ",
            $before,
            "k AS MATERIALIZED (
    SELECT d.tenant, d.resource, d.owner, d.fencing_token, d.acquired_at_ms, d.expires_at_ms
    FROM distributed_locks AS d ",
            $keys,
            "
    ORDER BY d.tenant COLLATE \"C\", d.resource COLLATE \"C\" FOR UPDATE OF d),
n AS MATERIALIZED (SELECT ",
            clock_ms!(),
            " AS ms FROM (SELECT count(*) FROM k) AS locked)
"
        )
    };
}

/// `$text` in the variants of [`writes::WRITE_BATCH`] that have the part (`yes`); `$otherwise`, or
/// nothing, in those that leave it out (`no`).
macro_rules! part {
    (yes, $text:expr $(, $otherwise:expr)?) => {
        $text
    };
    (no, $text:expr) => {
        ""
    };
    (no, $text:expr, $otherwise:expr) => {
        $otherwise
    };
}

#[macro_use]
mod batch_records;
pub(crate) mod reads;
pub(crate) mod timeline;
pub(crate) mod writes;

/// How often a release or renew re-runs after its conditional write matched nothing but the
/// caller's own live lock appeared (it was granted to the caller concurrently).
pub(crate) const MAX_ATTEMPTS: usize = 8;

/// The caller's own lock kept appearing and disappearing under a release or renew.
#[derive(Debug, thiserror::Error)]
#[error("the lock kept changing during the request; retry")]
pub(crate) struct KeptChanging;
