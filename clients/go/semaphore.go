package lockd

// A counting semaphore under a session: at most `limit` permits held at once, across every
// holder and every lockd instance sharing the database.

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Semaphore is permits of one of lockd's semaphores, held under a session.
type Semaphore struct {
	limit int
	grant grant[Permit]
}

// NewSemaphore is the semaphore name with limit permits in all (1 to 10000; every holder must
// use the same limit: another one is an error matching ErrConflict while it has holders).
func NewSemaphore(s *Session, name string, limit int) *Semaphore {
	return &Semaphore{limit: limit, grant: grant[Permit]{session: s, key: holdKey{kind: "semaphore", name: name}}}
}

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
	escaped, err := segment("semaphore", m.Name())
	if err != nil {
		return err
	}
	if permits < 1 || permits > m.limit {
		return fmt.Errorf("lockd: permits must be between 1 and the limit %d, not %d", m.limit, permits)
	}
	session := m.grant.session
	return m.grant.acquire(ctx, wait, func(ctx context.Context, waitSeconds int64, timeout time.Duration) (*Permit, error) {
		body := struct {
			Session     string `json:"session"`
			Limit       int    `json:"limit"`
			Permits     int    `json:"permits"`
			WaitSeconds int64  `json:"wait_seconds,omitempty"`
		}{session.ID(), m.limit, permits, waitSeconds}
		var answer struct {
			Acquired bool    `json:"acquired"`
			Permit   *Permit `json:"permit"`
		}
		r := request{method: http.MethodPost, path: "/semaphores/" + escaped, body: body, timeout: timeout}
		if _, err := session.client.doJSON(ctx, r, &answer); err != nil {
			return nil, err
		}
		if !answer.Acquired {
			return nil, nil
		}
		return answer.Permit, nil
	})
}

// Release gives the session's permits back; the session and its other holds go on. Permits the
// session does not hold (any more) are an error matching ErrNotFound.
func (m *Semaphore) Release(ctx context.Context) error { return m.grant.release(ctx) }

// Permit is the session's grant as made (its own FencingToken), nil when not held through this
// Semaphore.
func (m *Semaphore) Permit() *Permit { return m.grant.get() }

// Name is the semaphore's name.
func (m *Semaphore) Name() string { return m.grant.key.name }

// Limit is the semaphore's limit.
func (m *Semaphore) Limit() int { return m.limit }
