// Package lockdtest starts real lockd servers for the client's tests: the binary named by
// LOCKD_BINARY (else the repository's debug build), on a temporary SQLite file or on a
// PostgreSQL database of its own, created and dropped with psql.
package lockdtest

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary is the lockd the tests start: LOCKD_BINARY, else target/debug/lockd of the
// repository (the tests run in clients/go).
func Binary() string {
	if binary := os.Getenv("LOCKD_BINARY"); binary != "" {
		return binary
	}
	path, err := filepath.Abs(filepath.Join("..", "..", "target", "debug", "lockd"))
	if err != nil {
		return filepath.Join("..", "..", "target", "debug", "lockd")
	}
	return path
}

// AdminURL is the PostgreSQL server the tests create their databases on:
// LOCKD_TEST_DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test.
func AdminURL() string {
	if u := os.Getenv("LOCKD_TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test"
}

// Backends are the backends every test runs on: LOCKD_GO_BACKENDS, default sqlite,postgres.
func Backends() []string {
	value := os.Getenv("LOCKD_GO_BACKENDS")
	if value == "" {
		value = "sqlite,postgres"
	}
	return strings.Split(value, ",")
}

// Missing is what the tests lack, in one line that says how to get it; "" when nothing is.
func Missing() string {
	binary := Binary()
	info, err := os.Stat(binary)
	if err != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		if os.Getenv("LOCKD_BINARY") != "" {
			return fmt.Sprintf("LOCKD_BINARY=%s is not an executable file: point it at a lockd binary, or unset it and run `cargo build -p lockd` at the repository's root", binary)
		}
		return fmt.Sprintf("no lockd binary at %s: run `cargo build -p lockd` at the repository's root, or set LOCKD_BINARY=/path/to/lockd", binary)
	}
	for _, backend := range Backends() {
		switch backend {
		case "sqlite":
		case "postgres":
			if _, err := exec.LookPath("psql"); err != nil {
				return "psql is not installed, and the PostgreSQL backend's tests use it: install PostgreSQL (scripts/ensure-postgres, as root), or test on SQLite only with LOCKD_GO_BACKENDS=sqlite"
			}
			if err := psql("SELECT 1"); err != nil {
				return fmt.Sprintf("PostgreSQL does not answer at %s, and the PostgreSQL backend's tests need it: start one (scripts/ensure-postgres, as root), set LOCKD_TEST_DATABASE_URL, or test on SQLite only with LOCKD_GO_BACKENDS=sqlite", shown(AdminURL()))
			}
		default:
			return fmt.Sprintf("LOCKD_GO_BACKENDS names %q: the backends are sqlite and postgres", backend)
		}
	}
	return ""
}

func shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(an unreadable URL)"
	}
	return u.Redacted()
}

func psql(sql string) error {
	out, err := exec.Command("psql", AdminURL(), "-X", "-v", "ON_ERROR_STOP=1", "-qtAc", sql).CombinedOutput()
	if err != nil {
		return fmt.Errorf("psql %q: %v: %s", sql, err, strings.TrimSpace(string(out)))
	}
	return nil
}

// Database is a database for lockd: a SQLite file in a temporary directory, or a PostgreSQL
// database of its own. Several lockd may share it.
type Database struct {
	Backend string
	URL     string
	drop    func() error
}

