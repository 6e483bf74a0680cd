"""What the guards of locks, semaphore permits and election leadership have in common, minus
the I/O: which generated endpoint each step calls with which arguments, how each answer is read,
and the clock arithmetic of a lease. guard.py (threads) and aio.py (asyncio) do the I/O."""

from __future__ import annotations

import datetime
import os
import socket
import uuid
from dataclasses import dataclass
from http import HTTPStatus
from types import ModuleType
from typing import Any, Callable

import httpx

from .generated.api.elections import campaign, renew_leader, resign
from .generated.api.locks import acquire_lock, release_lock, renew_lock
from .generated.api.semaphores import acquire_permits, release_permits, renew_permits
from .generated.models import (
    AcquireGranted, AcquireRequest, CampaignRequest, CampaignResponse, LeaderRenewRequest,
    LeaderView, LockView, PermitAcquireRequest, PermitGranted, PermitRenewRequest, PermitView,
    Problem, RenewRequest,
)
from .generated.types import UNSET, Response
from .errors import LockdError, LockHeld

View = LockView | PermitView | LeaderView

#: Tries and per-try timeout of the release that follows an acquire of unknown outcome.
CLEANUP_TRIES = 3
CLEANUP_TIMEOUT = 2.0


def default_owner() -> str:
    """A fresh owner string: host, process and a random part, so no two guards share one."""
    return f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class Timing:
    """The clock rules of one lease of `ttl` seconds, all on `time.monotonic()`.

    A grant or renewal answered to a request sent at `sent` holds at least until `sent + ttl`
    (the server starts the lease after it received the request). Renewals go every ttl/3;
    the lease is declared lost `margin` before that deadline if no renewal got through."""

    ttl: float

    @property
    def renew_every(self) -> float:
        return self.ttl / 3

    @property
    def margin(self) -> float:
        return min(self.ttl / 5, 2.0)

    @property
    def retry_pause(self) -> float:
        return min(self.ttl / 10, 1.0)

    def renew_budget(self, now: float, deadline: float) -> float | None:
        """How long a renewal sent at `now` may take so that it ends before the lost point (and
        within ttl/3); None when there is no time left."""
        budget = min(deadline - self.margin - now, self.renew_every)
        return budget if budget > 0.01 else None


def http_timeout(budget: float) -> httpx.Timeout:
    """An httpx timeout for a request that must end within `budget` seconds: connect, write and
    read get a third each (the lease's connection pool is its own and idle). httpx bounds each
    phase, not the sum, and a read per network read; asyncio adds a bound on the whole."""
    return httpx.Timeout(budget / 3)


@dataclass(frozen=True)
class Grant:
    """A grant or renewal as the server answered it."""

    view: View
    fencing_token: int
    expires_at: datetime.datetime


def grant_of(view: View) -> Grant:
    token = view.term if isinstance(view, LeaderView) else view.fencing_token
    return Grant(view=view, fencing_token=token, expires_at=view.expires_at)


def problem_of(response: Response[Any]) -> str | None:
    parsed = response.parsed
    if isinstance(parsed, Problem):
        return f"{parsed.title}: {parsed.detail}"
    return response.content[:200].decode("utf-8", "replace") or None


def outcome_unknown(response: Response[Any]) -> bool:
    """A 5xx (503 above all) to a write: it may or may not have happened."""
    return response.status_code >= 500


def retry_after(response: Response[Any]) -> float | None:
    try:
        return float(response.headers.get("retry-after", ""))
    except ValueError:
        return None


@dataclass(frozen=True)
class Call:
    """One generated endpoint and the keyword arguments to give it (`sync_detailed` or
    `asyncio_detailed`, same arguments)."""

    endpoint: ModuleType
    kwargs: dict[str, Any]


