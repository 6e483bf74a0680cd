"""What the session guards (session.py with threads, aio_session.py with asyncio) have in common,
minus the I/O: the calls that open, keep alive and end a session, the claims taken under one (a
lock in either mode, a set of locks, semaphore permits, an election's leadership), and how each
answer is read. The clock rules are the leases' (`_primitive.Timing`), counted from the send
time of the last successful keepalive."""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Callable, Protocol

from .generated.api.elections import campaign, resign
from .generated.api.locks import acquire_lock, acquire_locks, release_lock
from .generated.api.semaphores import acquire_permits, release_permits
from .generated.api.sessions import end_session, keep_session_alive, open_session
from .generated.models import (
    AcquireGranted, AcquireRequest, AcquireRequestMode, CampaignRequest, CampaignResponse,
    LockView, MultiAcquireRequest, MultiAcquireRequestLocksItem,
    MultiAcquireRequestLocksItemMode, MultiGranted, MultiUnavailable, PermitAcquireRequest,
    PermitGranted, PermitView, Problem, SessionOpenRequest, SessionResponse, SessionView,
)
from .generated.types import UNSET, Response
from ._primitive import Call, Claim, Grant, View, grant_of, problem_of, retry_after, wait_seconds
from .errors import LockdError, LockHeld, SessionLost
from ._primitive import Timing

SESSION_NOT_FOUND = "/problems/session-not-found"

log = logging.getLogger("lockd_client")


class Flag(Protocol):
    """What both guards' `lost` and `jeopardy` are: a `threading.Event` or an `asyncio.Event`."""

    def is_set(self) -> bool: ...
    def set(self) -> None: ...
    def clear(self) -> None: ...


class SessionSignals:
    """The state and the signals both session guards share: the session as last answered, its
    deadline, jeopardy and loss, and the callbacks they call (each once per change). The guards
    set these attributes in their `__init__` and do the I/O."""

    ttl: int
    id: str | None
    view: SessionView | None
    expires_at: datetime.datetime | None
    deadline: float
    lost: Flag
    lost_reason: str | None
    jeopardy: Flag
    _label: str | None
    _timing: Timing
    _on_lost: Callable[[Any], None] | None
    _on_jeopardy: Callable[[Any], None] | None
    _on_safe: Callable[[Any], None] | None

    @property
    def owner(self) -> str | None:
        """The label every hold shows as its owner (the session's id when none was given)."""
        return self.view.owner if self.view is not None else self._label

    def check(self) -> None:
        """Raises SessionLost if the session was lost: call it before each protected step."""
        if self.lost.is_set():
            raise SessionLost(self._name, self.lost_reason or "lost")

    @property
    def _name(self) -> str:
        return self.owner or "(not open)"

    def _live_id(self) -> str:
        self.check()
        if self.id is None:
            raise LockdError("the session is not open")
        return self.id

    def _apply(self, view: SessionView, sent: float) -> None:
        self.view = view
        self.expires_at = view.expires_at
        self.deadline = sent + self.ttl

    def _enter_jeopardy(self) -> None:
        if self.jeopardy.is_set():
            return
        self.jeopardy.set()
        log.warning("lockd: session %r in jeopardy: a keepalive failed; lost at the latest %.1f s "
                    "from now", self._name, self.deadline - self._timing.margin - time.monotonic())
        self._notify(self._on_jeopardy, "on_jeopardy")

    def _leave_jeopardy(self) -> None:
        if not self.jeopardy.is_set():
            return
        self.jeopardy.clear()
        log.info("lockd: session %r safe again: a keepalive got through", self._name)
        self._notify(self._on_safe, "on_safe")

    def _set_lost(self, reason: str) -> bool:
        """Marks the session lost for `reason`; False if it was already (the caller then tells
        nobody again)."""
        if self.lost.is_set():
            return False
        self.lost_reason = reason
        self.lost.set()
        return True

    def _tell_lost(self, reason: str) -> None:
        log.warning("lockd: session %r lost: %s", self._name, reason)
        self._notify(self._on_lost, "on_lost")

    def _notify(self, callback: Callable[[Any], None] | None, name: str) -> None:
        if callback is not None:
            try:
                callback(self)
            except Exception:
                log.exception("lockd: %s callback failed", name)


@dataclass(frozen=True)
class Hold:
    """One hold taken under a session: a lock (`mode` exclusive or shared), semaphore permits or
    an election's leadership. Its holder is the session, and it ends with the session; its end
    is the session's (`Session.expires_at`, moved by every keepalive). `view` is the grant as
    the server answered it (`LockView`, `PermitView` or `LeaderView`)."""

    kind: str
    name: str
    fencing_token: int
    view: View = field(repr=False)

    @property
    def term(self) -> int:
        """An election's term (its fencing token)."""
        return self.fencing_token

    @property
    def mode(self) -> str | None:
        """A lock's mode, `exclusive` or `shared`."""
        return str(self.view.mode) if isinstance(self.view, LockView) else None

    @property
    def permits(self) -> int | None:
        """A semaphore hold's permits."""
        return self.view.permits if isinstance(self.view, PermitView) else None


def hold(kind: str, grant: Grant) -> Hold:
    return Hold(kind=kind, name=_name(grant.view), fencing_token=grant.fencing_token, view=grant.view)


def _name(view: View) -> str:
    if isinstance(view, LockView):
        return view.resource
    if isinstance(view, PermitView):
        return view.name
    return view.election


