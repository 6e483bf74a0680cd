// Package lockd is a Go client for lockd, the distributed lock service, shaped like etcd's
// client/v3/concurrency package: a Session keeps one lease alive, and Mutex, RWMutex, Semaphore
// and Election are recipes over it. Everything held under a session ends when the session ends.
//
// What lockd adds to that shape:
//
//   - Session.Done is closed before the session can have run out on the server: when a
//     keepalive is refused, or when keepalives have failed until the session's deadline (the
//     send time of the last keepalive that got through, plus the TTL, on the monotonic clock)
//     is less than a margin away (min(TTL/5, 2 s)). A jeopardy callback hears the first failed
//     keepalive, while the session may still be alive.
//   - WithLock holds one lock without a session for the length of a function, renewing it every
//     TTL/3, and cancels the function's context by the same rule before the lease can be lost.
//   - Every lease carries a fencing token; Client.CheckFence asks lockd whether a token is still
//     a live holder's (see docs/fencing.md).
//   - Every problem+json answer is a *Problem, which errors.As finds and errors.Is matches
//     against the sentinels (ErrNotFound, ErrSessionNotFound, ErrConflict, ...).
//   - An answer that never came, or a 5xx, matches ErrOutcomeUnknown: the request may or may
//     not have happened. An acquire of unknown outcome is released again before its error is
//     returned, so it leaves no lease behind.
//
// The package uses the standard library only.
package lockd