@dataclass(frozen=True)
class Claim:
    """A claim on one name (a lock, semaphore permits or an election's leadership): the calls
    that acquire and release it, and how a grant is read. A lease's claim (`Primitive`) renews
    itself too; a claim under a session lives as long as the session."""

    kind: str
    name: str
    acquire: Callable[[int | None], Call]
    release: Call
    granted: Callable[[Any], View | None]

    def read_acquire(self, response: Response[Any]) -> Grant:
        """The grant in an acquire's answer. Raises LockHeld when not granted, LockdError for
        an answer that refuses the request (4xx). The caller handles 5xx (`outcome_unknown`)."""
        if response.status_code == HTTPStatus.OK:
            view = self.granted(response.parsed)
            if view is not None:
                return grant_of(view)
            if response.parsed is not None:
                raise LockHeld(self.name, retry_after=retry_after(response))
        raise LockdError(f"{self.kind} {self.name!r}: acquire answered {int(response.status_code)}",
                         status=int(response.status_code), problem=problem_of(response))

    @staticmethod
    def release_done(response: Response[Any]) -> bool:
        """Whether a release needs no retry: released, or nothing of ours to release."""
        return response.status_code < 500


@dataclass(frozen=True)
class Primitive(Claim):
    """One kind of lease held by an owner of its own: the claim, its owner and TTL, and the
    renewal that keeps it."""

    owner: str
    ttl: int
    renew: Call

    def read_renew(self, response: Response[Any]) -> Grant | None:
        """The renewed lease, or None for an answer to retry (5xx, 429, or one not understood).
        Raises LockdError for 404 and 403: the lease is gone, whatever happens next."""
        if response.status_code == HTTPStatus.OK and isinstance(response.parsed, LockView | PermitView | LeaderView):
            return grant_of(response.parsed)
        if response.status_code in (HTTPStatus.NOT_FOUND, HTTPStatus.FORBIDDEN):
            raise LockdError(f"renew answered {int(response.status_code)}",
                             status=int(response.status_code), problem=problem_of(response))
        return None


def wait_seconds(wait: int | None) -> Any:
    """A request's `wait_seconds`: absent when there is no wait."""
    return UNSET if wait is None else wait


def lock(name: str, owner: str, ttl: int, value: Any = UNSET) -> Primitive:
    return Primitive(
        kind="lock", name=name, owner=owner, ttl=ttl,
        acquire=lambda wait: Call(acquire_lock, dict(resource=name, body=AcquireRequest(
            owner=owner, ttl_seconds=ttl, wait_seconds=wait_seconds(wait), value=value))),
        renew=Call(renew_lock, dict(resource=name, body=RenewRequest(owner=owner, ttl_seconds=ttl))),
        release=Call(release_lock, dict(resource=name, owner=owner)),
        granted=lambda parsed: parsed.lock if isinstance(parsed, AcquireGranted) else None,
    )


def permits(name: str, owner: str, ttl: int, limit: int, count: int, value: Any = UNSET) -> Primitive:
    return Primitive(
        kind="semaphore", name=name, owner=owner, ttl=ttl,
        acquire=lambda wait: Call(acquire_permits, dict(name=name, body=PermitAcquireRequest(
            owner=owner, ttl_seconds=ttl, limit=limit, permits=count, wait_seconds=wait_seconds(wait),
            value=value))),
        renew=Call(renew_permits, dict(name=name, body=PermitRenewRequest(owner=owner, ttl_seconds=ttl))),
        release=Call(release_permits, dict(name=name, owner=owner)),
        granted=lambda parsed: parsed.permit if isinstance(parsed, PermitGranted) else None,
    )


def leadership(name: str, candidate: str, ttl: int, value: Any = UNSET) -> Primitive:
    def elected(parsed: Any) -> View | None:
        if isinstance(parsed, CampaignResponse) and parsed.elected:
            return parsed.leader
        return None

    return Primitive(
        kind="election", name=name, owner=candidate, ttl=ttl,
        acquire=lambda wait: Call(campaign, dict(name=name, body=CampaignRequest(
            candidate=candidate, ttl_seconds=ttl, wait_seconds=wait_seconds(wait), value=value))),
        renew=Call(renew_leader, dict(name=name, body=LeaderRenewRequest(candidate=candidate, ttl_seconds=ttl))),
        release=Call(resign, dict(name=name, candidate=candidate)),
        granted=elected,
    )