def session_not_found(response: Response[Any]) -> bool:
    """A 404 /problems/session-not-found: the session has ended, and nothing was done."""
    parsed = response.parsed
    return (response.status_code == HTTPStatus.NOT_FOUND and isinstance(parsed, Problem)
            and parsed.type_ == SESSION_NOT_FOUND)


# The session itself.

def open_call(ttl: int, owner: str | None, lock_delay: int | None) -> Call:
    body = SessionOpenRequest(ttl_seconds=ttl, owner=UNSET if owner is None else owner,
                              lock_delay_seconds=UNSET if lock_delay is None else lock_delay)
    return Call(open_session, dict(body=body))


def keepalive_call(session: str) -> Call:
    return Call(keep_session_alive, dict(id=session))


def end_call(session: str) -> Call:
    return Call(end_session, dict(id=session))


def read_open(response: Response[Any]) -> SessionView:
    """The opened session. Raises LockdError for any other answer; the caller handles 5xx."""
    if response.status_code == HTTPStatus.CREATED and isinstance(response.parsed, SessionResponse):
        return response.parsed.session
    raise LockdError(f"opening a session answered {int(response.status_code)}",
                     status=int(response.status_code), problem=problem_of(response))


def read_keepalive(response: Response[Any]) -> SessionView | None:
    """The session as kept alive, or None for an answer to retry (5xx, 429, or one not
    understood). Raises LockdError for 404: the session has ended, and every hold with it."""
    if response.status_code == HTTPStatus.OK and isinstance(response.parsed, SessionResponse):
        return response.parsed.session
    if response.status_code == HTTPStatus.NOT_FOUND:
        raise LockdError("keepalive answered 404", status=404, problem=problem_of(response))
    return None


def end_done(response: Response[Any]) -> bool:
    """Whether closing the session needs no retry: ended now (204), or already (404)."""
    return response.status_code < 500


# Claims under a session: the session is the holder, so the requests name it instead of an
# owner, a TTL and a lock-delay.

def release_call(kind: str, name: str, session: str) -> Call:
    """The release of one hold of the session (`DELETE ...?session=id`)."""
    if kind == "lock":
        return Call(release_lock, dict(resource=name, session=session))
    if kind == "semaphore":
        return Call(release_permits, dict(name=name, session=session))
    return Call(resign, dict(name=name, session=session))


def lock(name: str, session: str, mode: str, value: Any = UNSET) -> Claim:
    return Claim(
        kind="lock", name=name,
        acquire=lambda wait: Call(acquire_lock, dict(resource=name, body=AcquireRequest(
            session=session, mode=AcquireRequestMode(mode), wait_seconds=wait_seconds(wait),
            value=value))),
        release=release_call("lock", name, session),
        granted=lambda parsed: parsed.lock if isinstance(parsed, AcquireGranted) else None,
    )


def permits(name: str, session: str, limit: int, count: int, value: Any = UNSET) -> Claim:
    return Claim(
        kind="semaphore", name=name,
        acquire=lambda wait: Call(acquire_permits, dict(name=name, body=PermitAcquireRequest(
            session=session, limit=limit, permits=count, wait_seconds=wait_seconds(wait),
            value=value))),
        release=release_call("semaphore", name, session),
        granted=lambda parsed: parsed.permit if isinstance(parsed, PermitGranted) else None,
    )


def leadership(name: str, session: str, value: Any = UNSET) -> Claim:
    def elected(parsed: Any) -> View | None:
        if isinstance(parsed, CampaignResponse) and parsed.elected:
            return parsed.leader
        return None

    return Claim(
        kind="election", name=name,
        acquire=lambda wait: Call(campaign, dict(name=name, body=CampaignRequest(
            session=session, wait_seconds=wait_seconds(wait), value=value))),
        release=release_call("election", name, session),
        granted=elected,
    )


@dataclass(frozen=True)
class LockSet:
    """Several locks taken together or none (`POST /locks`) under a session. Each granted lock
    is a hold of its own, released on its own (`claims[i].release`)."""

    claims: tuple[Claim, ...]
    acquire: Callable[[int | None], Call]

    def read_acquire(self, response: Response[Any]) -> list[Grant]:
        """Every lock's grant, in request order. Raises LockHeld (naming the unavailable locks)
        when none was granted, LockdError for a refused request; the caller handles 5xx."""
        parsed = response.parsed
        if response.status_code == HTTPStatus.OK and isinstance(parsed, MultiGranted):
            return [grant_of(view) for view in parsed.locks]
        if response.status_code == HTTPStatus.OK and isinstance(parsed, MultiUnavailable):
            raise LockHeld(", ".join(parsed.unavailable), retry_after=retry_after(response))
        names = ", ".join(claim.name for claim in self.claims)
        raise LockdError(f"locks {names}: acquire answered {int(response.status_code)}",
                         status=int(response.status_code), problem=problem_of(response))


def lock_set(resources: Iterable[str | tuple[str, str]], session: str, value: Any = UNSET) -> LockSet:
    """`resources`: names (exclusive) or `(name, mode)` pairs."""
    items = [(entry, "exclusive") if isinstance(entry, str) else entry for entry in resources]
    body_locks = [MultiAcquireRequestLocksItem(resource=name, mode=MultiAcquireRequestLocksItemMode(mode))
                  for name, mode in items]
    return LockSet(
        claims=tuple(lock(name, session, mode, value) for name, mode in items),
        acquire=lambda wait: Call(acquire_locks, dict(body=MultiAcquireRequest(
            session=session, locks=body_locks, wait_seconds=wait_seconds(wait), value=value))),
    )
