package lockd

// The errors of the client: the server's problem+json answers as *Problem, sentinels to match
// them with errors.Is, and the client's own conditions (held by others, lost, unknown outcome).

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinels for the common problem types. A *Problem matches the one of its type with
// errors.Is; errors.As gives the *Problem itself, with every member the server sent.
var (
	// ErrNotFound: /problems/not-found, no live lock, permit or leader (404).
	ErrNotFound = errors.New("lockd: not found")
	// ErrSessionNotFound: /problems/session-not-found, the session was never opened, or it was
	// closed, forced or ran out (404). A session is never revived.
	ErrSessionNotFound = errors.New("lockd: session not found")
	// ErrForbidden: /problems/forbidden, another owner holds it (a release, renew or proclaim;
	// 403).
	ErrForbidden = errors.New("lockd: held by another owner")
	// ErrAdminRequired: /problems/admin-required, a force-release with a key that is not an admin
	// key of its tenant (403).
	ErrAdminRequired = errors.New("lockd: an admin key is required")
	// ErrConflict: any 409: mode-mismatch, limit-mismatch, permits-mismatch, session-held.
	ErrConflict = errors.New("lockd: conflict")
	// ErrUnauthorized: a 401, the request had no valid API key.
	ErrUnauthorized = errors.New("lockd: unauthorized")
	// ErrQuotaExceeded: /problems/quota-exceeded, a limit of the tenant (Problem.Quota names it,
	// Problem.Allowed says what it allows; 429).
	ErrQuotaExceeded = errors.New("lockd: quota exceeded")
	// ErrTooManyRequests: /problems/too-many-requests, the server's limit of waiting acquires
	// (429).
	ErrTooManyRequests = errors.New("lockd: too many waiting requests")
	// ErrInvalid: a 400 or 422, the request was refused as invalid (Problem.Errors lists the
	// fields of a 422). Nothing changed.
	ErrInvalid = errors.New("lockd: invalid request")
	// ErrOutcomeUnknown: lockd answered 5xx, or no answer came (a timeout, a refused or broken
	// connection, a cancelled context). The request may or may not have happened.
	ErrOutcomeUnknown = errors.New("lockd: outcome unknown")
)

// The client's own conditions.
var (
	// ErrLocked: the lock (or enough permits of a semaphore) is held by others, from TryLock,
	// TryRLock and TryAcquire.
	ErrLocked = errors.New("lockd: held by others")
	// ErrLeaseLost: a lease (WithLock's) or a session can no longer be counted on. See LostError.
	ErrLeaseLost = errors.New("lockd: lease lost")
	// ErrSessionLost: a session can no longer be counted on, nor any hold under it. A lost
	// session's error matches ErrLeaseLost too.
	ErrSessionLost = errors.New("lockd: session lost")
	// ErrSessionClosed: the session was closed by Close.
	ErrSessionClosed = errors.New("lockd: session closed")
	// ErrNotLeader: a proclaim or resign by an election that does not lead (another candidate
	// leads, or no one does). The *Problem is wrapped.
	ErrNotLeader = errors.New("lockd: not the leader")
	// ErrNoLeader: the election has no leader (Leader, GetLeader). The *Problem is wrapped.
	ErrNoLeader = errors.New("lockd: no leader")
)

// Problem is an RFC 9457 problem+json answer of lockd.
type Problem struct {
	// Type is the problem's type, a path such as /problems/not-found ("about:blank" for an
	// error answer that carried no problem document).
	Type     string
	Title    string
	Status   int
	Detail   string
	Instance string
	// Errors lists the invalid inputs of a 422.
	Errors []FieldError
	// Quota and Allowed: /problems/quota-exceeded, the tenant's limit and what it allows.
	Quota   string
	Allowed int64
	// Limit: /problems/limit-mismatch, the limit the semaphore's holders use.
	Limit int64
	// Permits: /problems/permits-mismatch, the permits of the owner's live grant.
	Permits int64
	// AvailableAt: a 404 of a lock or election whose last lease ran out less than its
	// lock-delay ago, when others may take it again. Zero otherwise.
	AvailableAt time.Time
	// RetryAfter is the Retry-After header's delay, zero when absent.
	RetryAfter time.Duration
	// Extensions holds every member beyond type, title, status, detail and instance, as sent
	// (the ones above included).
	Extensions map[string]json.RawMessage
}

