package lockd

// Keeping one lease alive (WithLock's own, or a session's): a renewal every TTL/3 on the
// monotonic clock, and the lease given up before it can run out when renewals fail.

import (
	"context"
	"sync"
	"time"
)

// keeper renews one lease. Its deadline is the send time of the acquire (or of the last
// renewal that got through) plus the TTL: the server counted the lease from when it handled
// that request, which is later, so before the deadline the lease is surely still held, whatever
// the server's clock and the network's delay. The keeper gives the lease up (lost) at once when
// a renewal is refused, and when renewals have failed until the deadline is less than the
// margin away.
type keeper struct {
	ttl    time.Duration
	margin time.Duration
	retry  time.Duration
	// renew sends one renewal, bounded by ctx, and answers the server's new expires_at.
	renew func(ctx context.Context) (time.Time, error)
	// lostError makes the error the lease is lost with.
	lostError func(reason string, cause error) *LostError
	// failed hears a renewal that failed while the lease may still be alive (retried); renewed
	// hears one that got through. Both run on the keeper's goroutine.
	failed  func(err error)
	renewed func()
	// lostHook runs once, on the keeper's goroutine, when the lease is lost.
	lostHook func(err *LostError)

	mu        sync.Mutex
	deadline  time.Time
	expiresAt time.Time
	lostErr   *LostError

	lost     chan struct{} // closed when the lease is lost
	stopping chan struct{} // closed by stop
	stopped  chan struct{} // closed when the goroutine has returned
	stopOnce sync.Once
}

// newKeeper keeps a lease of ttl whose acquire (or last renewal) was sent at sentAt.
func newKeeper(ttl time.Duration, sentAt, expiresAt time.Time) *keeper {
	margin := ttl / 5
	if margin > 2*time.Second {
		margin = 2 * time.Second
	}
	retry := ttl / 10
	if retry < 100*time.Millisecond {
		retry = 100 * time.Millisecond
	}
	if retry > time.Second {
		retry = time.Second
	}
	return &keeper{
		ttl: ttl, margin: margin, retry: retry,
		deadline: sentAt.Add(ttl), expiresAt: expiresAt,
		lost: make(chan struct{}), stopping: make(chan struct{}), stopped: make(chan struct{}),
	}
}

// start renews in the background from now on; the first renewal is due TTL/3 after sentAt.
func (k *keeper) start(sentAt time.Time) {
	go k.run(sentAt.Add(k.ttl / 3))
}

// stop ends the renewals: none is sent after it returns (one in flight is waited for, and its
// own bound ends it before the deadline), so a release sent afterwards is the last request.
func (k *keeper) stop() {
	k.stopOnce.Do(func() { close(k.stopping) })
	<-k.stopped
}

// Deadline is the local (monotonic) time before which the lease is surely still held.
func (k *keeper) Deadline() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

// ExpiresAt is the server's expires_at as last seen (the server's wall clock).
func (k *keeper) ExpiresAt() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.expiresAt
}

// Err is the reason the lease was lost, nil while it is not.
func (k *keeper) Err() *LostError {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lostErr
}

func (k *keeper) isStopping() bool {
	select {
	case <-k.stopping:
		return true
	default:
		return false
	}
}

func (k *keeper) run(due time.Time) {
	defer close(k.stopped)
	var lastErr error
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		lostAt := k.Deadline().Add(-k.margin)
		wake := due
		if lostAt.Before(wake) {
			wake = lostAt
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(time.Until(wake))
		select {
		case <-k.stopping:
			return
		case <-k.lost:
			return
		case <-timer.C:
		}
		now := time.Now()
		if !now.Before(lostAt) {
			k.lose("renewals failed until the lease's deadline came near", lastErr)
			return
		}
		if now.Before(due) {
			continue
		}
		// The renewal is bounded by the point where the lease counts as lost: an answer after
		// it would come too late anyway.
		ctx, cancel := context.WithDeadline(context.Background(), lostAt)
		sentAt := time.Now()
		expiresAt, err := k.renew(ctx)
		cancel()
		if k.isStopping() || k.Err() != nil {
			return
		}
		if err == nil {
			k.mu.Lock()
			if deadline := sentAt.Add(k.ttl); deadline.After(k.deadline) {
				k.deadline = deadline
			}
			k.expiresAt = expiresAt
			k.mu.Unlock()
			lastErr = nil
			due = sentAt.Add(k.ttl / 3)
			if k.renewed != nil {
				k.renewed()
			}
			continue
		}
		if p := problemOf(err); p != nil && p.Status < 500 {
			// 404: the lease ended; 403: another holder has it; any other refusal will not
			// get better by asking again.
			k.lose("the renewal was refused", err)
			return
		}
		lastErr = err
		due = time.Now().Add(k.retry)
		if k.failed != nil {
			k.failed(err)
		}
	}
}

// lose gives the lease up, once: the lease is known to be gone, or cannot be counted on.
func (k *keeper) lose(reason string, cause error) {
	k.mu.Lock()
	if k.lostErr != nil {
		k.mu.Unlock()
		return
	}
	k.lostErr = k.lostError(reason, cause)
	err := k.lostErr
	k.mu.Unlock()
	close(k.lost)
	if k.lostHook != nil {
		k.lostHook(err)
	}
}
