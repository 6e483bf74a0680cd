//! W5: handoff latency. A holder releases a lock while a waiter (an acquire held open with
//! `wait_seconds`) stands in line for it; the latency is the time from sending the release to
//! the waiter's grant arriving. The waiter talks to the holder's instance (the release wakes it
//! in process) or to another instance on the same database (the wake-up crosses processes).

use std::io;
use std::time::{Duration, Instant};

use crate::http::HttpConnection;
use crate::stats::RunStats;

/// How long a sample waits after sending the waiter's request before releasing, so that the
/// waiter is in line (not just connecting) when the release arrives.
const QUEUE_SETTLE: Duration = Duration::from_millis(25);

/// Measures `samples` handoffs, one after another, each on a resource of its own.
pub async fn handoffs(holder_addr: &str, waiter_addr: &str, samples: usize, tag: &str) -> RunStats {
    let started = Instant::now();
    let mut stats = RunStats::default();
    let (mut holder, mut waiter) = match (
        HttpConnection::connect(holder_addr).await,
        HttpConnection::connect(waiter_addr).await,
    ) {
        (Ok(holder), Ok(waiter)) => (holder, waiter),
        _ => {
            stats.errors += 1;
            return stats;
        }
    };
    for sample in 0..samples {
        let resource = format!("{tag}-{sample}");
        match one_handoff(&mut holder, &mut waiter, &resource).await {
            Ok(latency) => {
                stats.latencies_us.push(latency);
                stats.operations += 1;
            }
            Err(e) => {
                stats.errors += 1;
                eprintln!("W5 handoff on {resource} failed: {e}");
                // Whatever state the connections are in, start the next sample on fresh ones.
                match (
                    HttpConnection::connect(holder_addr).await,
                    HttpConnection::connect(waiter_addr).await,
                ) {
                    (Ok(h), Ok(w)) => (holder, waiter) = (h, w),
                    _ => break,
                }
            }
        }
    }
    stats.elapsed = started.elapsed();
    stats
}

/// One handoff: the microseconds from sending the holder's release to the waiter's grant.
async fn one_handoff(
    holder: &mut HttpConnection,
    waiter: &mut HttpConnection,
    resource: &str,
) -> io::Result<u32> {
    let path = format!("/locks/{resource}");
    let held = holder
        .request(
            "POST",
            &path,
            Some(br#"{"owner":"holder","ttl_seconds":30}"#),
        )
        .await?;
    if held.status != 200 || !held.body.starts_with(br#"{"acquired":true"#) {
        return Err(io::Error::other(format!(
            "the holder was not granted ({})",
            held.status
        )));
    }
    // Both requests are in flight at once: the waiter's acquire is sent first and waits in
    // line, then the release; the waiter's answer is timed on its own future so that reading
    // the release's answer does not delay it.
    let waiting = async {
        let answer = waiter
            .request(
                "POST",
                &path,
                Some(br#"{"owner":"waiter","ttl_seconds":30,"wait_seconds":10}"#),
            )
            .await;
        (answer, Instant::now())
    };
    let releasing = async {
        tokio::time::sleep(QUEUE_SETTLE).await;
        let sent = Instant::now();
        let answer = holder
            .request("DELETE", &format!("{path}?owner=holder"), None)
            .await;
        (answer, sent)
    };
    let ((granted, granted_at), (released, release_sent)) = tokio::join!(waiting, releasing);
    let granted = granted?;
    let released = released?;
    if released.status != 204 {
        return Err(io::Error::other(format!(
            "the release answered {}",
            released.status
        )));
    }
    if granted.status != 200 || !granted.body.starts_with(br#"{"acquired":true"#) {
        return Err(io::Error::other(format!(
            "the waiter was not granted ({}): {}",
            granted.status,
            String::from_utf8_lossy(&granted.body)
        )));
    }
    let latency = granted_at.saturating_duration_since(release_sent);
    let cleanup = waiter
        .request("DELETE", &format!("{path}?owner=waiter"), None)
        .await?;
    if cleanup.status != 204 {
        return Err(io::Error::other(format!(
            "the waiter's release answered {}",
            cleanup.status
        )));
    }
    Ok(latency.as_micros().min(u128::from(u32::MAX)) as u32)
}
