package lockd

// An election under a session, as etcd's concurrency.Election: campaign until elected, proclaim
// a value, resign, read the leader, and observe every change of leader.

import (
	"context"
	"encoding/json"
	"net/http"
	"time"
)

// Election is one of lockd's elections, campaigned for under a session.
type Election struct {
	grant grant[Leader]
}

// NewElection is the election name, campaigned for under s.
func NewElection(s *Session, name string) *Election {
	return &Election{grant: grant[Leader]{session: s, key: holdKey{kind: "election", name: name}}}
}

// Campaign waits until the session leads the election, or ctx ends (ctx.Err()), or the session
// is lost. value (any JSON value, nil for none) is what the leader proclaims once elected.
// Candidates wait in line, first come first served on each server. Campaigning again while
// leading keeps the term (and sets the value when one is given).
func (e *Election) Campaign(ctx context.Context, value interface{}) error {
	escaped, err := segment("election", e.Name())
	if err != nil {
		return err
	}
	raw, err := rawValue(value)
	if err != nil {
		return err
	}
	session := e.grant.session
	return e.grant.acquire(ctx, true, func(ctx context.Context, waitSeconds int64, timeout time.Duration) (*Leader, error) {
		body := struct {
			Session     string          `json:"session"`
			Value       json.RawMessage `json:"value,omitempty"`
			WaitSeconds int64           `json:"wait_seconds,omitempty"`
		}{session.ID(), raw, waitSeconds}
		var answer struct {
			Elected bool    `json:"elected"`
			Leader  *Leader `json:"leader"`
		}
		r := request{method: http.MethodPost, path: "/elections/" + escaped + "/campaign", body: body, timeout: timeout}
		if _, err := session.client.doJSON(ctx, r, &answer); err != nil {
			return nil, err
		}
		if !answer.Elected || answer.Leader == nil || answer.Leader.Session != session.ID() {
			return nil, nil
		}
		return answer.Leader, nil
	})
}

// Proclaim sets the leader's value without another election (term and lease unchanged). Not
// leading is an error matching ErrNotLeader.
func (e *Election) Proclaim(ctx context.Context, value interface{}) error {
	escaped, err := segment("election", e.Name())
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
	}{e.grant.session.ID(), raw}
	var leader Leader
	r := request{method: http.MethodPost, path: "/elections/" + escaped + "/proclaim", body: body}
	if _, err := e.grant.session.client.doJSON(ctx, r, &leader); err != nil {
		return notLeader(err)
	}
	e.grant.set(&leader)
	return nil
}

// Resign gives up the leadership; the session and its other holds go on. Not leading is an
// error matching ErrNotLeader.
func (e *Election) Resign(ctx context.Context) error {
	if _, err := segment("election", e.Name()); err != nil {
		return err
	}
	return notLeader(e.grant.release(ctx))
}

// Leader is the election's leader now, whoever it is; ErrNoLeader when the office is vacant.
func (e *Election) Leader(ctx context.Context) (*Leader, error) {
	return e.grant.session.client.GetLeader(ctx, e.Name())
}

// Term is the session's term (the leader's fencing token) as elected or last proclaimed, 0
// when it does not lead through this Election.
func (e *Election) Term() int64 {
	if leader := e.grant.get(); leader != nil {
		return leader.Term
	}
	return 0
}

// Name is the election's name.
func (e *Election) Name() string { return e.grant.key.name }

// Observe streams the election's leaders: the current one (or a vacancy) first, then every
// change, until ctx ends. See ObserveElection.
func (e *Election) Observe(ctx context.Context) <-chan LeaderEvent {
	return ObserveElection(ctx, e.grant.session.client, e.Name())
}

// notLeader marks a 403 or 404 of a proclaim or resign as ErrNotLeader.
func notLeader(err error) error {
	if p := problemOf(err); p != nil && (p.Status == http.StatusForbidden || p.Status == http.StatusNotFound) {
		return &kindError{kind: ErrNotLeader, err: err}
	}
	return err
}
