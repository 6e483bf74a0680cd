package lockd_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

// WithLock renews while its function runs and sends nothing after its release, even when the
// function returns just as a renewal is due (TTL/3 = 1 s): lockd's audit log shows each owner's
// grant, its renewals, its release, and nothing after.
func TestWithLockNoRenewalAfterRelease(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		server := lockdtest.Start(t, lockdtest.NewDatabase(t, backend))
		client := newClient(t, server.URL)
		ctx := testContext(t)
		var owners []string
		for _, hold := range []time.Duration{400, 990, 1000, 1005, 1020, 2010} {
			owner := lockdtest.Name(fmt.Sprintf("release-%d", hold))
			owners = append(owners, owner)
			must(t, lockd.WithLock(ctx, client, lockdtest.Name("race"), 3*time.Second, func(ctx context.Context, lease *lockd.Lease) error {
				if lease.Owner != owner {
					t.Errorf("owner %q, want %q", lease.Owner, owner)
				}
				time.Sleep(hold * time.Millisecond)
				return ctx.Err()
			}, lockd.WithOwner(owner)))
		}
		time.Sleep(1500 * time.Millisecond) // a renewal period and more: a stray renewal shows by now
		events := server.Audit()
		renewed := 0
		for _, owner := range owners {
			var mine []string
			for _, e := range events {
				if e.Owner == owner {
					mine = append(mine, e.Event)
				}
			}
			joined := strings.Join(mine, ",")
			if len(mine) < 2 || mine[0] != "granted" || mine[len(mine)-1] != "released" || strings.Contains(joined, "not_found") {
				t.Errorf("%s: audit %s, want granted, renewals, released, nothing after", owner, joined)
			}
			if strings.Contains(joined, "renewed") {
				renewed++
			}
		}
		if renewed < 2 {
			t.Errorf("only %d of the holds were renewed before their release: %v", renewed, events)
		}
	})
}

// A lease force-released by an admin: the next renewal is refused (404), and WithLock cancels
// its function's context at once and returns the loss.
func TestWithLockForceReleased(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		server := sharedServer(t, backend)
		client := newClient(t, server.URL)
		ctx := testContext(t)
		name := lockdtest.Name("forced")
		var cancelledAfter time.Duration
		err := lockd.WithLock(ctx, client, name, 3*time.Second, func(work context.Context, lease *lockd.Lease) error {
			forceRelease(t, server.URL, name)
			forcedAt := time.Now()
			<-work.Done()
			cancelledAfter = time.Since(forcedAt)
			return nil
		})
		wantIs(t, err, lockd.ErrLeaseLost)
		wantIs(t, err, lockd.ErrNotFound)
		if cancelledAfter > 2*time.Second {
			t.Fatalf("cancelled %v after the force-release: later than the first renewal (1 s)", cancelledAfter)
		}
	})
}
