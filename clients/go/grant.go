package lockd

// What a recipe holds under a session (a lock, permits, a leadership): acquired through the
// session's hold, kept for reading, forgotten once released.

import (
	"context"
	"sync"
	"time"
)

// grant is one hold of a session as last granted, nil when it is not held through its recipe.
type grant[T any] struct {
	session *Session
	key     holdKey

	mu    sync.Mutex
	value *T
}

// ask asks once, as an attempt does: the grant when granted, nil when not.
type ask[T any] func(ctx context.Context, waitSeconds int64, timeout time.Duration) (*T, error)

// acquire holds the key under the session (see Session.hold), asking with try until granted,
// and keeps the grant.
func (g *grant[T]) acquire(ctx context.Context, wait bool, try ask[T]) error {
	var granted *T
	err := g.session.hold(ctx, []holdKey{g.key}, wait, func(ctx context.Context, waitSeconds int64, timeout time.Duration) (bool, error) {
		value, err := try(ctx, waitSeconds, timeout)
		if err != nil {
			return false, err
		}
		granted = value
		return value != nil, nil
	})
	if err != nil {
		return err
	}
	g.set(granted)
	return nil
}

// release gives the hold up (see Session.releaseHold) and forgets the grant, unless the
// release's outcome is unknown: the hold may still be live then.
func (g *grant[T]) release(ctx context.Context) error {
	err := g.session.releaseHold(ctx, g.key)
	if err == nil || !isOutcomeUnknown(err) {
		g.set(nil)
	}
	return err
}

func (g *grant[T]) set(value *T) {
	g.mu.Lock()
	g.value = value
	g.mu.Unlock()
}

// get is a copy of the grant, nil when none.
func (g *grant[T]) get() *T {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.value == nil {
		return nil
	}
	value := *g.value
	return &value
}
