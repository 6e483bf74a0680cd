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
//! Every acquire, release and renew runs as [`writes::WRITE_BATCH`]: the three writes over
//! arrays, for many requests at once (see `writer::postgres_batch`) or for one. The rule of each
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

pub(crate) mod reads;
pub(crate) mod writes;

/// How often a release or renew re-runs after its conditional write matched nothing but the
/// caller's own live lock appeared (it was granted to the caller concurrently).
pub(crate) const MAX_ATTEMPTS: usize = 8;

/// The caller's own lock kept appearing and disappearing under a release or renew.
#[derive(Debug, thiserror::Error)]
#[error("the lock kept changing during the request; retry")]
pub(crate) struct KeptChanging;
