"""The session guard (asyncio): `async with AsyncLockd(url).session(ttl=10) as session:` opens
a session and keeps it alive from a task; holds are taken with `await session.lock(...)`. When
the session is lost, the task running the block is cancelled and `SessionLost` comes out of the
`async with`."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Callable

import httpx

from . import _primitive as p
from . import _session as s
from ._aio_block import leave
from ._session import Hold
from .generated.client import AuthenticatedClient, Client
from .generated.models import SessionView
from .generated.types import UNSET, Response
from .errors import AcquireUnknown, LockdError, SessionLost

if TYPE_CHECKING:
    from .aio import AsyncLockd

log = logging.getLogger("lockd_client")

AsyncSessionCallback = Callable[["AsyncSession"], None]


class AsyncSession(s.SessionSignals):
    """As `session.Session`, with `lost` and `jeopardy` `asyncio.Event`s, keepalives in a task,
    holds taken and released with `await`, and one more rule: when the session is lost while the
    block runs, the task that entered `async with` is cancelled, and `SessionLost` (with the
    `CancelledError` as its cause) is raised out of the block. `on_lost(session)` is called
    first, and every callback on the event loop."""

    def __init__(self, lockd: AsyncLockd, ttl: int, owner: str | None, lock_delay: int | None, *,
                 on_lost: AsyncSessionCallback | None = None,
                 on_jeopardy: AsyncSessionCallback | None = None,
                 on_safe: AsyncSessionCallback | None = None):
        self._lockd = lockd
        self.ttl = ttl
        self._label = owner
        self._lock_delay = lock_delay
        self._on_lost = on_lost
        self._on_jeopardy = on_jeopardy
        self._on_safe = on_safe
        self._timing = p.Timing(ttl)
        self._http = lockd.api_client()
        self._keeper: asyncio.Task[None] | None = None
        self._holder: asyncio.Task[Any] | None = None
        self._closing = False
        self._stop = asyncio.Event()
        self._cancelled_holder = False
        self._held: set[tuple[str, str]] = set()
        self.id: str | None = None
        self.view: SessionView | None = None
        self.lost: asyncio.Event = asyncio.Event()
        self.lost_reason: str | None = None
        self.jeopardy: asyncio.Event = asyncio.Event()
        self.deadline: float = 0.0
        self.expires_at: datetime.datetime | None = None

    async def __aenter__(self) -> AsyncSession:
        self._holder = asyncio.current_task()
        await self.open()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await leave(self, self.close(), exc_type, exc)

    def _lost_error(self) -> BaseException:
        return SessionLost(self._name, self.lost_reason or "lost")

    async def open(self) -> None:
        self._http = self._lockd.api_client()
        self._stop.clear()
        self._closing = self._cancelled_holder = False
        self.lost.clear()
        self.jeopardy.clear()
        self.lost_reason = None
        self._held.clear()
        call = s.open_call(self.ttl, self._label, self._lock_delay)
        _set_timeout(self._http, httpx.Timeout(self._lockd.request_timeout))
        sent = time.monotonic()
        try:
            response = await call.endpoint.asyncio_detailed(client=self._http, **call.kwargs)
            if p.outcome_unknown(response):
                raise LockdError(f"opening a session answered {int(response.status_code)}; if it was "
                                 "opened, it holds nothing and runs out by itself",
                                 status=int(response.status_code), problem=p.problem_of(response))
            view = s.read_open(response)
        except httpx.HTTPError as error:
            await self._http.get_async_httpx_client().aclose()
            raise LockdError(f"opening a session: no answer ({type(error).__name__}: {error}); if "
                             "it was opened, it holds nothing and runs out by itself") from error
        except LockdError:
            await self._http.get_async_httpx_client().aclose()
            raise
        self.id = view.id
        self._apply(view, sent)
        self._keeper = asyncio.create_task(self._keep_alive_loop(), name=f"lockd-session-{view.owner}")

    async def close(self) -> None:
        """Stops the keepalive task and waits for it (so no keepalive follows), then ends the
        session and so every hold."""
        self._closing = True
        self._stop.set()
        if self._keeper is not None:
            # Not cancelled: a keepalive in flight is let finish (its timeout bounds it).
            try:
                await self._keeper
            except Exception:
                log.exception("lockd: keepalive task of session %r failed", self._name)
            self._keeper = None
        if self.id is not None:
            if await self._send(s.end_call(self.id), s.end_done, tries=2,
                                timeout=self._lockd.request_timeout) is None:
                log.warning("lockd: ending session %r failed; it and its holds end at %s",
                            self._name, self.expires_at)
        await self._http.get_async_httpx_client().aclose()

    # Holds: as `Session`'s, awaited.

    async def lock(self, resource: str, *, mode: str = "exclusive", wait: int | None = None,
                   value: Any = UNSET) -> Hold:
        claim = s.lock(resource, self._live_id(), mode, value)
        return (await self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)]))[0]

    async def locks(self, resources: Iterable[str | tuple[str, str]], *, wait: int | None = None,
                    value: Any = UNSET) -> list[Hold]:
        locks = s.lock_set(resources, self._live_id(), value)
        return await self._take(locks.acquire(wait), wait, locks.claims, locks.read_acquire)

    async def permits(self, name: str, *, limit: int, permits: int = 1, wait: int | None = None,
                      value: Any = UNSET) -> Hold:
        claim = s.permits(name, self._live_id(), limit, permits, value)
        return (await self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)]))[0]

    async def campaign(self, election: str, *, wait: int | None = None, value: Any = UNSET) -> Hold:
        claim = s.leadership(election, self._live_id(), value)
        return (await self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)]))[0]

    async def release(self, hold: Hold) -> bool:
        if self.id is None:
            raise LockdError("the session is not open")
        call = s.release_call(hold.kind, hold.name, self.id)
        self._held.discard((hold.kind, hold.name))
        http = self._lockd.api_client()
        try:
            status = await self._send(call, p.Claim.release_done, tries=2,
                                      timeout=self._lockd.request_timeout, http=http)
        finally:
            await http.get_async_httpx_client().aclose()
        if status is None:
            log.warning("lockd: releasing %s %r of session %r failed", hold.kind, hold.name, self._name)
        return status == 204

    async def _take(self, call: p.Call, wait: int | None, claims: Sequence[p.Claim],
                    read: Callable[[Response[Any]], list[p.Grant]]) -> list[Hold]:
        http = self._lockd.api_client()
        _set_timeout(http, httpx.Timeout(self._lockd.request_timeout + (wait or 0)))
        try:
            try:
                response = await call.endpoint.asyncio_detailed(client=http, **call.kwargs)
            except Exception as error:  # no answer, or none that could be read: it may be granted
                await self._abandon(http, claims, f"{type(error).__name__}: {error}")
            except asyncio.CancelledError:  # cancelled while acquiring: one quick release, shielded
                await asyncio.shield(self._release_unseen(http, claims, tries=1))
                raise
            if p.outcome_unknown(response):
                await self._abandon(http, claims, f"HTTP {int(response.status_code)}")
            if s.session_not_found(response):
                self._declare_lost("an acquire answered 404 session-not-found: the session has ended")
                raise SessionLost(self._name, self.lost_reason or "lost")
            grants = read(response)
        finally:
            await http.get_async_httpx_client().aclose()
        holds = [s.hold(claim.kind, grant) for claim, grant in zip(claims, grants)]
        self._held.update((hold.kind, hold.name) for hold in holds)
        return holds

    async def _abandon(self, http: Client | AuthenticatedClient, claims: Sequence[p.Claim], cause: str) -> None:
        released = await self._release_unseen(http, claims, tries=p.CLEANUP_TRIES)
        raise AcquireUnknown(", ".join(claim.name for claim in claims), cause, released=released)

    async def _release_unseen(self, http: Client | AuthenticatedClient, claims: Sequence[p.Claim], *,
                              tries: int) -> bool:
        unseen = [claim for claim in claims if (claim.kind, claim.name) not in self._held]
        answered = [await self._send(claim.release, p.Claim.release_done, tries=tries,
                                     timeout=p.CLEANUP_TIMEOUT, http=http) is not None for claim in unseen]
        return all(answered)

    async def _send(self, call: p.Call, done: Callable[[Response[Any]], bool], *, tries: int,
                    timeout: float, http: Client | AuthenticatedClient | None = None) -> int | None:
        http = http or self._http
        _set_timeout(http, httpx.Timeout(timeout))
        for attempt in range(tries):
            if attempt:
                await asyncio.sleep(0.2 * attempt)
            try:
                response = await call.endpoint.asyncio_detailed(client=http, **call.kwargs)
            except httpx.HTTPError as error:
                log.info("lockd: %s of session %r: %s", call.endpoint.__name__, self._name, error)
                continue
            if done(response):
                return int(response.status_code)
        return None

    # Keeping it alive: as `Session`'s, with the whole request bounded too.

    async def _keep_alive_once(self, budget: float) -> bool:
        assert self.id is not None
        call = s.keepalive_call(self.id)
        _set_timeout(self._http, p.http_timeout(budget))
        sent = time.monotonic()
        try:
            async with asyncio.timeout(budget):  # the whole request, not only each phase
                response = await call.endpoint.asyncio_detailed(client=self._http, **call.kwargs)
            view = s.read_keepalive(response)
        except LockdError as gone:
            self._declare_lost(f"the server answered {gone.status} to a keepalive: the session has ended")
            return False
        except (httpx.HTTPError, TimeoutError) as error:
            log.info("lockd: keepalive of session %r: %r", self._name, error)
            self._enter_jeopardy()
            return False
        if view is None:
            log.info("lockd: keepalive of session %r answered %s", self._name, int(response.status_code))
            self._enter_jeopardy()
            return False
        self._apply(view, sent)
        self._leave_jeopardy()
        return True

    async def _keep_alive_loop(self) -> None:
        try:
            await self._keep_alive_until_stopped()
        except Exception as error:
            self._declare_lost(f"the keepalive task failed: {error!r}")
            raise

    async def _keep_alive_until_stopped(self) -> None:
        next_at = self.deadline - self.ttl + self._timing.renew_every
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), max(0.0, next_at - time.monotonic()))
                return
            except TimeoutError:
                pass
            budget = self._timing.renew_budget(time.monotonic(), self.deadline)
            if budget is None:
                self._declare_lost("no keepalive got through before the safety margin")
                return
            if await self._keep_alive_once(budget):
                next_at = self.deadline - self.ttl + self._timing.renew_every
            elif self.lost.is_set():
                return
            else:
                lost_at = self.deadline - self._timing.margin
                next_at = min(time.monotonic() + self._timing.retry_pause, lost_at)

    def _declare_lost(self, reason: str) -> None:
        if not self._set_lost(reason):
            return
        self._tell_lost(reason)
        # An acquire in the block's own task that finds the session ended raises SessionLost
        # itself; any other finding cancels the block's task.
        if (not self._closing and self._holder is not None and not self._holder.done()
                and asyncio.current_task() is not self._holder):
            self._cancelled_holder = True
            self._holder.cancel(f"lockd: session {self._name!r} lost: {reason}")


def _set_timeout(http: Client | AuthenticatedClient, timeout: httpx.Timeout) -> None:
    http.get_async_httpx_client().timeout = timeout
