//! Fencing tokens across a failover (migration 17): every new PostgreSQL connection enters the
//! server's current timeline before lockd uses it. The first to reach a new timeline (a standby
//! promoted) moves `fencing_tokens` forward by 10^9 and the history's batch numbers by 10^6, so
//! that no token or history id the old primary issued in transactions the standby never received
//! is issued again.

use diesel::pg::PgConnection;
use diesel::sql_types::BigInt;
use diesel::{QueryableByName, RunQueryDsl};

use crate::db_connection::ConnectError;

/// How far the first connection on a new timeline moves `fencing_tokens`: far more tokens than
/// any replication lag can lose (at 20,000 grants a second, 13 hours of them).
pub const TOKEN_MARGIN: i64 = 1_000_000_000;
/// How far it moves `history_batch_numbers` (each batch number stands for 65,536 history ids).
pub const HISTORY_BATCH_MARGIN: i64 = 1_000_000;

#[derive(QueryableByName)]
struct Entered {
    #[diesel(sql_type = BigInt)]
    timeline: i64,
}

/// Enters the server's timeline on `conn`. A server in recovery (a standby) is refused: lockd
/// writes only on a primary, and a connection kept open across the standby's promotion would
/// write on the new timeline without having entered it.
///
/// # Errors
/// [`ConnectError::Postgres`] for a standby; [`ConnectError::Setup`] if the statement fails.
pub(crate) fn enter(conn: &mut PgConnection) -> Result<(), ConnectError> {
    let entered: Entered = diesel::sql_query("SELECT lockd_enter_timeline($1, $2) AS timeline")
        .bind::<BigInt, _>(TOKEN_MARGIN)
        .bind::<BigInt, _>(HISTORY_BATCH_MARGIN)
        .get_result(conn)?;
    match entered.timeline {
        -1 => Err(ConnectError::Postgres(
            "the server is a standby (in recovery): lockd needs the primary; name every host \
             with target_session_attrs=read-write to follow a failover"
                .to_owned(),
        )),
        0 => Ok(()),
        timeline => {
            tracing::warn!(
                timeline,
                token_margin = TOKEN_MARGIN,
                "first lockd connection on a new PostgreSQL timeline (a standby was promoted): \
                 fencing tokens moved forward so none the old primary issued is issued again"
            );
            Ok(())
        }
    }
}
