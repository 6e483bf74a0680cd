//! Observers: streams that follow every lock and election the run uses, on every instance, for
//! as long as the clients run. Each instance's observe watch then runs under the same faults as
//! the writes, and records the expiries it sees in the history at once (the store's
//! `record_expiry`, which ends a run-out lease in place): a watch that ended a lease that was
//! still live, or recorded one expiry twice, shows in the recorded history's checks and in the
//! holds the clients saw. What the streams carry is not checked here.

use std::io::Read;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::cluster::Fleet;
use crate::workload::{encode, Plan};

/// How long an observer waits before it opens its stream again (its instance down, paused or
/// restarting).
const RETRY: Duration = Duration::from_millis(200);

/// Starts one observer per instance for every lock resource and election of `plan`; they end
/// when the run does.
pub fn spawn(plan: &Arc<Plan>, fleet: &Arc<Fleet>) -> Vec<JoinHandle<()>> {
    let paths: Vec<String> = plan
        .resources
        .iter()
        .map(|r| format!("/locks/{}/observe", encode(r)))
        .chain(
            plan.elections
                .iter()
                .map(|e| format!("/elections/{}/observe", encode(e))),
        )
        .collect();
    (0..fleet.len())
        .flat_map(|i| paths.iter().map(move |path| (i, path.clone())))
        .map(|(i, path)| {
            let (fleet, until) = (Arc::clone(fleet), plan.until);
            thread::spawn(move || observe(&fleet, i, &path, until))
        })
        .collect()
}

/// Follows `path` on instance `i` until `until`, opening the stream again whenever it ends.
fn observe(fleet: &Fleet, i: usize, path: &str, until: Instant) {
    // A read that waits longer than this gives up, so the observer notices the end of the run.
    let agent = ureq::AgentBuilder::new()
        .max_idle_connections(0)
        .timeout_connect(Duration::from_millis(500))
        .timeout_read(Duration::from_secs(1))
        .build();
    let mut buffer = [0u8; 4096];
    while Instant::now() < until {
        let Some(base) = fleet.base(i) else {
            thread::sleep(RETRY);
            continue;
        };
        match agent.get(&format!("{base}{path}")).call() {
            Ok(response) => {
                let mut body = response.into_reader();
                while Instant::now() < until {
                    match body.read(&mut buffer) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
            }
            Err(_) => thread::sleep(RETRY),
        }
    }
}
