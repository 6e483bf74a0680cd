package lockd

// Locks under a session: Mutex (exclusive) and RWMutex (shared readers, or one writer), both
// over one lock of lockd held by the session.

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// lockHold is one lock held under a session in either mode: the core of Mutex and RWMutex.
type lockHold struct {
	grant grant[Lock]
}

func newLockHold(s *Session, resource string) *lockHold {
	return &lockHold{grant: grant[Lock]{session: s, key: holdKey{kind: "lock", name: resource}}}
}

func (h *lockHold) name() string { return h.grant.key.name }

func (h *lockHold) acquire(ctx context.Context, mode Mode, wait bool) error {
	escaped, err := segment("lock", h.name())
	if err != nil {
		return err
	}
	session := h.grant.session
	return h.grant.acquire(ctx, wait, func(ctx context.Context, waitSeconds int64, timeout time.Duration) (*Lock, error) {
		body := struct {
			Session     string `json:"session"`
			Mode        Mode   `json:"mode"`
			WaitSeconds int64  `json:"wait_seconds,omitempty"`
		}{session.ID(), mode, waitSeconds}
		var answer struct {
			Acquired bool  `json:"acquired"`
			Lock     *Lock `json:"lock"`
		}
		r := request{method: http.MethodPost, path: "/locks/" + escaped, body: body, timeout: timeout}
		if _, err := session.client.doJSON(ctx, r, &answer); err != nil {
			return nil, err
		}
		if !answer.Acquired {
			return nil, nil
		}
		return answer.Lock, nil
	})
}

func (h *lockHold) release(ctx context.Context, mode Mode) error {
	if held := h.grant.get(); held != nil && held.Mode != mode {
		return fmt.Errorf("lockd: lock %q is held in %s mode, not %s", h.name(), held.Mode, mode)
	}
	return h.grant.release(ctx)
}

// Mutex is an exclusive lock held under a session, as etcd's concurrency.Mutex.
type Mutex struct{ h *lockHold }

// NewMutex is the lock on resource, held under s.
func NewMutex(s *Session, resource string) *Mutex {
	return &Mutex{h: newLockHold(s, resource)}
}

// Lock waits until the lock is the session's, or ctx ends (ctx.Err()), or the session is lost
// (its *LostError). It waits on the server (wait_seconds), asking again as long as needed.
// Locking a lock the session holds again is a re-grant: the same fencing token. An attempt of
// unknown outcome is released before its error (ErrOutcomeUnknown) is returned.
func (m *Mutex) Lock(ctx context.Context) error { return m.h.acquire(ctx, Exclusive, true) }

// TryLock takes the lock if it is free now; ErrLocked when another holder has it.
func (m *Mutex) TryLock(ctx context.Context) error { return m.h.acquire(ctx, Exclusive, false) }

// Unlock releases the lock; the session and its other holds go on. A lock the session does not
// hold (any more) is an error matching ErrNotFound, or ErrForbidden while another holds it.
func (m *Mutex) Unlock(ctx context.Context) error { return m.h.release(ctx, Exclusive) }

// Lease is the lock as granted (FencingToken: send it with every write made under the lock),
// nil when the session does not hold it through this Mutex. Its ExpiresAt is the grant's: a
// hold lasts as long as its session, see Session.ExpiresAt.
func (m *Mutex) Lease() *Lock { return m.h.grant.get() }

// Resource is the lock's name.
func (m *Mutex) Resource() string { return m.h.name() }

// RWMutex is a lock held under a session either shared (RLock: readers coexist, each with its
// own fencing token) or exclusive (Lock: one writer). A session holds it in one mode at a time:
// asking for the other mode while holding it is an error matching ErrConflict (release first).
type RWMutex struct{ h *lockHold }

// NewRWMutex is the lock on resource, held under s in either mode.
func NewRWMutex(s *Session, resource string) *RWMutex {
	return &RWMutex{h: newLockHold(s, resource)}
}

// Lock waits for the lock in exclusive mode, as Mutex.Lock. While it waits, later readers on
// the same server queue behind it.
func (m *RWMutex) Lock(ctx context.Context) error { return m.h.acquire(ctx, Exclusive, true) }

// TryLock takes the lock in exclusive mode if no one holds it now; ErrLocked otherwise.
func (m *RWMutex) TryLock(ctx context.Context) error { return m.h.acquire(ctx, Exclusive, false) }

// Unlock releases the exclusive hold.
func (m *RWMutex) Unlock(ctx context.Context) error { return m.h.release(ctx, Exclusive) }

// RLock waits for the lock in shared mode, as Mutex.Lock.
func (m *RWMutex) RLock(ctx context.Context) error { return m.h.acquire(ctx, Shared, true) }

// TryRLock takes the lock in shared mode if no writer holds it (or waits for it) now;
// ErrLocked otherwise.
func (m *RWMutex) TryRLock(ctx context.Context) error { return m.h.acquire(ctx, Shared, false) }

// RUnlock releases the shared hold.
func (m *RWMutex) RUnlock(ctx context.Context) error { return m.h.release(ctx, Shared) }

// Lease is this session's lease on the lock (either mode), nil when not held through this
// RWMutex.
func (m *RWMutex) Lease() *Lock { return m.h.grant.get() }

// Resource is the lock's name.
func (m *RWMutex) Resource() string { return m.h.name() }