// NewDatabase makes a database on backend, removed when the test ends.
func NewDatabase(t testing.TB, backend string) *Database {
	t.Helper()
	db, err := CreateDatabase(backend)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Drop(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// CreateDatabase makes a database on backend; Drop removes it.
func CreateDatabase(backend string) (*Database, error) {
	switch backend {
	case "sqlite":
		dir, err := os.MkdirTemp("", "lockd-go-")
		if err != nil {
			return nil, err
		}
		return &Database{Backend: backend, URL: "sqlite://" + filepath.Join(dir, "locks.db"), drop: func() error { return os.RemoveAll(dir) }}, nil
	case "postgres":
		name := "lockd_go_" + randomHex(6)
		if err := psql("CREATE DATABASE " + name); err != nil {
			return nil, err
		}
		u, err := url.Parse(AdminURL())
		if err != nil {
			return nil, fmt.Errorf("LOCKD_TEST_DATABASE_URL: %w", err)
		}
		u.Path = "/" + name
		return &Database{Backend: backend, URL: u.String(), drop: func() error {
			return psql("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		}}, nil
	}
	return nil, fmt.Errorf("unknown backend %q", backend)
}

// Drop removes the database.
func (d *Database) Drop() error { return d.drop() }

// Server is a running lockd.
type Server struct {
	// URL is where it serves: http://127.0.0.1:PORT.
	URL string
	cmd *exec.Cmd

	mu     sync.Mutex
	lines  []string
	exited chan struct{}
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// Start runs lockd on db with extra arguments, stopped when the test ends.
func Start(t testing.TB, db *Database, args ...string) *Server {
	t.Helper()
	s, err := StartServer(db, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartServer runs lockd on db with extra arguments, on a free port of 127.0.0.1, and waits
// until it serves (at most 30 s). Stop ends it.
func StartServer(db *Database, args ...string) (*Server, error) {
	cmd := exec.Command(Binary(), append([]string{"serve", "--bind", "127.0.0.1:0", "--database-url", db.URL}, args...)...)
	env := []string{}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DATABASE_URL=") || strings.HasPrefix(kv, "RUST_LOG=") || strings.HasPrefix(kv, "LOCKD_") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "LOCKD_LOG=warn,lockd::audit=info", "LOCKD_LOG_FORMAT=json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", Binary(), err)
	}
	s := &Server{cmd: cmd, exited: make(chan struct{})}
	found := make(chan string, 1)
	go func() {
		reader := bufio.NewReader(stderr)
		for {
			line, err := reader.ReadString('\n')
			if line != "" {
				line = strings.TrimRight(line, "\n")
				if m := listening.FindStringSubmatch(line); m != nil {
					select {
					case found <- m[1]:
					default:
					}
				}
				s.mu.Lock()
				s.lines = append(s.lines, line)
				s.mu.Unlock()
			}
			if err != nil {
				if err != io.EOF {
					s.mu.Lock()
					s.lines = append(s.lines, "(reading stderr: "+err.Error()+")")
					s.mu.Unlock()
				}
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	select {
	case s.URL = <-found:
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("lockd exited before serving: %s", s.Log())
	case <-time.After(30 * time.Second):
		s.Stop()
		return nil, fmt.Errorf("lockd did not serve within 30 s: %s", s.Log())
	}
}

// Log is what lockd wrote to stderr so far (its audit log in JSON among it).
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "\n")
}

// AuditEvent is one line of lockd's audit log: its event and owner.
type AuditEvent struct {
	Event string
	Owner string
}

// Audit is lockd's audit log so far (the lockd::audit lines of its stderr), in order.
func (s *Server) Audit() []AuditEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var events []AuditEvent
	for _, line := range s.lines {
		var parsed struct {
			Target string `json:"target"`
			Fields struct {
				Event string `json:"event"`
				Owner string `json:"owner"`
			} `json:"fields"`
		}
		if json.Unmarshal([]byte(line), &parsed) != nil || parsed.Target != "lockd::audit" {
			continue
		}
		events = append(events, AuditEvent{Event: parsed.Fields.Event, Owner: parsed.Fields.Owner})
	}
	return events
}

// Signal sends sig to lockd (SIGSTOP freezes it, SIGCONT wakes it).
func (s *Server) Signal(sig syscall.Signal) error {
	return s.cmd.Process.Signal(sig)
}

// Kill ends lockd with SIGKILL and waits until it has exited.
func (s *Server) Kill() {
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
}

// Stop ends lockd (woken first if frozen): SIGTERM, SIGKILL after 5 s.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		s.Kill()
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

// Name is a name unique to this run: prefix plus a random part.
func Name(prefix string) string { return prefix + "-" + randomHex(4) }
