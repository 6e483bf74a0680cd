package lockd

// A session: one lease on the server that keeps every hold taken under it alive, kept alive
// here every TTL/3, given up before it can run out, and ended with every hold by Close.

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// SessionOption configures NewSession.
type SessionOption func(*sessionOptions)

type sessionOptions struct {
	owner     string
	lockDelay *time.Duration
	jeopardy  func(*Session)
	safe      func(*Session)
	lost      func(*Session, error)
}

// WithSessionOwner is the label every hold of the session shows as its owner (the session's id
// when not given). Two sessions with one label are still two holders.
func WithSessionOwner(owner string) SessionOption {
	return func(o *sessionOptions) { o.owner = owner }
}

// WithLockDelay keeps each hold's place from others for d once the session runs out (not when
// it is closed): whole seconds, 0 to 60. Without it, the server's default applies.
func WithLockDelay(d time.Duration) SessionOption {
	return func(o *sessionOptions) { o.lockDelay = &d }
}

// WithJeopardy calls f at the first keepalive that fails (no answer in time, a 5xx) while the
// session may still be alive, and again at the first failure after each recovery. It runs on
// the goroutine that keeps the session alive: keep it short.
func WithJeopardy(f func(*Session)) SessionOption {
	return func(o *sessionOptions) { o.jeopardy = f }
}

// WithSafe calls f at the first keepalive that gets through after a jeopardy.
func WithSafe(f func(*Session)) SessionOption {
	return func(o *sessionOptions) { o.safe = f }
}

// WithLost calls f once when the session is lost (after Done is closed), with the *LostError.
func WithLost(f func(*Session, error)) SessionOption {
	return func(o *sessionOptions) { o.lost = f }
}

// Session is a lockd session (POST /sessions) kept alive in the background. Mutex, RWMutex,
// Semaphore and Election hold under it, and every hold ends when it ends.
type Session struct {
	client  *Client
	info    SessionInfo
	ttl     time.Duration
	options sessionOptions
	keeper  *keeper

	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	jeopardy  bool
	closed    bool
	closeDone chan struct{}
	closeErr  error
	// held are the holds this client took under the session and has not released (kind and
	// name): an acquire of unknown outcome releases only what was not held before it.
	held map[holdKey]bool
}

type holdKey struct{ kind, name string }

// NewSession opens a session of ttl (whole seconds, at least 1 s) and keeps it alive every
// TTL/3 until Close, or until it is lost. The open is bounded by ctx and the client's timeout;
// ctx does not bound the session. An open whose outcome is unknown (ErrOutcomeUnknown) left at
// most an empty session behind, which runs out by itself.
func NewSession(ctx context.Context, client *Client, ttl time.Duration, options ...SessionOption) (*Session, error) {
	seconds, err := wholeSeconds("a session's TTL", ttl, time.Second)
	if err != nil {
		return nil, err
	}
	var o sessionOptions
	for _, option := range options {
		option(&o)
	}
	body := struct {
		TTLSeconds       int64  `json:"ttl_seconds"`
		Owner            string `json:"owner,omitempty"`
		LockDelaySeconds *int64 `json:"lock_delay_seconds,omitempty"`
	}{TTLSeconds: seconds, Owner: o.owner}
	if o.lockDelay != nil {
		delay, err := wholeSeconds("a lock-delay", *o.lockDelay, 0)
		if err != nil {
			return nil, err
		}
		body.LockDelaySeconds = &delay
	}
	var answer struct {
		Session SessionInfo `json:"session"`
	}
	sentAt := time.Now()
	if _, err := client.doJSON(ctx, request{method: http.MethodPost, path: "/sessions", body: body}, &answer); err != nil {
		return nil, err
	}
	s := &Session{client: client, info: answer.Session, ttl: ttl, options: o, held: map[holdKey]bool{}, closeDone: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	path := "/sessions/" + url.PathEscape(s.info.ID) + "/keepalive"
	k := newKeeper(ttl, sentAt, s.info.ExpiresAt)
	k.renew = func(ctx context.Context) (time.Time, error) {
		var answer struct {
			Session SessionInfo `json:"session"`
		}
		if _, err := client.doJSON(ctx, request{method: http.MethodPost, path: path}, &answer); err != nil {
			return time.Time{}, err
		}
		return answer.Session.ExpiresAt, nil
	}
	k.lostError = func(reason string, cause error) *LostError {
		return &LostError{Session: true, Name: s.info.Owner, Reason: reason, Err: cause}
	}
	k.failed = func(error) { s.setJeopardy(true) }
	k.renewed = func() { s.setJeopardy(false) }
	k.lostHook = func(err *LostError) {
		s.cancel()
		if o.lost != nil {
			o.lost(s, err)
		}
	}
	s.keeper = k
	k.start(sentAt)
	return s, nil
}

// ID is the session's id: anyone with it may act for the session, so keep it as secret as a
// key.
func (s *Session) ID() string { return s.info.ID }

// Owner is the label every hold of the session shows as its owner.
func (s *Session) Owner() string { return s.info.Owner }

// TTL is the session's TTL.
func (s *Session) TTL() time.Duration { return s.ttl }

// Client is the client the session was opened with.
func (s *Session) Client() *Client { return s.client }

// Done is closed when the session is lost, before it can have run out on the server (a
// keepalive was refused, or keepalives failed until Deadline was less than a margin away), or
// when it is closed. Err says which.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// Ctx is a context cancelled when Done is closed.
func (s *Session) Ctx() context.Context { return s.ctx }

// Err is nil while the session is kept alive; a *LostError (matching ErrSessionLost) once it
// is lost; ErrSessionClosed once closed.
func (s *Session) Err() error {
	if err := s.keeper.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrSessionClosed
	}
	return nil
}

