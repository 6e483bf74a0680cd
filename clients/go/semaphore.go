package lockd

// A counting semaphore under a session: at most `limit` permits held at once, across every
// holder and every lockd instance sharing the database.

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Semaphore is permits of one of lockd's semaphores, held under a session.
type Semaphore struct {
	session *Session
	name    string
	limit   int

	mu     sync.Mutex
	permit *Permit
}

// NewSemaphore is the semaphore name with limit permits in all (1 to 10000; every holder must
// use the same limit: another one is an error matching ErrConflict while it has holders).
func NewSemaphore(s *Session, name string, limit int) *Semaphore {
	return &Semaphore{session: s, name: name, limit: limit}
}

func (m *Semaphore) key() holdKey { return holdKey{kind: "semaphore", name: m.name} }

// Acquire waits until permits (1 to the limit) are the session's, or ctx ends (ctx.Err()), or
// the session is lost. Waiters of one semaphore are served in arrival order on each server.
// Acquiring again with the same permits is a re-grant (same token); with other permits it is
// an error matching ErrConflict (release first).
func (m *Semaphore) Acquire(ctx context.Context, permits int) error {
	return m.acquire(ctx, permits, true)
}

// TryAcquire takes permits if they are free now; ErrLocked otherwise.
func (m *Semaphore) TryAcquire(ctx context.Context, permits int) error {
	return m.acquire(ctx, permits, false)
}

func (m *Semaphore) acquire(ctx context.Context, permits int, wait bool) error {
	escaped, err := segment("semaphore", m.name)
	if err != nil {
		return err
	}
	if permits < 1 || permits > m.limit {
		return fmt.Errorf("lockd: permits must be between 1 and the limit %d, not %d", m.limit, permits)
	}
	var granted *Permit
	try := func(ctx context.Context, waitSeconds int64, timeout time.Duration) (bool, error) {
		body := struct {
			Session     string `json:"session"`
			Limit       int    `json:"limit"`
			Permits     int    `json:"permits"`
			WaitSeconds int64  `json:"wait_seconds,omitempty"`
		}{m.session.ID(), m.limit, permits, waitSeconds}
		var answer struct {
			Acquired bool    `json:"acquired"`
			Permit   *Permit `json:"permit"`
		}
		r := request{method: http.MethodPost, path: "/semaphores/" + escaped, body: body, timeout: timeout}
		if _, err := m.session.client.doJSON(ctx, r, &answer); err != nil {
			return false, err
		}
		granted = answer.Permit
		return answer.Acquired && answer.Permit != nil, nil
	}
	if err := m.session.hold(ctx, []holdKey{m.key()}, wait, try); err != nil {
		return err
	}
	m.mu.Lock()
	m.permit = granted
	m.mu.Unlock()
	return nil
}

// Release gives the session's permits back; the session and its other holds go on. Permits the
// session does not hold (any more) are an error matching ErrNotFound.
func (m *Semaphore) Release(ctx context.Context) error {
	err := m.session.releaseHold(ctx, m.key())
	if err == nil || !isOutcomeUnknown(err) {
		m.mu.Lock()
		m.permit = nil
		m.mu.Unlock()
	}
	return err
}

// Permit is the session's grant as made (its own FencingToken), nil when not held through this
// Semaphore.
func (m *Semaphore) Permit() *Permit {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.permit == nil {
		return nil
	}
	permit := *m.permit
	return &permit
}

// Name is the semaphore's name.
func (m *Semaphore) Name() string { return m.name }

// Limit is the semaphore's limit.
func (m *Semaphore) Limit() int { return m.limit }
