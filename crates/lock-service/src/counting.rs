//! The background count of live locks, for metrics: counting reads every live lock (on an
//! index, or the whole table), so it runs now and then, never per request or per scrape.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{RepositoryError, StoreHealth};

use crate::events::{LockEvents, Trouble};

/// Counts the live locks (and reads the expired takeovers) and the live sessions every
/// `interval`, forever, and reports each count to `events` ([`LockEvents::counted`],
/// [`LockEvents::sessions_counted`]); a failed count is reported as
/// [`Trouble::CountFailed`]. Run it as a task; abort it to stop.
pub async fn run_live_lock_counter(
    health: Arc<dyn StoreHealth>,
    events: Arc<dyn LockEvents>,
    interval: Duration,
) {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let counts = async {
            let live = health.count_live().await?;
            let takeovers = health.count_expired_takeovers().await?;
            Ok::<_, RepositoryError>((live, takeovers))
        };
        match counts.await {
            Ok((live, takeovers)) => events.counted(live, takeovers),
            Err(error) => events.trouble(Trouble::CountFailed { error: &error }),
        }
        match health.count_live_sessions().await {
            Ok(live) => events.sessions_counted(live),
            Err(error) => events.trouble(Trouble::CountFailed { error: &error }),
        }
    }
}
