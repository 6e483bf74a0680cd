package lockd

// What lockd answers: locks, permits, leaders, sessions and their holds, as JSON values.

import (
	"encoding/json"
	"time"
)

// Mode is how a lock is held.
type Mode string

const (
	// Exclusive: one holder excludes every other (the default).
	Exclusive Mode = "exclusive"
	// Shared: shared holders coexist, each with its own lease and fencing token; an exclusive
	// holder excludes them all.
	Shared Mode = "shared"
)

// Lock is one holder's lease on a lock.
type Lock struct {
	Resource string `json:"resource"`
	Owner    string `json:"owner"`
	// Session is the session the lease is held under, empty when none.
	Session    string    `json:"session,omitempty"`
	AcquiredAt time.Time `json:"acquired_at"`
	ExpiresAt  time.Time `json:"expires_at"`
	// FencingToken is larger than every token of an earlier grant of the resource: send it with
	// every write made under the lock.
	FencingToken int64           `json:"fencing_token"`
	Mode         Mode            `json:"mode"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// Permit is one holder's grant of a semaphore's permits.
type Permit struct {
	Name         string          `json:"name"`
	Owner        string          `json:"owner"`
	Session      string          `json:"session,omitempty"`
	Permits      int             `json:"permits"`
	Limit        int             `json:"limit"`
	AcquiredAt   time.Time       `json:"acquired_at"`
	ExpiresAt    time.Time       `json:"expires_at"`
	FencingToken int64           `json:"fencing_token"`
	Value        json.RawMessage `json:"value,omitempty"`
}

// Leader is an election's leader.
type Leader struct {
	Election  string `json:"election"`
	Candidate string `json:"candidate"`
	Session   string `json:"session,omitempty"`
	// Term is the leader's fencing token: larger than every earlier leader's.
	Term      int64           `json:"term"`
	ElectedAt time.Time       `json:"elected_at"`
	ExpiresAt time.Time       `json:"expires_at"`
	Value     json.RawMessage `json:"value,omitempty"`
}

// SessionInfo is a session as lockd reports it.
type SessionInfo struct {
	ID               string    `json:"id"`
	Owner            string    `json:"owner"`
	TTLSeconds       int       `json:"ttl_seconds"`
	LockDelaySeconds int       `json:"lock_delay_seconds"`
	CreatedAt        time.Time `json:"created_at"`
	ExpiresAt        time.Time `json:"expires_at"`
}

// Hold is one hold of a session: a lock (with its Mode), permits of a semaphore (Permits) or an
// election's leadership (Term).
type Hold struct {
	Kind         string `json:"kind"`
	Name         string `json:"name"`
	FencingToken int64  `json:"fencing_token"`
	Mode         Mode   `json:"mode,omitempty"`
	Permits      int    `json:"permits,omitempty"`
	Term         int64  `json:"term,omitempty"`
}

// SemaphoreStatus is a semaphore with live holders.
type SemaphoreStatus struct {
	Name      string   `json:"name"`
	Limit     int      `json:"limit"`
	InUse     int      `json:"in_use"`
	Available int      `json:"available"`
	Holders   []Permit `json:"holders"`
	// Waiting counts the acquires waiting for it on the server that answered.
	Waiting int `json:"waiting"`
}

// Fence is lockd's verdict on a fencing token (an election's term): Valid when it is a live
// holder's at the moment lockd read it. Then Lock, Permit or Leader is that holder. Otherwise
// Current is the newest live holder's token, 0 when no one holds it.
type Fence struct {
	Valid   bool
	Current int64
	Lock    *Lock
	Permit  *Permit
	Leader  *Leader
}

// rawValue encodes a value to send: nil sends none.
func rawValue(value interface{}) (json.RawMessage, error) {
	if value == nil {
		return nil, nil
	}
	if raw, ok := value.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(value)
}
