"""The exceptions of lockd_client: each says what is known about the lease it concerns."""

from __future__ import annotations


class LockdError(Exception):
    """lockd answered something the guard cannot go on with (a 4xx other than the documented
    ones, or a body it cannot read). `status` is the HTTP status, `problem` the problem+json
    detail when there was one."""

    def __init__(self, message: str, *, status: int | None = None, problem: str | None = None):
        super().__init__(message)
        self.status = status
        self.problem = problem


class LockHeld(LockdError):
    """The acquire (or campaign) ended without a grant: another owner held it for the whole
    wait. `retry_after` is the server's `Retry-After` in seconds, when it sent one."""

    def __init__(self, name: str, *, retry_after: float | None = None):
        super().__init__(f"{name!r} is held by another owner", status=200)
        self.name = name
        self.retry_after = retry_after


class AcquireUnknown(LockdError):
    """The acquire's outcome is unknown (503, a timeout or a connection error): it may have been
    granted. The guard has already sent a release with the same owner (best effort) so that no
    orphan lease stays behind; `released` says whether that release was answered."""

    def __init__(self, name: str, cause: str, *, released: bool):
        super().__init__(f"acquiring {name!r}: outcome unknown ({cause}); "
                         f"release {'sent' if released else 'not answered'}")
        self.name = name
        self.released = released


class LeaseLost(LockdError):
    """The lease may have ended while the block ran: renewals failed until the safety margin
    before `deadline`, or the server answered that the lease is gone (404/403). Raised out of
    the `with` block (asyncio: the block's task is cancelled first)."""

    def __init__(self, name: str, reason: str):
        super().__init__(f"lease on {name!r} lost: {reason}")
        self.name = name
        self.reason = reason


class SessionLost(LeaseLost):
    """The session may have ended, and every hold under it with it: keepalives failed until the
    safety margin before its `deadline`, or the server answered that it is gone (404
    session-not-found: closed, forced or run out). `name` is the session's owner label. Raised
    out of the `with` block (asyncio: the block's task is cancelled first), by `check()`, and by
    an acquire under a session that is lost."""

    def __init__(self, name: str, reason: str):
        LockdError.__init__(self, f"session {name!r} lost: {reason}")
        self.name = name
        self.reason = reason
