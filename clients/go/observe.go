package lockd

// Observing an election: its Server-Sent Events stream (GET /elections/{name}/observe) read as
// a channel of leaders, reconnecting with Last-Event-ID when the stream breaks.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// LeaderEvent is one event of an election's observe stream.
type LeaderEvent struct {
	// Leader is the leader (new, or with a newly proclaimed value); nil when the office is
	// vacant.
	Leader *Leader
	// Term is, for a vacancy, the term that ended (0 when none did just now: the first event of
	// a vacant office).
	Term int64
	// Reason is, for a vacancy that ended a term, "resigned" or "expired".
	Reason string
	// ID is the event's id (it only grows).
	ID string
	// Err is set on the last event, after which the channel closes, when the server refused
	// the stream for good (an error matching ErrUnauthorized, ErrInvalid, ...).
	Err error
}

// streamIdle is how long a stream may say nothing before it is taken for broken: the server
// sends a keep-alive comment every 15 s.
const streamIdle = 45 * time.Second

// ObserveElection streams the leaders of election name: the current leader (or a vacancy)
// first, then every change of leader or of its value, as it happens, until ctx ends (then the
// channel is closed). No session is needed. When the stream breaks (lockd restarts, the network
// fails, the stream idles past 45 s) it reconnects with Last-Event-ID, after 0.2 s and then
// longer pauses up to 2 s; the state that a reconnection reports first is passed on only when
// it differs from the last event passed on, so every event is a change. A refusal that asking
// again cannot mend (401, 422, ...) ends the stream with an event whose Err says why.
func ObserveElection(ctx context.Context, client *Client, name string) <-chan LeaderEvent {
	out := make(chan LeaderEvent, 16)
	escaped, err := segment("election", name)
	if err != nil {
		out <- LeaderEvent{Err: err}
		close(out)
		return out
	}
	path := "/elections/" + escaped + "/observe"
	go func() {
		defer close(out)
		var last *LeaderEvent
		lastID := ""
		pause := 200 * time.Millisecond
		for ctx.Err() == nil {
			first := true
			received := false
			err := client.stream(ctx, path, lastID, func(e sseEvent) bool {
				received = true
				if e.id != "" {
					lastID = e.id
				}
				event, ok := leaderEvent(e)
				if !ok {
					return true
				}
				reconnected := first && last != nil
				first = false
				if reconnected && sameLeader(*last, event) {
					return true
				}
				last = &event
				select {
				case out <- event:
					return true
				case <-ctx.Done():
					return false
				}
			})
			if ctx.Err() != nil {
				return
			}
			if p := problemOf(err); p != nil && p.Status >= 400 && p.Status < 500 && p.Status != http.StatusTooManyRequests {
				select {
				case out <- LeaderEvent{Err: err}:
				case <-ctx.Done():
				}
				return
			}
			if received {
				pause = 200 * time.Millisecond
			}
			select {
			case <-time.After(pause):
			case <-ctx.Done():
				return
			}
			if pause *= 2; pause > 2*time.Second {
				pause = 2 * time.Second
			}
		}
	}()
	return out
}

// leaderEvent reads one election event; false for an event of another kind.
func leaderEvent(e sseEvent) (LeaderEvent, bool) {
	switch e.event {
	case "leader":
		var leader Leader
		if json.Unmarshal([]byte(e.data), &leader) != nil {
			return LeaderEvent{}, false
		}
		return LeaderEvent{Leader: &leader, ID: e.id}, true
	case "vacant":
		var vacant struct {
			Term   int64  `json:"term"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal([]byte(e.data), &vacant) != nil {
			return LeaderEvent{}, false
		}
		return LeaderEvent{Term: vacant.Term, Reason: vacant.Reason, ID: e.id}, true
	}
	return LeaderEvent{}, false
}

// sameLeader: both vacant, or the same leader in the same term with the same value.
func sameLeader(a, b LeaderEvent) bool {
	if a.Leader == nil || b.Leader == nil {
		return a.Leader == nil && b.Leader == nil
	}
	return a.Leader.Term == b.Leader.Term && a.Leader.Candidate == b.Leader.Candidate &&
		bytes.Equal(a.Leader.Value, b.Leader.Value)
}

// sseEvent is one Server-Sent Event.
type sseEvent struct {
	event string
	data  string
	id    string
}

// stream opens the event stream at path (sending lastID as Last-Event-ID when set) and passes
// each event to emit until the stream ends, emit answers false, or ctx ends. Its error says why
// the stream ended: a *Problem when it was refused.
func (c *Client) stream(ctx context.Context, path, lastID string, emit func(sseEvent) bool) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Until the answer's headers come, the client's timeout bounds the request; then silence
	// longer than streamIdle does.
	watchdog := time.AfterFunc(c.timeout, cancel)
	defer watchdog.Stop()
	req, err := c.newRequest(ctx, request{method: http.MethodGet, path: path})
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &RequestError{Method: http.MethodGet, Path: path, Err: unwrapURLError(err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		return parseProblem(resp.StatusCode, body, parseRetryAfter(resp.Header.Get("Retry-After")))
	}
	if media := resp.Header.Get("Content-Type"); !strings.HasPrefix(media, "text/event-stream") {
		return &RequestError{Method: http.MethodGet, Path: path, Err: fmt.Errorf("answered %q, not an event stream", media)}
	}
	watchdog.Reset(streamIdle)
	reader := bufio.NewReaderSize(resp.Body, 64<<10)
	var e sseEvent
	var data []string
	for {
		line, err := reader.ReadString('\n')
		if err != nil {
			return &RequestError{Method: http.MethodGet, Path: path, Err: fmt.Errorf("the stream ended: %w", err)}
		}
		watchdog.Reset(streamIdle)
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if len(data) > 0 {
				e.data = strings.Join(data, "\n")
				if e.event == "" {
					e.event = "message"
				}
				if !emit(e) {
					return nil
				}
			}
			e, data = sseEvent{id: e.id}, nil
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue // a comment: the keep-alive
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "event":
			e.event = value
		case "data":
			data = append(data, value)
		case "id":
			e.id = value
		}
	}
}
