//! The subscription to the store's hints of freed locks, which wakes the queues they name.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use lock_domain::{Freed, FreedHints};

use super::{Shared, HINTS_LIVE, HINTS_NONE, HINTS_PENDING, RESUBSCRIBE_DELAY};
use crate::events::Trouble;

/// Subscribes to the store's hints and wakes the queues they name, for as long as the
/// `Waiting` lives; resubscribes after a failure.
pub(super) async fn listen_for_hints(shared: Weak<Shared>, source: Arc<dyn FreedHints>) {
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
                    shared.wake_all();
                    shared.permits_freed(None);
                }
                while let Some(hint) = hints.next().await {
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
