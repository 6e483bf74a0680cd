package lockd

// An election under a session, as etcd's concurrency.Election: campaign until elected, proclaim
// a value, resign, read the leader, and observe every change of leader.

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

// Election is one of lockd's elections, campaigned for under a session.
type Election struct {
	session *Session
	name    string

	mu     sync.Mutex
	leader *Leader
}

// NewElection is the election name, campaigned for under s.
func NewElection(s *Session, name string) *Election {
	return &Election{session: s, name: name}
}

func (e *Election) key() holdKey { return holdKey{kind: "election", name: e.name} }

// Campaign waits until the session leads the election, or ctx ends (ctx.Err()), or the session
// is lost. value (any JSON value, nil for none) is what the leader proclaims once elected.
// Candidates wait in line, first come first served on each server. Campaigning again while
// leading keeps the term (and sets the value when one is given).
func (e *Election) Campaign(ctx context.Context, value interface{}) error {
	escaped, err := segment("election", e.name)
	if err != nil {
		return err
	}
	raw, err := rawValue(value)
	if err != nil {
		return err
	}
	var elected *Leader
	try := func(ctx context.Context, waitSeconds int64, timeout time.Duration) (bool, error) {
		body := struct {
			Session     string          `json:"session"`
			Value       json.RawMessage `json:"value,omitempty"`
			WaitSeconds int64           `json:"wait_seconds,omitempty"`
		}{e.session.ID(), raw, waitSeconds}
		var answer struct {
			Elected bool    `json:"elected"`
			Leader  *Leader `json:"leader"`
		}
		r := request{method: http.MethodPost, path: "/elections/" + escaped + "/campaign", body: body, timeout: timeout}
		if _, err := e.session.client.doJSON(ctx, r, &answer); err != nil {
			return false, err
		}
		if !answer.Elected || answer.Leader == nil || answer.Leader.Session != e.session.ID() {
			return false, nil
		}
		elected = answer.Leader
		return true, nil
	}
	if err := e.session.hold(ctx, []holdKey{e.key()}, true, try); err != nil {
		return err
	}
	e.mu.Lock()
	e.leader = elected
	e.mu.Unlock()
	return nil
}

// Proclaim sets the leader's value without another election (term and lease unchanged). Not
// leading is an error matching ErrNotLeader.
func (e *Election) Proclaim(ctx context.Context, value interface{}) error {
	escaped, err := segment("election", e.name)
	if err != nil {
		return err
	}
	raw, err := rawValue(value)
	if err != nil {
		return err
	}
	if raw == nil {
		raw = []byte("null")
	}
	body := struct {
		Session string          `json:"session"`
		Value   json.RawMessage `json:"value"`
	}{e.session.ID(), raw}
	var leader Leader
	r := request{method: http.MethodPost, path: "/elections/" + escaped + "/proclaim", body: body}
	if _, err := e.session.client.doJSON(ctx, r, &leader); err != nil {
		return notLeader(err)
	}
	e.mu.Lock()
	e.leader = &leader
	e.mu.Unlock()
	return nil
}

// Resign gives up the leadership; the session and its other holds go on. Not leading is an
// error matching ErrNotLeader.
func (e *Election) Resign(ctx context.Context) error {
	if _, err := segment("election", e.name); err != nil {
		return err
	}
	err := e.session.releaseHold(ctx, e.key())
	if err == nil || !isOutcomeUnknown(err) {
		e.mu.Lock()
		e.leader = nil
		e.mu.Unlock()
	}
	return notLeader(err)
}

// Leader is the election's leader now, whoever it is; ErrNoLeader when the office is vacant.
func (e *Election) Leader(ctx context.Context) (*Leader, error) {
	return e.session.client.GetLeader(ctx, e.name)
}

// Term is the session's term (the leader's fencing token) as elected or last proclaimed, 0
// when it does not lead through this Election.
func (e *Election) Term() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.leader == nil {
		return 0
	}
	return e.leader.Term
}

// Name is the election's name.
func (e *Election) Name() string { return e.name }

// Observe streams the election's leaders: the current one (or a vacancy) first, then every
// change, until ctx ends. See ObserveElection.
func (e *Election) Observe(ctx context.Context) <-chan LeaderEvent {
	return ObserveElection(ctx, e.session.client, e.name)
}

// notLeader marks a 403 or 404 of a proclaim or resign as ErrNotLeader.
func notLeader(err error) error {
	if p := problemOf(err); p != nil && (p.Status == http.StatusForbidden || p.Status == http.StatusNotFound) {
		return &kindError{kind: ErrNotLeader, err: err}
	}
	return err
}
