package lockd_test

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

// Close ends the session and every hold of every kind with it, at once.
func TestSessionCloseEndsEveryHold(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)
		s := newSession(t, client, 10*time.Second)
		lock, reader, semaphore, election := lockdtest.Name("lock"), lockdtest.Name("reader"), lockdtest.Name("permits"), lockdtest.Name("office")
		mutex := lockd.NewMutex(s, lock)
		must(t, mutex.Lock(ctx))
		must(t, lockd.NewRWMutex(s, reader).RLock(ctx))
		must(t, lockd.NewSemaphore(s, semaphore, 4).Acquire(ctx, 2))
		must(t, lockd.NewElection(s, election).Campaign(ctx, nil))

		info, holds, err := client.GetSession(ctx, s.ID())
		must(t, err)
		if info.ID != s.ID() || len(holds) != 4 {
			t.Fatalf("session %+v holds %+v", info, holds)
		}
		kinds := map[string]int{}
		for _, hold := range holds {
			kinds[hold.Kind]++
		}
		if kinds["lock"] != 2 || kinds["semaphore"] != 1 || kinds["election"] != 1 {
			t.Fatalf("holds: %+v", holds)
		}

		must(t, s.Close())
		closedWithin(t, s.Done(), time.Second, "Done after Close")
		wantIs(t, s.Err(), lockd.ErrSessionClosed)
		for _, name := range []string{lock, reader} {
			_, err := client.GetLock(ctx, name)
			wantIs(t, err, lockd.ErrNotFound)
		}
		_, err = client.GetSemaphore(ctx, semaphore)
		wantIs(t, err, lockd.ErrNotFound)
		_, err = client.GetLeader(ctx, election)
		wantIs(t, err, lockd.ErrNoLeader)
		_, _, err = client.GetSession(ctx, s.ID())
		wantIs(t, err, lockd.ErrSessionNotFound)

		// A closed session takes nothing more, and closing it again is no error.
		wantIs(t, mutex.Lock(ctx), lockd.ErrSessionClosed)
		must(t, s.Close())
	})
}

// A session cut off from lockd (a proxy that closes every connection) is in jeopardy at its
// first failed keepalive and lost before its expires_at; then it runs out on the server, and
// every hold with it.
func TestSessionRunsOut(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		server := sharedServer(t, backend)
		proxy := lockdtest.NewProxy(t, server.URL)
		direct := newClient(t, server.URL)
		ctx := testContext(t)

		var mu sync.Mutex
		var jeopardyAt, lostAt time.Time
		var lostErr error
		s := newSession(t, newClient(t, proxy.URL), 3*time.Second,
			lockd.WithJeopardy(func(*lockd.Session) {
				mu.Lock()
				defer mu.Unlock()
				if jeopardyAt.IsZero() {
					jeopardyAt = time.Now()
				}
			}),
			lockd.WithLost(func(_ *lockd.Session, err error) {
				mu.Lock()
				defer mu.Unlock()
				lostAt, lostErr = time.Now(), err
			}))
		lock, semaphore := lockdtest.Name("lock"), lockdtest.Name("permits")
		mutex := lockd.NewMutex(s, lock)
		must(t, mutex.Lock(ctx))
		must(t, lockd.NewSemaphore(s, semaphore, 2).Acquire(ctx, 1))

		// Kept alive beyond its TTL.
		opened := s.ExpiresAt()
		time.Sleep(4 * time.Second)
		if s.Err() != nil || s.InJeopardy() || !s.ExpiresAt().After(opened) {
			t.Fatalf("kept alive: err %v, jeopardy %v, expires_at %v then %v", s.Err(), s.InJeopardy(), opened, s.ExpiresAt())
		}
		holders, err := direct.GetLock(ctx, lock)
		must(t, err)
		if holders[0].Session != s.ID() {
			t.Fatalf("holder: %+v", holders[0])
		}

		proxy.Cut()
		lost := closedWithin(t, s.Done(), 10*time.Second, "Done once cut off")
		expiresAt, deadline := s.ExpiresAt(), s.Deadline()
		t.Logf("%s: lost %v before the session's expires_at, %v before its deadline", backend, expiresAt.Sub(lost).Round(time.Millisecond), deadline.Sub(lost).Round(time.Millisecond))
		if !lost.Before(expiresAt) || !lost.Before(deadline) {
			t.Fatalf("lost at %v: not before expires_at %v and the deadline %v", lost, expiresAt, deadline)
		}
		mu.Lock()
		if jeopardyAt.IsZero() || jeopardyAt.After(lost) || lostAt.IsZero() {
			t.Errorf("jeopardy at %v, lost callback at %v, Done at %v", jeopardyAt, lostAt, lost)
		}
		wantIs(t, lostErr, lockd.ErrSessionLost)
		mu.Unlock()
		err = s.Err()
		wantIs(t, err, lockd.ErrSessionLost)
		wantIs(t, err, lockd.ErrLeaseLost)
		var lostError *lockd.LostError
		if !errors.As(err, &lostError) || !lostError.Session || lostError.Name != s.Owner() {
			t.Fatalf("lost error: %#v", err)
		}
		// A lost session takes nothing more.
		wantIs(t, mutex.Lock(ctx), lockd.ErrSessionLost)

		// The server ends it at its expires_at, and every hold with it.
		time.Sleep(time.Until(expiresAt.Add(500 * time.Millisecond)))
		_, err = direct.GetLock(ctx, lock)
		wantIs(t, err, lockd.ErrNotFound)
		_, err = direct.GetSemaphore(ctx, semaphore)
		wantIs(t, err, lockd.ErrNotFound)
		_, _, err = direct.GetSession(ctx, s.ID())
		wantIs(t, err, lockd.ErrSessionNotFound)
		must(t, lockd.NewMutex(newSession(t, direct, 10*time.Second), lock).TryLock(ctx))
	})
}

