//! The subscription to the store's hints of freed locks, which wakes the queues they name.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use lock_domain::{Freed, FreedHints};

use super::{Shared, HINTS_LIVE, HINTS_NONE, HINTS_PENDING, RESUBSCRIBE_DELAY};
use crate::events::Trouble;

/// Subscribes to the store's hints and wakes the queues they name, for as long as the
/// `Waiting` lives; resubscribes after a failure. Tells the subscription whether hints are
/// wanted, that is whether a request waits in this process (`Presence`): a store may look for
/// them only then (SQLite's writer does).
pub(super) async fn listen_for_hints(shared: Weak<Shared>, source: Arc<dyn FreedHints>) {
    let Some(presence) = shared.upgrade().map(|alive| Arc::clone(&alive.presence)) else {
        return;
    };
    loop {
        match source.subscribe_freed().await {
            Ok(None) => {
                if let Some(shared) = shared.upgrade() {
                    shared.hints.store(HINTS_NONE, Ordering::Release);
                }
                return;
            }
            Ok(Some(mut hints)) => {
                {
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    shared.hints.store(HINTS_LIVE, Ordering::Release);
                    // Releases made before the subscription took effect were not hinted.
                    shared.anything_may_be_free();
                }
                let mut wanted = false;
                loop {
                    let anyone = presence.count() > 0;
                    if anyone != wanted {
                        wanted = anyone;
                        hints.wanted(wanted);
                    }
                    // Hints are taken whether wanted or not (a PostgreSQL listener that is not
                    // read stops reading its connection).
                    let hint = tokio::select! {
                        hint = hints.next() => Some(hint),
                        () = presence.until(!wanted) => None,
                    };
                    let Some(hint) = hint else {
                        if shared.strong_count() == 0 {
                            return;
                        }
                        continue;
                    };
                    let Some(hint) = hint else {
                        break;
                    };
                    let Some(shared) = shared.upgrade() else {
                        return;
                    };
                    match hint {
                        Freed::Lock { tenant, resource } => shared.wake(&(tenant, resource), true),
                        Freed::Permits { tenant, name } => {
                            shared.permits_freed(Some((&tenant, &name)));
                        }
                        Freed::Unknown => shared.anything_may_be_free(),
                    }
                }
                if let Some(shared) = shared.upgrade() {
                    shared.events.trouble(Trouble::HintsLost { error: None });
                }
            }
            Err(error) => {
                if let Some(shared) = shared.upgrade() {
                    shared.events.trouble(Trouble::HintsLost {
                        error: Some(&error),
                    });
                }
            }
        }
        let Some(alive) = shared.upgrade() else {
            return;
        };
        alive.hints.store(HINTS_PENDING, Ordering::Release);
        drop(alive);
        tokio::time::sleep(RESUBSCRIBE_DELAY).await;
    }
}
