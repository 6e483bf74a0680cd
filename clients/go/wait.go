package lockd

// Waiting for a lease longer than one request may wait: ask with wait_seconds, again and again,
// until granted or the caller's context ends.

import (
	"context"
	"time"
)

// attempt asks once, waiting up to waitSeconds on the server (0: answer at once), with the
// request bounded by timeout; it answers whether it was granted.
type attempt func(ctx context.Context, waitSeconds int64, timeout time.Duration) (bool, error)

// acquireLoop runs attempts until one is granted (nil), one fails (its error, as it is: one
// that ctx cut short is a RequestError of unknown outcome, for the caller to clean up after),
// or, waiting, ctx ends between attempts (ctx.Err()). Without waiting it asks once: not
// granted is ErrLocked.
func (c *Client) acquireLoop(ctx context.Context, wait bool, try attempt) error {
	if !wait {
		granted, err := try(ctx, 0, c.timeout)
		if err != nil {
			return err
		}
		if !granted {
			return ErrLocked
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		waitFor := c.maxWait
		if deadline, ok := ctx.Deadline(); ok {
			if left := time.Until(deadline).Truncate(time.Second); left < waitFor {
				waitFor = left
			}
		}
		if waitFor < 0 {
			waitFor = 0
		}
		// The server may answer a little after the wait when an attempt is running as it ends:
		// the request's bound leaves it the client's usual timeout beyond the wait.
		granted, err := try(ctx, int64(waitFor/time.Second), waitFor+c.timeout)
		if err != nil {
			return err
		}
		if granted {
			return nil
		}
		if waitFor == 0 {
			// Less than a second left: the last attempt answered at once; wait out the rest.
			<-ctx.Done()
			return ctx.Err()
		}
	}
}
