//! What a [`crate::SessionGuard`] knows of its session, as the keepalive task learns it: when
//! the last successful keepalive was sent, whether keepalives fail (jeopardy), and whether the
//! session is lost. Every rule takes `now`, so each is a pure function of the instants.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a [`crate::SessionGuard`] tells its listeners ([`crate::SessionGuard::on_signal`]), each
/// time it changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionSignal {
    /// Keepalives succeed: the session lives.
    Safe,
    /// A keepalive failed and none has succeeded since: the session may still live (until
    /// [`crate::SessionGuard::safe_until`]); stop starting new work if that is cheap.
    Jeopardy,
    /// Lost for good, before the session can run out: stop writing.
    Lost,
}

/// A listener of the session's signals.
pub(super) type Listener = Box<dyn Fn(SessionSignal) + Send + Sync>;

/// The session's health, shared by the keepalive task and the guard's owner.
pub(super) struct Health {
    /// How long after a successful keepalive was sent the session can be counted on: its TTL
    /// less the safety margin.
    lasts: Duration,
    state: Mutex<State>,
    /// The listeners, and the signal they were last told (`Safe` before the first change).
    listeners: Mutex<(Vec<Listener>, SessionSignal)>,
}

impl std::fmt::Debug for Health {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Health")
            .field("lasts", &self.lasts)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy)]
struct State {
    /// When the last successful keepalive (or the open) was SENT: the session runs at least
    /// its TTL from then, however slow the answer was.
    kept_at: Instant,
    /// A keepalive failed and none has succeeded since.
    jeopardy: bool,
    /// Lost for good: a keepalive answered that the session has ended, or the session was
    /// found past `kept_at + lasts`. Once set, nothing clears it.
    lost: bool,
}

impl State {
    fn safe_until(&self, lasts: Duration) -> Instant {
        self.kept_at + lasts
    }

    fn is_lost(&self, lasts: Duration, now: Instant) -> bool {
        self.lost || now >= self.safe_until(lasts)
    }
}

impl Health {
    /// A session opened by a request sent at `opened_at`, counted on for `lasts` after each
    /// successful keepalive's send.
    pub(super) fn new(opened_at: Instant, lasts: Duration) -> Self {
        Self {
            lasts,
            state: Mutex::new(State {
                kept_at: opened_at,
                jeopardy: false,
                lost: false,
            }),
            listeners: Mutex::new((Vec::new(), SessionSignal::Safe)),
        }
    }

    /// The signal at `now`.
    pub(super) fn signal(&self, now: Instant) -> SessionSignal {
        let state = *self.state();
        if state.is_lost(self.lasts, now) {
            SessionSignal::Lost
        } else if state.jeopardy {
            SessionSignal::Jeopardy
        } else {
            SessionSignal::Safe
        }
    }

    /// Adds a listener; it is told the signal at `now` at once when that is not `Safe`.
    pub(super) fn listen(&self, listener: Listener, now: Instant) {
        let signal = self.signal(now);
        if signal != SessionSignal::Safe {
            listener(signal);
        }
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        listeners.0.push(listener);
    }