// FieldError is one invalid input of a 422.
type FieldError struct {
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Slug is the last segment of the problem's type: "not-found", "session-not-found", ...
func (p *Problem) Slug() string {
	return p.Type[strings.LastIndex(p.Type, "/")+1:]
}

func (p *Problem) Error() string {
	text := p.Detail
	if text == "" {
		text = p.Title
	}
	return fmt.Sprintf("lockd: %d %s: %s", p.Status, p.Slug(), text)
}

// Is matches the problem against the sentinels of its type (see their docs).
func (p *Problem) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return p.Slug() == "not-found"
	case ErrSessionNotFound:
		return p.Slug() == "session-not-found"
	case ErrForbidden:
		return p.Slug() == "forbidden"
	case ErrAdminRequired:
		return p.Slug() == "admin-required"
	case ErrConflict:
		return p.Status == 409
	case ErrUnauthorized:
		return p.Status == 401
	case ErrQuotaExceeded:
		return p.Slug() == "quota-exceeded"
	case ErrTooManyRequests:
		return p.Slug() == "too-many-requests"
	case ErrInvalid:
		return p.Status == 400 || p.Status == 422
	case ErrOutcomeUnknown:
		return p.Status >= 500
	}
	return false
}

// parseProblem reads an error answer's body: a problem document when it is one, else a
// problem made from the status alone.
func parseProblem(status int, body []byte, retryAfter time.Duration) *Problem {
	p := &Problem{Type: "about:blank", Status: status, RetryAfter: retryAfter}
	var members map[string]json.RawMessage
	if json.Unmarshal(body, &members) != nil || members["type"] == nil {
		p.Title = statusTitle(status)
		p.Detail = strings.TrimSpace(string(truncate(body, 512)))
		return p
	}
	p.Extensions = map[string]json.RawMessage{}
	// A member of an unexpected shape is left at its zero value (its raw text stays in
	// Extensions): the answer is an error either way.
	for name, raw := range members {
		switch name {
		case "type":
			_ = json.Unmarshal(raw, &p.Type)
		case "title":
			_ = json.Unmarshal(raw, &p.Title)
		case "status":
			_ = json.Unmarshal(raw, &p.Status)
		case "detail":
			_ = json.Unmarshal(raw, &p.Detail)
		case "instance":
			_ = json.Unmarshal(raw, &p.Instance)
		default:
			p.Extensions[name] = raw
			switch name {
			case "errors":
				_ = json.Unmarshal(raw, &p.Errors)
			case "quota":
				_ = json.Unmarshal(raw, &p.Quota)
			case "allowed":
				_ = json.Unmarshal(raw, &p.Allowed)
			case "limit":
				_ = json.Unmarshal(raw, &p.Limit)
			case "permits":
				_ = json.Unmarshal(raw, &p.Permits)
			case "available_at":
				_ = json.Unmarshal(raw, &p.AvailableAt)
			}
		}
	}
	if p.Status == 0 {
		p.Status = status
	}
	return p
}

func statusTitle(status int) string {
	if title := http.StatusText(status); title != "" {
		return title
	}
	return fmt.Sprintf("HTTP %d", status)
}

func truncate(body []byte, n int) []byte {
	if len(body) > n {
		return body[:n]
	}
	return body
}

// RequestError is a request that got no usable answer: the connection failed or was refused,
// the request timed out or its context ended, or a success answer could not be read. It
// matches ErrOutcomeUnknown, and unwraps to the cause (context.DeadlineExceeded, ...).
type RequestError struct {
	Method string
	Path   string
	Err    error
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("lockd: %s %s: %v", e.Method, e.Path, e.Err)
}

func (e *RequestError) Unwrap() error { return e.Err }

// Is matches ErrOutcomeUnknown.
func (e *RequestError) Is(target error) bool { return target == ErrOutcomeUnknown }

// LostError says why a lease or a session can no longer be counted on: a renewal or keepalive
// was refused (Err is then the *Problem), or they kept failing until the deadline came near
// (Err is the last failure). It matches ErrLeaseLost, and ErrSessionLost for a session.
type LostError struct {
	// Session is true for a session, false for one lease (WithLock).
	Session bool
	// Name is the lease's resource, or the session's owner label.
	Name   string
	Reason string
	Err    error
}

func (e *LostError) Error() string {
	what := "lease on"
	if e.Session {
		what = "session"
	}
	if e.Err != nil {
		return fmt.Sprintf("lockd: %s %s lost: %s: %v", what, e.Name, e.Reason, e.Err)
	}
	return fmt.Sprintf("lockd: %s %s lost: %s", what, e.Name, e.Reason)
}

func (e *LostError) Unwrap() error { return e.Err }

// Is matches ErrLeaseLost, and ErrSessionLost for a session.
func (e *LostError) Is(target error) bool {
	return target == ErrLeaseLost || (e.Session && target == ErrSessionLost)
}

// kindError marks an error (usually a *Problem) as one of the client's own sentinels, keeping
// the error itself for errors.As.
type kindError struct {
	kind error
	err  error
}

func (e *kindError) Error() string {
	return e.kind.Error() + ": " + strings.TrimPrefix(e.err.Error(), "lockd: ")
}

func (e *kindError) Unwrap() error        { return e.err }
func (e *kindError) Is(target error) bool { return target == e.kind }

// problemOf is the *Problem in err's chain, or nil.
func problemOf(err error) *Problem {
	var p *Problem
	if errors.As(err, &p) {
		return p
	}
	return nil
}
