//! A guard around each connection's future that turns a busy loop into a slow poll.
//!
//! actix-http's HTTP/1 dispatcher stops reading once 128 KiB of a connection's bytes are
//! buffered, and when 16 pipelined requests wait behind the one being served it stops parsing
//! too; it then wakes itself at once on every poll "just in case", without waiting for the
//! socket. A client that sends a waiting acquire followed by 16 requests and 128 KiB kept one
//! worker at 100% CPU for the whole wait (issue #11, fault 6). The dispatcher has no setting for
//! this, so the guard watches the future from outside: a wake that the future gives itself while
//! it is being polled is passed on at once a few times in a row, then only after a short pause.
//! Any other wake (the socket, the handler's answer, a timer) is passed on at once and ends the
//! pause, so a connection that makes progress is never slowed down.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tokio::time::{sleep, Sleep};

/// How many polls in a row may end in a self-wake before the guard starts pausing.
const SELF_WAKES_BEFORE_PAUSE: u32 = 16;

/// How long the guard waits before passing on a self-wake, once it pauses: at most about 100
/// polls a second for a connection that only wakes itself.
pub(crate) const PAUSE: Duration = Duration::from_millis(10);

/// A future polled by [`SpinGuard`] that wakes itself on every poll is polled at most about
/// `1 / PAUSE` times a second, after the first few polls.
pub struct SpinGuard<F> {
    inner: Pin<Box<F>>,
    wakes: Arc<Wakes>,
    waker: Waker,
    /// Polls in a row that ended with a self-wake and no other wake in between.
    self_wakes: u32,
    pause: Option<Pin<Box<Sleep>>>,
}

/// What happened to the waker the guard hands to its future. One lock for all of it: a wake
/// from another thread must decide "during the poll" or "not" and record it in one step, or a
/// wake that reads "polling" just before the poll ends, and records itself just after the guard
/// looked, is lost (the connection then hangs with its answer ready).
struct Wakes {
    state: Mutex<WakeState>,
}

#[derive(Default)]
struct WakeState {
    /// The guard is polling its future: a wake now is the future waking itself.
    polling: bool,
    /// The future woke itself during its last poll.
    woke_itself: bool,
    /// Something else woke the future since its last poll.
    woken: bool,
    /// The waker of the task that polls the guard.
    outer: Option<Waker>,
}

impl Wakes {
    fn state(&self) -> std::sync::MutexGuard<'_, WakeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let outer = {
            let mut state = self.state();
            if state.polling {
                // Passed on (or not) by the guard once the poll has returned.
                state.woke_itself = true;
                return;
            }
            state.woken = true;
            state.outer.clone()
        };
        if let Some(outer) = outer {
            outer.wake();
        }
    }
}

impl<F: Future> SpinGuard<F> {
    pub fn new(inner: F) -> Self {
        let wakes = Arc::new(Wakes {
            state: Mutex::new(WakeState::default()),
        });
        Self {
            inner: Box::pin(inner),
            waker: Waker::from(Arc::clone(&wakes)),
            wakes,
            self_wakes: 0,
            pause: None,
        }
    }
}

