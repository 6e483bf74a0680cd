package lockd_test

import (
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

func TestSemaphore(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		client := newClient(t, sharedServer(t, backend).URL)
		ctx := testContext(t)
		name := lockdtest.Name("exports")
		a := lockd.NewSemaphore(newSession(t, client, 10*time.Second), name, 3)
		b := lockd.NewSemaphore(newSession(t, client, 10*time.Second), name, 3)
		c := lockd.NewSemaphore(newSession(t, client, 10*time.Second, lockd.WithSessionOwner("exporter-c")), name, 3)

		must(t, a.Acquire(ctx, 2))
		if p := a.Permit(); p == nil || p.Permits != 2 || p.Limit != 3 || p.FencingToken < 1 {
			t.Fatalf("a's permit: %+v", p)
		}
		wantIs(t, b.TryAcquire(ctx, 2), lockd.ErrLocked)
		must(t, b.Acquire(ctx, 1))
		status, err := client.GetSemaphore(ctx, name)
		must(t, err)
		if status.InUse != 3 || status.Available != 0 || len(status.Holders) != 2 {
			t.Fatalf("status: %+v", status)
		}

		granted := make(chan error, 1)
		go func() { granted <- c.Acquire(ctx, 2) }()
		select {
		case err := <-granted:
			t.Fatalf("Acquire returned with no permits free: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
		must(t, a.Release(ctx))
		must(t, within(t, granted, 15*time.Second, "the waiting Acquire"))
		permit := c.Permit()
		if permit.Permits != 2 || permit.FencingToken <= b.Permit().FencingToken {
			t.Fatalf("c's permit %+v after b's %+v", permit, b.Permit())
		}
		fence, err := client.CheckSemaphoreFence(ctx, name, permit.FencingToken)
		must(t, err)
		if !fence.Valid || fence.Permit == nil || fence.Permit.Owner != "exporter-c" {
			t.Fatalf("fence: %+v", fence)
		}

		// Permits outside 1..limit never reach the server.
		if err := b.Acquire(ctx, 0); err == nil {
			t.Fatal("0 permits were asked for")
		}
		if err := b.Acquire(ctx, 4); err == nil {
			t.Fatal("4 permits of 3 were asked for")
		}
		must(t, b.Release(ctx))
		must(t, c.Release(ctx))
		wantIs(t, c.Release(ctx), lockd.ErrNotFound)
		_, err = client.GetSemaphore(ctx, name)
		wantIs(t, err, lockd.ErrNotFound)
	})
}
