package lockd_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

// Every problem+json answer is a *Problem that errors.As finds, matched by errors.Is against
// the sentinel of its type; the client's own conditions have sentinels of their own.
func TestTypedErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, backend string) {
		dir := t.TempDir()
		key := "go-key-" + lockdtest.Name("acme")
		keys := filepath.Join(dir, "keys")
		must(t, os.WriteFile(keys, []byte(fmt.Sprintf("acme %x\n", sha256.Sum256([]byte(key)))), 0o600))
		limits := filepath.Join(dir, "limits")
		must(t, os.WriteFile(limits, []byte("acme max_sessions=1\n"), 0o600))
		server := lockdtest.Start(t, lockdtest.NewDatabase(t, backend), "--api-keys-file", keys, "--tenant-limits-file", limits)
		ctx := testContext(t)

		// 401: no key.
		_, err := newClient(t, server.URL).GetLock(ctx, "anything")
		wantIs(t, err, lockd.ErrUnauthorized)
		if p := problem(t, err); p.Status != 401 || p.Slug() != "unauthorized" {
			t.Fatalf("401: got %+v", p)
		}
		if errors.Is(err, lockd.ErrNotFound) || errors.Is(err, lockd.ErrOutcomeUnknown) {
			t.Fatalf("a 401 matches another sentinel: %v", err)
		}

		client := newClient(t, server.URL, lockd.WithAPIKey(key))

		// 404 not-found, with the request path as the instance.
		name := lockdtest.Name("errors")
		_, err = client.GetLock(ctx, name)
		wantIs(t, err, lockd.ErrNotFound)
		if errors.Is(err, lockd.ErrSessionNotFound) {
			t.Fatalf("not-found matches ErrSessionNotFound: %v", err)
		}
		if p := problem(t, err); p.Status != 404 || p.Instance != "/locks/"+name || p.Type != "/problems/not-found" {
			t.Fatalf("404: got %+v", p)
		}

		// 422, with its field errors.
		_, err = client.GetLock(ctx, "bad\x01name")
		wantIs(t, err, lockd.ErrInvalid)
		p := problem(t, err)
		if p.Status != 422 || p.Slug() != "validation-failed" || len(p.Errors) != 1 || p.Errors[0].Field != "resource" || p.Errors[0].Code != "control_character" {
			t.Fatalf("422: got %+v", p)
		}
		if _, ok := p.Extensions["errors"]; !ok {
			t.Fatalf("422: the errors member is not among the extensions: %+v", p.Extensions)
		}

		// 404 session-not-found.
		_, _, err = client.GetSession(ctx, "AAAAAAAAAAAAAAAAAAAAAA")
		wantIs(t, err, lockd.ErrSessionNotFound)
		if errors.Is(err, lockd.ErrNotFound) {
			t.Fatalf("session-not-found matches ErrNotFound: %v", err)
		}

		// 429 quota-exceeded: the tenant may have one live session.
		session := newSession(t, client, 10*time.Second)
		_, err = lockd.NewSession(ctx, client, 10*time.Second)
		wantIs(t, err, lockd.ErrQuotaExceeded)
		if p := problem(t, err); p.Status != 429 || p.Quota != "max_sessions" || p.Allowed != 1 || p.RetryAfter != time.Second {
			t.Fatalf("quota: got %+v", p)
		}

		// ErrLocked (no problem: lockd answers acquired false) and 403 forbidden, against a lock
		// held by a plain owner.
		held := lockdtest.Name("held")
		must(t, lockd.WithLock(ctx, client, held, 10*time.Second, func(ctx context.Context, lease *lockd.Lease) error {
			err := lockd.NewMutex(session, held).TryLock(ctx)
			wantIs(t, err, lockd.ErrLocked)
			var p *lockd.Problem
			if errors.As(err, &p) {
				t.Errorf("ErrLocked carries a problem: %+v", p)
			}
			err = lockd.NewMutex(session, held).Unlock(ctx)
			wantIs(t, err, lockd.ErrForbidden)
			if p := problem(t, err); p.Status != 403 {
				t.Errorf("forbidden: got %+v", p)
			}
			return nil
		}))

		// 409 mode-mismatch: the session reads the lock, then asks for it exclusively.
		catalog := lockdtest.Name("catalog")
		must(t, lockd.NewRWMutex(session, catalog).RLock(ctx))
		err = lockd.NewMutex(session, catalog).TryLock(ctx)
		wantIs(t, err, lockd.ErrConflict)
		if p := problem(t, err); p.Status != 409 || p.Slug() != "mode-mismatch" {
			t.Fatalf("mode-mismatch: got %+v", p)
		}

		// 409 limit-mismatch, with the holders' limit.
		exports := lockdtest.Name("exports")
		must(t, lockd.NewSemaphore(session, exports, 3).Acquire(ctx, 1))
		err = lockd.NewSemaphore(session, exports, 5).TryAcquire(ctx, 1)
		wantIs(t, err, lockd.ErrConflict)
		if p := problem(t, err); p.Slug() != "limit-mismatch" || p.Limit != 3 {
			t.Fatalf("limit-mismatch: got %+v", p)
		}

		// No answer at all: a port nothing listens on.
		listener, err := net.Listen("tcp", "127.0.0.1:0")
		must(t, err)
		closed := "http://" + listener.Addr().String()
		must(t, listener.Close())
		_, err = newClient(t, closed).GetLock(ctx, "x")
		wantIs(t, err, lockd.ErrOutcomeUnknown)
		var requestErr *lockd.RequestError
		if !errors.As(err, &requestErr) || requestErr.Method != "GET" || requestErr.Path != "/locks/x" {
			t.Fatalf("no answer: got %T %v", err, err)
		}

		// Bad input is refused before anything is sent.
		if _, err := lockd.NewClient("127.0.0.1:8080"); err == nil {
			t.Fatal("a base URL without a scheme was accepted")
		}
		if _, err := lockd.NewSession(ctx, client, 1500*time.Millisecond); err == nil {
			t.Fatal("a TTL of 1.5 s was accepted")
		}
		if err := lockd.NewMutex(session, "").Lock(ctx); err == nil {
			t.Fatal("an empty lock name was accepted")
		}
	})
}
