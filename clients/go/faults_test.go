package lockd_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

// lockd killed (SIGKILL) under a held Mutex and a WithLock: the session is lost and the
// function's context cancelled before the server's expires_at.
func TestServerKilledMidHold(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		holdThrough(t, backend, func(server *lockdtest.Server) { server.Kill() })
	})
}

// lockd frozen (SIGSTOP): the same, with requests hanging instead of refused.
func TestServerFrozenMidHold(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		holdThrough(t, backend, func(server *lockdtest.Server) {
			must(t, server.Signal(syscall.SIGSTOP))
		})
	})
}

type lostLease struct {
	at, expiresAt, deadline time.Time
}

func holdThrough(t *testing.T, backend string, fault func(*lockdtest.Server)) {
	server := lockdtest.Start(t, lockdtest.NewDatabase(t, backend))
	client := newClient(t, server.URL, lockd.WithTimeout(5*time.Second))
	ctx := testContext(t)
	const ttl = 3 * time.Second

	s := newSession(t, client, ttl)
	mutex := lockd.NewMutex(s, lockdtest.Name("mutex"))
	must(t, mutex.Lock(ctx))

	started := make(chan *lockd.Lease, 1)
	lost := make(chan lostLease, 1)
	returned := make(chan error, 1)
	go func() {
		returned <- lockd.WithLock(ctx, client, lockdtest.Name("with-lock"), ttl, func(work context.Context, lease *lockd.Lease) error {
			started <- lease
			<-work.Done()
			lost <- lostLease{at: time.Now(), expiresAt: lease.ExpiresAt(), deadline: lease.Deadline()}
			return work.Err()
		})
	}()
	lease := within(t, started, 15*time.Second, "WithLock's function")

	// Both renewed at least once before the fault.
	time.Sleep(ttl/3 + 500*time.Millisecond)
	if s.Err() != nil {
		t.Fatalf("session lost before the fault: %v", s.Err())
	}
	fault(server)

	sessionLost := closedWithin(t, s.Done(), 3*ttl, "the session's Done")
	sessionExpires, sessionDeadline := s.ExpiresAt(), s.Deadline()
	leaseLost := within(t, lost, 3*ttl, "WithLock's context")
	t.Logf("%s: session lost %v before its expires_at (%v before its deadline); WithLock's context cancelled %v before its expires_at (%v before its deadline)",
		backend,
		sessionExpires.Sub(sessionLost).Round(time.Millisecond), sessionDeadline.Sub(sessionLost).Round(time.Millisecond),
		leaseLost.expiresAt.Sub(leaseLost.at).Round(time.Millisecond), leaseLost.deadline.Sub(leaseLost.at).Round(time.Millisecond))
	if !sessionLost.Before(sessionExpires) || !sessionLost.Before(sessionDeadline) {
		t.Errorf("session lost at %v, not before its expires_at %v and deadline %v", sessionLost, sessionExpires, sessionDeadline)
	}
	if !leaseLost.at.Before(leaseLost.expiresAt) || !leaseLost.at.Before(leaseLost.deadline) {
		t.Errorf("WithLock's context cancelled at %v, not before its expires_at %v and deadline %v", leaseLost.at, leaseLost.expiresAt, leaseLost.deadline)
	}
	if lease.FencingToken < 1 {
		t.Errorf("lease: %+v", lease)
	}
	wantIs(t, s.Err(), lockd.ErrSessionLost)
	// WithLock returns the loss, not the function's own error.
	wantIs(t, within(t, returned, 15*time.Second, "WithLock's return"), lockd.ErrLeaseLost)
}

// An acquire whose answer never comes (a proxy passes it to lockd and closes the connection once
// lockd answers) may have been granted: it is released before its error is returned, so it
// leaves no lease behind; what the session held before the acquire is kept.
func TestUnknownOutcomeReleased(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		server := sharedServer(t, backend)
		proxy := lockdtest.NewProxy(t, server.URL)
		// A connection per request, so that each request meets the proxy's mode of its time.
		oneShot := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		through := newClient(t, proxy.URL, lockd.WithHTTPClient(oneShot))
		direct := newClient(t, server.URL)
		ctx := testContext(t)
		s := newSession(t, through, 60*time.Second)
		kept, fresh, lease := lockdtest.Name("kept"), lockdtest.Name("fresh"), lockdtest.Name("lease")
		keptMutex := lockd.NewMutex(s, kept)
		must(t, keptMutex.Lock(ctx))

		proxy.DropAnswers(true)
		wantIs(t, lockd.NewMutex(s, fresh).TryLock(ctx), lockd.ErrOutcomeUnknown)
		wantIs(t, keptMutex.TryLock(ctx), lockd.ErrOutcomeUnknown)
		err := lockd.WithLock(ctx, through, lease, 30*time.Second, func(context.Context, *lockd.Lease) error {
			t.Error("WithLock ran its function without an answer to its acquire")
			return nil
		})
		wantIs(t, err, lockd.ErrOutcomeUnknown)
		proxy.DropAnswers(false)

		// Granted, then released again by the client.
		for _, name := range []string{fresh, lease} {
			_, err := direct.GetLock(ctx, name)
			wantIs(t, err, lockd.ErrNotFound)
			if events := historyEvents(t, server.URL, name); strings.Join(events, ",") != "released,granted" {
				t.Errorf("%s: history %v, want released after granted", name, events)
			}
		}
		// A re-grant of what the session held: kept.
		holders, err := direct.GetLock(ctx, kept)
		must(t, err)
		if holders[0].Session != s.ID() {
			t.Fatalf("the session's earlier lock: %+v", holders)
		}
	})
}

// historyEvents is the lock's history, newest first (GET /locks/{name}/history).
func historyEvents(t *testing.T, base, name string) []string {
	t.Helper()
	resp, err := http.Get(base + "/locks/" + url.PathEscape(name) + "/history")
	must(t, err)
	defer resp.Body.Close()
	var page struct {
		Records []struct {
			Event string `json:"event"`
		} `json:"records"`
	}
	must(t, json.NewDecoder(resp.Body).Decode(&page))
	events := []string{}
	for _, record := range page.Records {
		events = append(events, record.Event)
	}
	return events
}
