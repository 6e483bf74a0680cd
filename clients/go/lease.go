package lockd

// One lock held without a session for the length of a function: WithLock acquires it, renews
// it every TTL/3, cancels the function's context before the lease can be lost, and releases it.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"time"
)

// Lease is the lease WithLock holds.
type Lease struct {
	// Resource is the lock's name.
	Resource string
	// Owner is the owner string the lease is held as (unique per WithLock by default).
	Owner string
	// FencingToken is larger than every earlier grant's: send it with every write made under
	// the lock, and have the store refuse lower ones (docs/fencing.md).
	FencingToken int64
	// TTL is the lease's length, renewed every TTL/3.
	TTL time.Duration

	keeper *keeper
}

// Deadline is the local time before which the lease is surely still held: the send time of
// the acquire or of the last renewal that got through, plus the TTL (monotonic clock).
func (l *Lease) Deadline() time.Time { return l.keeper.Deadline() }

// ExpiresAt is the server's expires_at as last seen (its wall clock).
func (l *Lease) ExpiresAt() time.Time { return l.keeper.ExpiresAt() }

// LeaseOption configures WithLock.
type LeaseOption func(*leaseOptions)

type leaseOptions struct {
	owner string
	mode  Mode
}

// WithOwner holds the lease as owner instead of a unique owner string of WithLock's own. lockd
// knows a holder by its owner string alone: two holders must never share one.
func WithOwner(owner string) LeaseOption {
	return func(o *leaseOptions) { o.owner = owner }
}

// WithMode holds the lock in mode (Exclusive by default; Shared: a reader).
func WithMode(mode Mode) LeaseOption {
	return func(o *leaseOptions) { o.mode = mode }
}

// WithLock holds the lock on resource, with a lease of ttl (whole seconds, at least 1 s), while
// fn runs, and returns fn's error.
//
//   - It waits for the lock until ctx ends (then ctx.Err()). A grant that arrived more than
//     TTL/3 after its request was sent is renewed before fn starts.
//   - An acquire of unknown outcome (ErrOutcomeUnknown) is released with the same owner before
//     its error is returned: it leaves no lease behind.
//   - While fn runs, the lease is renewed every TTL/3. fn's context is cancelled (besides when
//     ctx ends) when a renewal is refused (the lease ended, or another owner has it) and when
//     renewals have failed until the lease's Deadline is less than min(TTL/5, 2 s) away: before
//     the lease can run out on the server. Stop writing under the lock then.
//   - When fn returns, the renewals stop (one in flight is waited for, so none follows) and the
//     lease is released, whatever happened. If the lease was lost, WithLock returns the
//     *LostError (matching ErrLeaseLost) even when fn returned nil: its writes may have been
//     made without the lock.
func WithLock(ctx context.Context, client *Client, resource string, ttl time.Duration, fn func(ctx context.Context, lease *Lease) error, options ...LeaseOption) error {
	escaped, err := segment("lock", resource)
	if err != nil {
		return err
	}
	seconds, err := wholeSeconds("a lease's TTL", ttl, time.Second)
	if err != nil {
		return err
	}
	o := leaseOptions{mode: Exclusive}
	for _, option := range options {
		option(&o)
	}
	if o.owner == "" {
		o.owner = uniqueOwner()
	}
	path := "/locks/" + escaped

	var granted *Lock
	var sentAt time.Time
	try := func(ctx context.Context, waitSeconds int64, timeout time.Duration) (bool, error) {
		body := struct {
			Owner       string `json:"owner"`
			TTLSeconds  int64  `json:"ttl_seconds"`
			Mode        Mode   `json:"mode"`
			WaitSeconds int64  `json:"wait_seconds,omitempty"`
		}{o.owner, seconds, o.mode, waitSeconds}
		var answer struct {
			Acquired bool  `json:"acquired"`
			Lock     *Lock `json:"lock"`
		}
		sentAt = time.Now()
		if _, err := client.doJSON(ctx, request{method: http.MethodPost, path: path, body: body, timeout: timeout}, &answer); err != nil {
			return false, err
		}
		granted = answer.Lock
		return answer.Acquired && answer.Lock != nil, nil
	}
	release := func(attempts int) {
		r := request{method: http.MethodDelete, path: path, query: url.Values{"owner": {o.owner}}}
		for attempt := 1; attempt <= attempts; attempt++ {
			rctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			_, err := client.do(rctx, r)
			cancel()
			if err == nil || !isOutcomeUnknown(err) {
				return // released, or nothing of ours to release
			}
			if attempt < attempts {
				time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			}
		}
	}
	renew := func(ctx context.Context) (time.Time, error) {
		body := struct {
			Owner      string `json:"owner"`
			TTLSeconds int64  `json:"ttl_seconds"`
		}{o.owner, seconds}
		var lock Lock
		if _, err := client.doJSON(ctx, request{method: http.MethodPost, path: path + "/renew", body: body}, &lock); err != nil {
			return time.Time{}, err
		}
		return lock.ExpiresAt, nil
	}
	lostError := func(reason string, cause error) *LostError {
		return &LostError{Name: resource, Reason: reason, Err: cause}
	}

	if err := client.acquireLoop(ctx, true, try); err != nil {
		if isOutcomeUnknown(err) {
			release(3)
		}
		return err
	}
	expiresAt := granted.ExpiresAt
	// The lease is counted from when its acquire was sent. After a long wait most of that may
	// be gone although the grant is fresh: renew first, and count from the renewal.
	if time.Since(sentAt) > ttl/3 {
		rctx, cancel := context.WithTimeout(context.Background(), ttl/3)
		renewSentAt := time.Now()
		expiresAt, err = renew(rctx)
		cancel()
		if err != nil {
			release(3)
			if p := problemOf(err); p != nil && p.Status < 500 {
				return lostError("the renewal after the wait was refused", err)
			}
			return err
		}
		sentAt = renewSentAt
	}

	k := newKeeper(ttl, sentAt, expiresAt)
	work, cancelWork := context.WithCancel(ctx)
	defer cancelWork()
	k.renew = renew
	k.lostError = lostError
	k.lostHook = func(*LostError) { cancelWork() }
	lease := &Lease{Resource: resource, Owner: o.owner, FencingToken: granted.FencingToken, TTL: ttl, keeper: k}
	k.start(sentAt)

	returned := false
	defer func() {
		if !returned {
			// fn panicked: give the lease back; the panic goes on.
			k.stop()
			release(1)
		}
	}()
	fnErr := fn(work, lease)
	returned = true
	k.stop()
	attempts := 3
	if k.Err() != nil {
		attempts = 1
	}
	release(attempts)
	if lost := k.Err(); lost != nil {
		return lost
	}
	return fnErr
}

// uniqueOwner is an owner string of this process and call: host, process id, random part.
func uniqueOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "go"
	}
	random := make([]byte, 6)
	if _, err := rand.Read(random); err != nil {
		// No randomness: the time still tells two calls of one process apart.
		return fmt.Sprintf("%s-%d-%d", host, os.Getpid(), time.Now().UnixNano())
	}
	return fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(random))
}
