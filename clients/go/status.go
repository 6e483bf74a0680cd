package lockd

// Reads that change nothing: who holds a lock, a semaphore, an election or a session, and
// whether a fencing token is still a live holder's.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// GetLock is the live holders of the lock on resource: one for an exclusive lock, every reader
// of a shared one (in fencing-token order). A free lock is an error matching ErrNotFound.
func (c *Client) GetLock(ctx context.Context, resource string) ([]Lock, error) {
	var status struct {
		Lock
		Holders []Lock `json:"holders"`
	}
	if err := c.getNamed(ctx, "lock", "/locks/", resource, &status); err != nil {
		return nil, err
	}
	if status.Mode == Shared {
		return status.Holders, nil
	}
	return []Lock{status.Lock}, nil
}

// GetSemaphore is the semaphore's live holders and its free permits. A semaphore without a
// live holder is an error matching ErrNotFound.
func (c *Client) GetSemaphore(ctx context.Context, semaphore string) (*SemaphoreStatus, error) {
	var status SemaphoreStatus
	if err := c.getNamed(ctx, "semaphore", "/semaphores/", semaphore, &status); err != nil {
		return nil, err
	}
	return &status, nil
}

// GetLeader is the election's leader. A vacant office is an error matching ErrNoLeader (and
// ErrNotFound, its *Problem).
func (c *Client) GetLeader(ctx context.Context, election string) (*Leader, error) {
	var leader Leader
	if err := c.getNamed(ctx, "election", "/elections/", election, &leader); err != nil {
		if p := problemOf(err); p != nil && p.Status == http.StatusNotFound {
			return nil, &kindError{kind: ErrNoLeader, err: err}
		}
		return nil, err
	}
	return &leader, nil
}

// GetSession is a live session and its live holds. An ended one is an error matching
// ErrSessionNotFound.
func (c *Client) GetSession(ctx context.Context, id string) (*SessionInfo, []Hold, error) {
	var answer struct {
		Session SessionInfo `json:"session"`
		Holds   []Hold      `json:"holds"`
	}
	if err := c.getNamed(ctx, "session", "/sessions/", id, &answer); err != nil {
		return nil, nil, err
	}
	return &answer.Session, answer.Holds, nil
}

// getNamed decodes lockd's answer to GET collection + name into out. An empty name is refused
// before anything is sent (the error names it as what's).
func (c *Client) getNamed(ctx context.Context, what, collection, name string, out interface{}) error {
	escaped, err := segment(what, name)
	if err != nil {
		return err
	}
	_, err = c.doJSON(ctx, request{method: http.MethodGet, path: collection + escaped}, out)
	return err
}

// CheckFence asks lockd whether token is the fencing token of a live lease on the lock
// resource (for a shared lock, any live reader's): Chubby's CheckSequencer. A stale token is a
// verdict (Valid false), not an error. Put the check inside whatever makes the protected write
// atomic, and refuse the write when lockd cannot be asked (see docs/fencing.md).
func (c *Client) CheckFence(ctx context.Context, resource string, token int64) (*Fence, error) {
	return c.checkFence(ctx, "lock", "locks", resource, "token", token)
}

// CheckSemaphoreFence is CheckFence for a semaphore's live grants (Fence.Permit).
func (c *Client) CheckSemaphoreFence(ctx context.Context, semaphore string, token int64) (*Fence, error) {
	return c.checkFence(ctx, "semaphore", "semaphores", semaphore, "token", token)
}

// CheckElectionFence is CheckFence for an election's term: Valid when term is the sitting
// leader's (Fence.Leader).
func (c *Client) CheckElectionFence(ctx context.Context, election string, term int64) (*Fence, error) {
	return c.checkFence(ctx, "election", "elections", election, "term", term)
}

func (c *Client) checkFence(ctx context.Context, what, collection, name string, parameter string, token int64) (*Fence, error) {
	escaped, err := segment(what, name)
	if err != nil {
		return nil, err
	}
	var answer struct {
		Valid   bool    `json:"valid"`
		Current *int64  `json:"current"`
		Lock    *Lock   `json:"lock"`
		Permit  *Permit `json:"permit"`
		Leader  *Leader `json:"leader"`
	}
	query := url.Values{parameter: {strconv.FormatInt(token, 10)}}
	r := request{method: http.MethodGet, path: "/" + collection + "/" + escaped + "/fence", query: query}
	if _, err := c.doJSON(ctx, r, &answer); err != nil {
		return nil, err
	}
	fence := &Fence{Valid: answer.Valid, Lock: answer.Lock, Permit: answer.Permit, Leader: answer.Leader}
	if answer.Current != nil {
		fence.Current = *answer.Current
	}
	return fence, nil
}
