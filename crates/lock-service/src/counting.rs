//! The background count of live locks, for metrics: counting reads every live lock (on an
//! index, or the whole table), so it runs now and then, never per request or per scrape.

use std::sync::Arc;
use std::time::Duration;

use lock_domain::{RepositoryError, StoreHealth};

use crate::events::{LockEvents, Trouble};
use crate::{HoldEnd, Primitive};

/// Counts the live locks (and reads the expired takeovers) and the live sessions every
/// `interval`, forever, and reports each count to `events` ([`LockEvents::counted`],
/// [`LockEvents::sessions_counted`]); takes the holds that ran out since
/// ([`StoreHealth::take_expired_holds`]) and reports each ([`LockEvents::hold_ended`],
/// [`HoldEnd::Expired`]). A failed count or take is reported as [`Trouble::CountFailed`]. Run it
/// as a task; abort it to stop.
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
        if let Err(error) = report_expired_holds(&*health, &*events).await {
            events.trouble(Trouble::CountFailed { error: &error });
        }
    }
}

/// How many holds that ran out one take hands over at most.
const EXPIRED_HOLDS_PER_TAKE: u32 = 10_000;
/// How many takes one round makes at most: a sweep that ended more leases than these is
/// reported over the next rounds, and a round stays short.
const EXPIRED_HOLD_TAKES_PER_ROUND: usize = 10;

/// Takes the holds that ran out and reports each, until the store has no more or the round has
/// taken its share.
async fn report_expired_holds(
    health: &dyn StoreHealth,
    events: &dyn LockEvents,
) -> Result<(), RepositoryError> {
    for _ in 0..EXPIRED_HOLD_TAKES_PER_ROUND {
        let holds = health.take_expired_holds(EXPIRED_HOLDS_PER_TAKE).await?;
        for hold in &holds {
            events.hold_ended(
                Primitive::of_lease(hold.kind, hold.shared),
                HoldEnd::Expired,
                hold.held,
            );
        }
        if holds.len() < EXPIRED_HOLDS_PER_TAKE as usize {
            break;
        }
    }
    Ok(())
}