impl<F: Future> Future for SpinGuard<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = &mut *self;
        let woken = {
            let mut state = this.wakes.state();
            if !state
                .outer
                .as_ref()
                .is_some_and(|w| w.will_wake(cx.waker()))
            {
                state.outer = Some(cx.waker().clone());
            }
            std::mem::take(&mut state.woken)
        };
        if woken {
            this.self_wakes = 0;
            this.pause = None;
        } else if let Some(pause) = this.pause.as_mut() {
            if pause.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.pause = None;
        }
        {
            let mut state = this.wakes.state();
            state.woke_itself = false;
            state.polling = true;
        }
        let polled = this
            .inner
            .as_mut()
            .poll(&mut Context::from_waker(&this.waker));
        let woke_itself = {
            let mut state = this.wakes.state();
            state.polling = false;
            std::mem::take(&mut state.woke_itself)
        };
        if polled.is_ready() {
            return polled;
        }
        if woke_itself {
            this.self_wakes = this.self_wakes.saturating_add(1);
            if this.self_wakes < SELF_WAKES_BEFORE_PAUSE {
                cx.waker().wake_by_ref();
            } else {
                let mut pause = Box::pin(sleep(PAUSE));
                // Registers the timer with this task; it is not due yet.
                if pause.as_mut().poll(cx).is_ready() {
                    cx.waker().wake_by_ref();
                } else {
                    this.pause = Some(pause);
                }
            }
        } else {
            this.self_wakes = 0;
        }
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Instant;

    use super::*;

    /// A future that wakes itself on every poll, like the dispatcher with a full buffer, and
    /// counts its polls; it ends after `until`.
    struct Spinner {
        polls: Arc<AtomicU32>,
        until: Instant,
    }

    impl Future for Spinner {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::Relaxed);
            if Instant::now() >= self.until {
                return Poll::Ready(());
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_future_that_only_wakes_itself_is_polled_about_every_pause() {
        let polls = Arc::new(AtomicU32::new(0));
        let spinner = Spinner {
            polls: Arc::clone(&polls),
            until: Instant::now() + Duration::from_millis(300),
        };
        SpinGuard::new(spinner).await;
        let polls = polls.load(Ordering::Relaxed);
        // Unguarded, this is hundreds of thousands of polls.
        assert!(
            polls <= SELF_WAKES_BEFORE_PAUSE + 300 / 10 + 5,
            "{polls} polls in 300 ms"
        );
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_wake_from_outside_is_passed_on_at_once_during_a_pause() {
        let (send, receive) = tokio::sync::oneshot::channel::<()>();
        let polls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&polls);
        let mut receive = Box::pin(receive);
        // Wakes itself on every poll, and also waits for the channel.
        let waiting = std::future::poll_fn(move |cx| {
            counted.fetch_add(1, Ordering::Relaxed);
            if receive.as_mut().poll(cx).is_ready() {
                return Poll::Ready(Instant::now());
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        });
        let guarded = tokio::spawn(SpinGuard::new(waiting));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let sent = Instant::now();
        send.send(()).expect("the guarded future waits");
        let answered = guarded.await.expect("the guarded future ends");
        assert!(
            answered.duration_since(sent) < PAUSE / 2,
            "answered {:?} after the wake",
            answered.duration_since(sent)
        );
        assert!(polls.load(Ordering::Relaxed) < 100);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn a_future_that_does_not_wake_itself_is_polled_as_usual() {
        let (send, receive) = tokio::sync::oneshot::channel::<u8>();
        let guarded = tokio::spawn(SpinGuard::new(receive));
        tokio::task::yield_now().await;
        send.send(7).expect("the guarded future waits");
        assert_eq!(guarded.await.expect("ends").expect("answered"), 7);
    }

    /// A wake from another thread that lands just as a poll ends must never be lost: each of
    /// many guarded futures is woken by a thread racing with its poll, and every one must end.
    #[test]
    fn wakes_from_other_threads_racing_with_polls_are_never_lost() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        runtime.block_on(async {
            for round in 0..2_000 {
                let (send, receive) = tokio::sync::oneshot::channel::<()>();
                let mut receive = Box::pin(receive);
                let mut polls = 0_u32;
                // Wakes itself a few times (so the guard counts), then waits for the channel.
                let waiting = std::future::poll_fn(move |cx| {
                    polls += 1;
                    if receive.as_mut().poll(cx).is_ready() {
                        return Poll::Ready(());
                    }
                    if polls < 3 {
                        cx.waker().wake_by_ref();
                    }
                    Poll::Pending
                });
                let sender = std::thread::spawn(move || {
                    for _ in 0..(round % 50) {
                        std::hint::spin_loop();
                    }
                    let _ = send.send(());
                });
                let ended =
                    tokio::time::timeout(Duration::from_secs(2), SpinGuard::new(waiting)).await;
                sender.join().expect("the sender");
                assert!(ended.is_ok(), "round {round}: a wake was lost");
            }
        });
    }
}