    /// Tells every listener the signal at `now` if it changed since they were last told (a
    /// loss once only: nothing comes after it).
    pub(super) fn publish(&self, now: Instant) {
        let signal = self.signal(now);
        let mut listeners = self
            .listeners
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if listeners.1 == signal || listeners.1 == SessionSignal::Lost {
            return;
        }
        listeners.1 = signal;
        for listener in &listeners.0 {
            listener(signal);
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A keepalive sent at `sent_at` succeeded, answered at `now`: the session counts from
    /// `sent_at` and jeopardy ends. Unless it was lost by then (its answer came too late, past
    /// the point where the owner was told): a loss is never taken back. Returns whether the
    /// session still lives for the guard.
    pub(super) fn kept(&self, sent_at: Instant, now: Instant) -> bool {
        let mut state = self.state();
        if state.is_lost(self.lasts, now) {
            state.lost = true;
            return false;
        }
        state.kept_at = state.kept_at.max(sent_at);
        state.jeopardy = false;
        true
    }

    /// A keepalive failed (no answer in time, or the store failed) at `now`: jeopardy. Returns
    /// whether the session still lives for the guard.
    pub(super) fn failed(&self, now: Instant) -> bool {
        let mut state = self.state();
        state.jeopardy = true;
        if state.is_lost(self.lasts, now) {
            state.lost = true;
            return false;
        }
        true
    }

    /// A keepalive answered that the session has ended: lost at once.
    pub(super) fn ended(&self) {
        self.state().lost = true;
    }

    /// Whether the session is lost at `now`: ended, or no keepalive sent in the last `lasts`
    /// succeeded.
    pub(super) fn is_lost(&self, now: Instant) -> bool {
        self.state().is_lost(self.lasts, now)
    }

    /// Whether a keepalive failed and none has succeeded since.
    pub(super) fn in_jeopardy(&self) -> bool {
        self.state().jeopardy
    }

    /// The instant until which the session can be counted on, unless it ended before.
    pub(super) fn safe_until(&self) -> Instant {
        self.state().safe_until(self.lasts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LASTS: Duration = Duration::from_millis(2_700);

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn a_session_is_lost_lasts_after_the_last_successful_keepalive_was_sent() {
        let t0 = Instant::now();
        let health = Health::new(t0, LASTS);
        assert!(!health.is_lost(t0));
        assert!(!health.is_lost(t0 + LASTS - ms(1)));
        assert!(health.is_lost(t0 + LASTS), "lost at safe_until, not after");
        assert_eq!(health.safe_until(), t0 + LASTS);

        // A keepalive sent at 1 s and answered at 1.5 s counts from 1 s, not from its answer.
        assert!(health.kept(t0 + ms(1_000), t0 + ms(1_500)));
        assert_eq!(health.safe_until(), t0 + ms(1_000) + LASTS);
        assert!(!health.is_lost(t0 + LASTS));
        assert!(health.is_lost(t0 + ms(1_000) + LASTS));

        // An older keepalive answered late never moves the session back.
        assert!(health.kept(t0 + ms(500), t0 + ms(1_600)));
        assert_eq!(health.safe_until(), t0 + ms(1_000) + LASTS);
    }

    #[test]
    fn the_first_failure_raises_jeopardy_and_the_next_success_clears_it() {
        let t0 = Instant::now();
        let health = Health::new(t0, LASTS);
        assert!(!health.in_jeopardy());
        // (what happened, at ms) -> (jeopardy, lost) after it
        let steps: [(&str, u64, bool, bool); 6] = [
            ("fail", 900, true, false),
            ("fail", 1_200, true, false),
            ("kept", 1_500, false, false),
            ("fail", 2_400, true, false),
            // sent at 1.5 s: counted on until 4.2 s
            ("fail", 4_100, true, false),
            ("fail", 4_200, true, true),
        ];
        for (what, at, jeopardy, lost) in steps {
            let now = t0 + ms(at);
            let lives = match what {
                "kept" => health.kept(now, now),
                _ => health.failed(now),
            };
            assert_eq!(lives, !lost, "{what} at {at} ms");
            assert_eq!(health.in_jeopardy(), jeopardy, "{what} at {at} ms");
            assert_eq!(health.is_lost(now), lost, "{what} at {at} ms");
        }
    }

    #[test]
    fn listeners_are_told_each_change_once_and_nothing_after_a_loss() {
        use std::sync::Arc;
        let t0 = Instant::now();
        let health = Health::new(t0, LASTS);
        let heard = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&heard);
        health.listen(Box::new(move |s| sink.lock().unwrap().push(s)), t0);
        health.publish(t0 + ms(100));
        health.failed(t0 + ms(900));
        health.publish(t0 + ms(900));
        health.failed(t0 + ms(1_200));
        health.publish(t0 + ms(1_200));
        health.kept(t0 + ms(1_500), t0 + ms(1_500));
        health.publish(t0 + ms(1_500));
        health.failed(t0 + ms(2_400));
        health.publish(t0 + ms(2_400));
        // Lost by the time alone (sent at 1.5 s: counted on until 4.2 s).
        health.publish(t0 + ms(4_200));
        health.publish(t0 + ms(5_000));
        use SessionSignal::{Jeopardy, Lost, Safe};
        assert_eq!(
            *heard.lock().unwrap(),
            [Jeopardy, Safe, Jeopardy, Lost],
            "each change once"
        );
        // A listener added after the loss hears of it at once.
        let late = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&late);
        health.listen(
            Box::new(move |s| sink.lock().unwrap().push(s)),
            t0 + ms(5_000),
        );
        assert_eq!(*late.lock().unwrap(), [Lost]);
    }

    #[test]
    fn a_loss_is_never_taken_back() {
        let t0 = Instant::now();
        // Past the deadline, a keepalive's success comes too late: the owner may have been told.
        let late = Health::new(t0, LASTS);
        assert!(!late.kept(t0 + ms(2_000), t0 + LASTS));
        assert!(late.is_lost(t0 + LASTS));
        assert!(
            late.is_lost(t0),
            "lost for good, whatever the instant asked about"
        );
        // A keepalive answered "ended": lost at once, long before the deadline.
        let ended = Health::new(t0, LASTS);
        ended.ended();
        assert!(ended.is_lost(t0));
        assert!(!ended.kept(t0 + ms(100), t0 + ms(200)));
        assert!(ended.is_lost(t0 + ms(200)));
    }
}
