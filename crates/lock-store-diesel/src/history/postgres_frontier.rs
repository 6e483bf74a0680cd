//! PostgreSQL: which history record ids are final, for the event stream (see
//! [`PostgresFrontier`]).

use std::sync::Mutex;

use diesel::pg::PgConnection;
use diesel::sql_types::BigInt;
use diesel::{QueryResult, QueryableByName, RunQueryDsl};
use lock_domain::HistoryRecord;

use super::batches::POSTGRES_BATCH_IDS;
use super::pruned_through_postgres;
use crate::prepared::portable_statement;

/// PostgreSQL: the last id of the last batch number drawn, and the first transaction id not yet
/// assigned and the oldest one still running, of one snapshot.
const POSTGRES_WATERMARK: &str = "\
SELECT (SELECT CASE WHEN is_called THEN last_value * 65536 + 65535 ELSE 0 END
        FROM history_batch_numbers) AS drawn,
       pg_snapshot_xmax(pg_current_snapshot())::text::BIGINT AS xmax,
       pg_snapshot_xmin(pg_current_snapshot())::text::BIGINT AS xmin";

#[derive(Debug, QueryableByName)]
struct WatermarkRow {
    #[diesel(sql_type = BigInt)]
    drawn: i64,
    #[diesel(sql_type = BigInt)]
    xmax: i64,
    #[diesel(sql_type = BigInt)]
    xmin: i64,
}

/// PostgreSQL: which record ids are final. An id is final once it is visible and every smaller
/// one is visible or can never be (its transaction rolled back). Ids come in batches (see
/// `batches`): a batch's records are visible together, and its number follows the one before.
/// So a reader goes on through a batch and to the next number; at a gap it waits until every
/// transaction that could still write an id below it has ended: ids up to `drawn` of a
/// watermark are final once the oldest running transaction is younger than the watermark's
/// `xmax` (every transaction that drew one of them had its id before: it had written a lease
/// row first).
#[derive(Debug, Default)]
pub(crate) struct PostgresFrontier {
    state: Mutex<FrontierState>,
}

#[derive(Debug, Default)]
struct FrontierState {
    /// Every id up to here is final.
    settled: i64,
    /// `(drawn, xmax)` of a watermark not yet settled.
    pending: Option<(i64, i64)>,
}

impl PostgresFrontier {
    /// Reads a watermark and returns the largest id known final (settling an older watermark):
    /// at least every id pruned.
    pub(crate) fn advance(&self, conn: &mut PgConnection) -> QueryResult<i64> {
        let pruned = pruned_through_postgres(conn)?;
        let mark: WatermarkRow =
            portable_statement!(POSTGRES_WATERMARK, vec![]).get_result(conn)?;
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((drawn, xmax)) = state.pending {
            if mark.xmin >= xmax {
                state.settled = state.settled.max(drawn);
                state.pending = None;
            }
        }
        if state.pending.is_none() {
            state.pending = Some((mark.drawn, mark.xmax));
        }
        state.settled = state.settled.max(pruned);
        Ok(state.settled)
    }

    /// Of `rows` read after `after`, oldest first, those that are final: ids up to `settled`,
    /// then the rest of the last final id's batch and the batches numbered on from it.
    pub(crate) fn keep_final(
        after: i64,
        settled: i64,
        rows: Vec<HistoryRecord>,
    ) -> Vec<HistoryRecord> {
        let mut last_batch = after.max(settled) / POSTGRES_BATCH_IDS;
        rows.into_iter()
            .take_while(|record| {
                let id = record.id.value();
                let batch = id / POSTGRES_BATCH_IDS;
                if id <= settled || batch == last_batch {
                    true
                } else if batch == last_batch + 1 {
                    last_batch = batch;
                    true
                } else {
                    false
                }
            })
            .collect()
    }
}
