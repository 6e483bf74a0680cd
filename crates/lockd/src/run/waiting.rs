//! Acquiring within `--wait`: one request that the server holds for the wait (at most 60 s a
//! request; a longer wait takes several), asked again until it grants or the wait is over. A
//! server that refuses the wait's value (a lower `--max-wait-seconds`) or ignores it is polled
//! instead.

use std::time::{Duration, Instant};

use lock_client::ClientError;

use super::target::Acquisition;

/// The longest `wait_seconds` sent in one acquire (the server's default maximum); a longer
/// `--wait` takes several requests. A server that refuses the field's value (a lower maximum)
/// is polled instead.
const MAX_WAIT_PER_REQUEST: u64 = 60;
/// Pause between attempts when the server answered "held" before the wait was over (a server
/// without waiting answers at once) and gave no `Retry-After`.
const POLL_EVERY: Duration = Duration::from_millis(250);

/// Asks `attempt` (given the seconds the server may hold the request) until it grants or
/// `deadline` passes. Returns what was granted and when the granting request was sent, or
/// `Err(unavailable)` (what the last refusal named) when the wait is over.
///
/// # Errors
/// The client's error when the server refused the request or never answered.
pub fn acquire_until<T>(
    deadline: Instant,
    mut attempt: impl FnMut(u64) -> Result<Acquisition<T>, ClientError>,
) -> Result<Result<(T, Instant), Vec<String>>, ClientError> {
    let mut max_wait_per_request = MAX_WAIT_PER_REQUEST;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        // Rounded up, so that the first request asks for the whole `--wait`.
        let wait_seconds = left
            .as_millis()
            .div_ceil(1_000)
            .try_into()
            .unwrap_or(u64::MAX)
            .min(max_wait_per_request);
        let sent_at = Instant::now();
        match attempt(wait_seconds) {
            Ok(Acquisition::Granted(granted)) => return Ok(Ok((granted, sent_at))),
            Ok(Acquisition::NotGranted {
                retry_after_seconds,
                unavailable,
            }) => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Ok(Err(unavailable));
                }
                let hint = retry_after_seconds.map_or(POLL_EVERY, Duration::from_secs);
                std::thread::sleep(hint.min(POLL_EVERY).min(left));
            }
            // A server configured with a lower --max-wait-seconds: poll instead.
            Err(ClientError::Problem(problem))
                if wait_seconds > 0 && problem.errors.iter().any(|e| e.field == "wait_seconds") =>
            {
                max_wait_per_request = 0;
            }
            Err(error) => return Err(error),
        }
    }
}
