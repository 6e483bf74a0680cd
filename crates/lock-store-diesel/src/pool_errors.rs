//! How the pool reports connections it could not open. r2d2 logs each at ERROR by default, and
//! while the database is away its background thread tries again and again: a PostgreSQL
//! failover logged about 310 such lines per instance. Here each is a WARN (requests already
//! answer 503, and `/readyz` fails), at most one a second, with how many were left out.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::db_connection::ConnectError;

/// At most one line this often.
const EVERY: Duration = Duration::from_secs(1);

#[derive(Debug, Default)]
pub(crate) struct ConnectFailures {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    last: Option<Instant>,
    left_out: u64,
}

impl r2d2::HandleError<ConnectError> for ConnectFailures {
    fn handle_error(&self, error: ConnectError) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        if state
            .last
            .is_some_and(|last| now.duration_since(last) < EVERY)
        {
            state.left_out += 1;
            return;
        }
        let left_out = std::mem::take(&mut state.left_out);
        state.last = Some(now);
        drop(state);
        tracing::warn!(%error, similar_failures_not_logged = left_out, "cannot open a database connection");
    }
}

#[cfg(test)]
mod tests {
    use r2d2::HandleError;

    use super::ConnectFailures;
    use crate::db_connection::ConnectError;

    #[test]
    fn one_line_a_second_and_the_rest_counted() {
        let failures = ConnectFailures::default();
        for _ in 0..5 {
            failures.handle_error(ConnectError::Postgres("connection refused".to_owned()));
        }
        let state = failures.state.lock().expect("state");
        assert!(state.last.is_some());
        assert_eq!(
            state.left_out, 4,
            "the first is logged, the next four are counted"
        );
    }
}
