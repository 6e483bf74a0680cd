package lockd_test

// The live tests' frame: they need a lockd binary (LOCKD_BINARY, else the repository's debug
// build) and, for the PostgreSQL backend, a PostgreSQL that answers; without them they stop
// before the first test with one line that says what to do. Every test runs on each backend of
// LOCKD_GO_BACKENDS (default sqlite,postgres).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"lockd.dev/go/lockd"
	"lockd.dev/go/lockd/internal/lockdtest"
)

func TestMain(m *testing.M) {
	if missing := lockdtest.Missing(); missing != "" {
		fmt.Fprintln(os.Stderr, "go test: "+missing)
		os.Exit(1)
	}
	code := m.Run()
	stopShared()
	os.Exit(code)
}

// eachBackend runs f as a subtest on every backend.
func eachBackend(t *testing.T, f func(t *testing.T, backend string)) {
	for _, backend := range lockdtest.Backends() {
		backend := backend
		t.Run(backend, func(t *testing.T) { f(t, backend) })
	}
}

// The lockd of each backend that tests share when they touch only names of their own and
// leave the server as it was.
var shared struct {
	sync.Mutex
	servers   map[string]*lockdtest.Server
	databases []*lockdtest.Database
}

func sharedServer(t *testing.T, backend string) *lockdtest.Server {
	t.Helper()
	shared.Lock()
	defer shared.Unlock()
	if server := shared.servers[backend]; server != nil {
		return server
	}
	db, err := lockdtest.CreateDatabase(backend)
	if err != nil {
		t.Fatal(err)
	}
	shared.databases = append(shared.databases, db)
	server, err := lockdtest.StartServer(db)
	if err != nil {
		t.Fatal(err)
	}
	if shared.servers == nil {
		shared.servers = map[string]*lockdtest.Server{}
	}
	shared.servers[backend] = server
	return server
}

func stopShared() {
	shared.Lock()
	defer shared.Unlock()
	for _, server := range shared.servers {
		server.Stop()
	}
	for _, db := range shared.databases {
		if err := db.Drop(); err != nil {
			fmt.Fprintln(os.Stderr, "dropping a test database:", err)
		}
	}
}

func newClient(t *testing.T, url string, options ...lockd.Option) *lockd.Client {
	t.Helper()
	client, err := lockd.NewClient(url, options...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// newSession opens a session closed when the test ends.
func newSession(t *testing.T, client *lockd.Client, ttl time.Duration, options ...lockd.SessionOption) *lockd.Session {
	t.Helper()
	s, err := lockd.NewSession(testContext(t), client, ttl, options...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// testContext ends with the test, and after two minutes at the latest.
func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// must fails the test on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wantIs fails the test unless err matches target.
func wantIs(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("want an error matching %v, got %v", target, err)
	}
}

// problem is the *Problem in err, failing the test when there is none.
func problem(t *testing.T, err error) *lockd.Problem {
	t.Helper()
	var p *lockd.Problem
	if !errors.As(err, &p) {
		t.Fatalf("want a *lockd.Problem, got %T: %v", err, err)
	}
	return p
}

// within waits for ch to deliver, at most d.
func within[T any](t *testing.T, ch <-chan T, d time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("%s: nothing within %v", what, d)
	}
	var zero T
	return zero
}

// closedWithin waits for ch to be closed, at most d, and answers when it was.
func closedWithin(t *testing.T, ch <-chan struct{}, d time.Duration, what string) time.Time {
	t.Helper()
	select {
	case <-ch:
		return time.Now()
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
	}
	return time.Time{}
}