// Jeopardy is raised by a failed keepalive and cleared by the next that gets through; the
// session lives on.
func TestSessionJeopardyAndSafe(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		server := sharedServer(t, backend)
		proxy := lockdtest.NewProxy(t, server.URL)
		ctx := testContext(t)
		jeopardy, safe := make(chan time.Time, 1), make(chan time.Time, 1)
		s := newSession(t, newClient(t, proxy.URL), 6*time.Second,
			lockd.WithJeopardy(func(*lockd.Session) { jeopardy <- time.Now() }),
			lockd.WithSafe(func(*lockd.Session) { safe <- time.Now() }))
		lock := lockdtest.Name("lock")
		must(t, lockd.NewMutex(s, lock).Lock(ctx))

		proxy.Cut()
		within(t, jeopardy, 10*time.Second, "jeopardy once cut off")
		if !s.InJeopardy() || s.Err() != nil {
			t.Fatalf("in jeopardy: %v, err %v", s.InJeopardy(), s.Err())
		}
		proxy.Restore()
		within(t, safe, 10*time.Second, "safe once through again")
		if s.InJeopardy() || s.Err() != nil {
			t.Fatalf("safe: in jeopardy %v, err %v", s.InJeopardy(), s.Err())
		}
		holders, err := newClient(t, server.URL).GetLock(ctx, lock)
		must(t, err)
		if holders[0].Session != s.ID() {
			t.Fatalf("holder: %+v", holders)
		}
	})
}

// A session ended behind the client's back is lost at the next keepalive (404), or at once when
// an acquire hears session-not-found.
func TestSessionEndedElsewhere(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)

		s := newSession(t, client, 3*time.Second)
		must(t, lockd.NewMutex(s, lockdtest.Name("lock")).Lock(ctx))
		endSession(t, client.BaseURL(), s.ID())
		closedWithin(t, s.Done(), 5*time.Second, "Done after the session was ended elsewhere")
		wantIs(t, s.Err(), lockd.ErrSessionLost)
		wantIs(t, s.Err(), lockd.ErrSessionNotFound)

		// Long TTL: no keepalive is due, the acquire is the first to hear of it.
		s = newSession(t, client, 60*time.Second)
		endSession(t, client.BaseURL(), s.ID())
		err := lockd.NewMutex(s, lockdtest.Name("lock")).TryLock(ctx)
		wantIs(t, err, lockd.ErrSessionLost)
		wantIs(t, err, lockd.ErrSessionNotFound)
		closedWithin(t, s.Done(), time.Second, "Done after an acquire heard session-not-found")
	})
}

// endSession ends a session with its id, as another process would.
func endSession(t *testing.T, base, id string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, base+"/sessions/"+id, nil)
	must(t, err)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE /sessions/%s: %d", id, resp.StatusCode)
	}
}

// forceRelease ends a lock's lease as an admin would (no API keys: every caller may).
func forceRelease(t *testing.T, base, name string) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodDelete, base+"/locks/"+name+"?force=true&reason=test", nil)
	must(t, err)
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("force-release of %s: %d", name, resp.StatusCode)
	}
}
