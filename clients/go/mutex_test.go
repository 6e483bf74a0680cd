package lockd_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

func TestMutex(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)
		name := lockdtest.Name("mutex")
		a := newSession(t, client, 10*time.Second, lockd.WithSessionOwner("worker-a"))
		b := newSession(t, client, 10*time.Second, lockd.WithSessionOwner("worker-b"))
		ma, mb := lockd.NewMutex(a, name), lockd.NewMutex(b, name)

		must(t, ma.Lock(ctx))
		first := ma.Lease()
		if first == nil || first.Session != a.ID() || first.Owner != "worker-a" || first.Mode != lockd.Exclusive || first.FencingToken < 1 {
			t.Fatalf("lease: %+v", first)
		}
		// Locking again is a re-grant: the same token.
		must(t, ma.Lock(ctx))
		if token := ma.Lease().FencingToken; token != first.FencingToken {
			t.Fatalf("re-grant: token %d, want %d", token, first.FencingToken)
		}

		wantIs(t, mb.TryLock(ctx), lockd.ErrLocked)
		if mb.Lease() != nil {
			t.Fatal("a refused TryLock left a lease")
		}
		// Lock waits as long as its context lets it.
		short, cancel := context.WithTimeout(ctx, 1500*time.Millisecond)
		err := mb.Lock(short)
		cancel()
		wantIs(t, err, context.DeadlineExceeded)

		granted := make(chan error, 1)
		go func() { granted <- mb.Lock(ctx) }()
		select {
		case err := <-granted:
			t.Fatalf("Lock returned while another session held the lock: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		must(t, ma.Unlock(ctx))
		if ma.Lease() != nil {
			t.Fatal("Unlock left the lease")
		}
		must(t, within(t, granted, 15*time.Second, "the waiting Lock"))
		second := mb.Lease()
		if second.FencingToken <= first.FencingToken || second.Owner != "worker-b" {
			t.Fatalf("the next holder: %+v after token %d", second, first.FencingToken)
		}

		// The server's fence check: the old token is stale, the new one live.
		fence, err := client.CheckFence(ctx, name, first.FencingToken)
		must(t, err)
		if fence.Valid || fence.Current != second.FencingToken {
			t.Fatalf("old token: %+v", fence)
		}
		fence, err = client.CheckFence(ctx, name, second.FencingToken)
		must(t, err)
		if !fence.Valid || fence.Lock == nil || fence.Lock.Owner != "worker-b" || fence.Lock.FencingToken != second.FencingToken {
			t.Fatalf("live token: %+v", fence)
		}

		must(t, mb.Unlock(ctx))
		fence, err = client.CheckFence(ctx, name, second.FencingToken)
		must(t, err)
		if fence.Valid || fence.Current != 0 {
			t.Fatalf("released token: %+v", fence)
		}
		// Unlocking what the session does not hold.
		wantIs(t, mb.Unlock(ctx), lockd.ErrNotFound)
		_, err = client.GetLock(ctx, name)
		wantIs(t, err, lockd.ErrNotFound)
	})
}

func TestRWMutex(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)
		name := lockdtest.Name("catalog")
		r1 := lockd.NewRWMutex(newSession(t, client, 10*time.Second), name)
		r2 := lockd.NewRWMutex(newSession(t, client, 10*time.Second), name)
		w := lockd.NewRWMutex(newSession(t, client, 10*time.Second), name)
		late := lockd.NewRWMutex(newSession(t, client, 10*time.Second), name)

		must(t, r1.RLock(ctx))
		must(t, r2.RLock(ctx))
		holders, err := client.GetLock(ctx, name)
		must(t, err)
		if len(holders) != 2 || holders[0].Mode != lockd.Shared || holders[0].FencingToken == holders[1].FencingToken {
			t.Fatalf("two readers: %+v", holders)
		}
		if r1.Lease().Mode != lockd.Shared || r1.Lease().FencingToken != holders[0].FencingToken {
			t.Fatalf("reader's lease: %+v, holders %+v", r1.Lease(), holders)
		}
		// A reader without a session beside them.
		must(t, lockd.WithLock(ctx, client, name, 5*time.Second, func(ctx context.Context, lease *lockd.Lease) error {
			holders, err := client.GetLock(ctx, name)
			if err != nil || len(holders) != 3 || holders[2].FencingToken != lease.FencingToken || holders[2].Mode != lockd.Shared {
				t.Errorf("a third reader: %+v, %v (lease %+v)", holders, err, lease)
			}
			return nil
		}, lockd.WithMode(lockd.Shared)))
		wantIs(t, w.TryLock(ctx), lockd.ErrLocked)
		if err := r1.Unlock(ctx); err == nil || errors.Is(err, lockd.ErrNotFound) {
			t.Fatalf("Unlock of a shared hold: %v", err)
		}

		// A waiting writer holds later readers back on its server.
		writer := make(chan error, 1)
		go func() { writer <- w.Lock(ctx) }()
		waitUntilWaiting(t, client.BaseURL(), name)
		wantIs(t, late.TryRLock(ctx), lockd.ErrLocked)

		must(t, r1.RUnlock(ctx))
		must(t, r2.RUnlock(ctx))
		must(t, within(t, writer, 15*time.Second, "the waiting writer"))
		if lease := w.Lease(); lease.Mode != lockd.Exclusive || lease.FencingToken <= holders[1].FencingToken {
			t.Fatalf("writer's lease: %+v after readers %+v", lease, holders)
		}
		wantIs(t, late.TryRLock(ctx), lockd.ErrLocked)
		must(t, w.Unlock(ctx))
		must(t, late.RLock(ctx))
		must(t, late.RUnlock(ctx))
	})
}

// waitUntilWaiting returns once an acquire waits for the lock on the server at base (the
// listing's `waiting`), failing the test after 15 s.
func waitUntilWaiting(t *testing.T, base, name string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/locks?prefix=" + url.QueryEscape(name))
		must(t, err)
		var page struct {
			Locks []struct {
				Resource string `json:"resource"`
				Waiting  int    `json:"waiting"`
			} `json:"locks"`
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		must(t, err)
		for _, lock := range page.Locks {
			if lock.Resource == name && lock.Waiting > 0 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no acquire waited for %s within 15 s", name)
}