// Deadline is the local time before which the session (and every hold) is surely still alive:
// the send time of the last keepalive that got through (or of the open), plus the TTL, on the
// monotonic clock.
func (s *Session) Deadline() time.Time { return s.keeper.Deadline() }

// ExpiresAt is the server's expires_at for the session, and every hold, as last seen.
func (s *Session) ExpiresAt() time.Time { return s.keeper.ExpiresAt() }

// InJeopardy is true from a failed keepalive until the next one gets through.
func (s *Session) InJeopardy() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.jeopardy
}

func (s *Session) setJeopardy(now bool) {
	s.mu.Lock()
	changed := s.jeopardy != now
	s.jeopardy = now
	s.mu.Unlock()
	if !changed {
		return
	}
	if now && s.options.jeopardy != nil {
		s.options.jeopardy(s)
	}
	if !now && s.options.safe != nil {
		s.options.safe(s)
	}
}

// Close stops the keepalives (one in flight is waited for) and ends the session, and every
// hold with it, at once (DELETE /sessions/{id}; retried briefly when its outcome is unknown).
// A session already ended is no error. When it cannot be ended, Close returns why, and the
// session runs out by itself at its TTL. Calling Close again waits for the first call and
// returns its answer.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return s.closeErr
	}
	s.closed = true
	s.mu.Unlock()
	s.keeper.stop()
	s.cancel()
	attempts := 3
	if s.keeper.Err() != nil {
		attempts = 1
	}
	r := request{method: http.MethodDelete, path: "/sessions/" + url.PathEscape(s.info.ID)}
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = s.client.do(ctx, r)
		cancel()
		if err == nil || isSessionNotFound(err) {
			err = nil
			break
		}
		if !isOutcomeUnknown(err) {
			break
		}
		time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
	}
	s.closeErr = err
	close(s.closeDone)
	return err
}

// hold runs an acquire under the session: refused at once when the session is lost or closed,
// cut short when it is lost meanwhile, cleaned up after when its outcome is unknown, and the
// session counted lost when the server says it has ended.
func (s *Session) hold(ctx context.Context, keys []holdKey, wait bool, try attempt) error {
	if err := s.Err(); err != nil {
		return err
	}
	ctx, stop := s.bind(ctx)
	defer stop()
	err := s.client.acquireLoop(ctx, wait, try)
	if err == nil {
		s.mu.Lock()
		for _, key := range keys {
			s.held[key] = true
		}
		s.mu.Unlock()
		return nil
	}
	if isOutcomeUnknown(err) {
		// It may have been granted: release it, unless the session held it before (then the
		// answer was at most a re-grant of what it holds).
		for _, key := range keys {
			s.mu.Lock()
			before := s.held[key]
			s.mu.Unlock()
			if !before {
				_ = s.release(key, 3)
			}
		}
	}
	if isSessionNotFound(err) {
		s.keeper.lose("an acquire answered session-not-found: the session has ended", err)
	}
	if lost := s.keeper.Err(); lost != nil {
		return lost
	}
	return err
}

// bind is ctx, also cancelled when the session is lost or closed.
func (s *Session) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-s.ctx.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// forget notes that a hold was given up.
func (s *Session) forget(key holdKey) {
	s.mu.Lock()
	delete(s.held, key)
	s.mu.Unlock()
}

// release gives up one hold of the session (the session and its other holds go on), retrying
// an outcome unknown up to attempts times.
func (s *Session) release(key holdKey, attempts int) error {
	r := s.releaseRequest(key)
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = s.client.do(ctx, r)
		cancel()
		if err == nil || !isOutcomeUnknown(err) {
			break
		}
		if attempt < attempts {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
	}
	return err
}

// releaseHold is the Unlock / Release / Resign of a recipe: bounded by ctx, once.
func (s *Session) releaseHold(ctx context.Context, key holdKey) error {
	_, err := s.client.do(ctx, s.releaseRequest(key))
	if err == nil || !isOutcomeUnknown(err) {
		// Released, or not the session's any more (it ended, or another holder has it).
		s.forget(key)
	}
	return err
}

// releaseRequest is the release of one hold of the session.
func (s *Session) releaseRequest(key holdKey) request {
	var path string
	switch key.kind {
	case "lock":
		path = "/locks/" + url.PathEscape(key.name)
	case "semaphore":
		path = "/semaphores/" + url.PathEscape(key.name)
	default:
		path = "/elections/" + url.PathEscape(key.name) + "/leader"
	}
	return request{method: http.MethodDelete, path: path, query: url.Values{"session": {s.info.ID}}}
}

func isOutcomeUnknown(err error) bool { return errors.Is(err, ErrOutcomeUnknown) }

func isSessionNotFound(err error) bool { return errors.Is(err, ErrSessionNotFound) }
