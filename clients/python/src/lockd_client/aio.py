"""The guard (asyncio): `async with AsyncLockd(url).lock(name, ttl=30) as lease:` holds a lease
for the block and renews it from a task; when the lease is lost, the task running the block is
cancelled and `LeaseLost` comes out of the `async with`."""

from __future__ import annotations

import asyncio
import datetime
import logging
import time
from collections.abc import AsyncGenerator
from typing import Any, Callable

import httpx

from . import _primitive as p
from ._aio_block import leave
from .generated.types import UNSET
from .errors import AcquireUnknown, LeaseLost, LockdError
from .observe import ElectionEvent, aobserve_election
from .aio_session import AsyncSession
from .guard import Lockd

log = logging.getLogger("lockd_client")


class AsyncLockd(Lockd):
    """The asyncio twin of `Lockd`: the same arguments; `lock`, `permits` and `campaign` give
    `AsyncLease`s, `session` an `AsyncSession`."""

    def lock(self, resource: str, *, ttl: int, wait: int | None = None, owner: str | None = None,  # type: ignore[override]
             value: Any = UNSET, on_lost: Callable[[AsyncLease], None] | None = None) -> AsyncLease:
        return AsyncLease(self, p.lock(resource, owner or p.default_owner(), ttl, value), wait, on_lost)

    def permits(self, name: str, *, limit: int, permits: int = 1, ttl: int, wait: int | None = None,  # type: ignore[override]
                owner: str | None = None, value: Any = UNSET,
                on_lost: Callable[[AsyncLease], None] | None = None) -> AsyncLease:
        primitive = p.permits(name, owner or p.default_owner(), ttl, limit, permits, value)
        return AsyncLease(self, primitive, wait, on_lost)

    def campaign(self, election: str, *, ttl: int, wait: int | None = None,  # type: ignore[override]
                 candidate: str | None = None, value: Any = UNSET,
                 on_lost: Callable[[AsyncLease], None] | None = None) -> AsyncLease:
        primitive = p.leadership(election, candidate or p.default_owner(), ttl, value)
        return AsyncLease(self, primitive, wait, on_lost)

    def session(self, *, ttl: int, owner: str | None = None, lock_delay: int | None = None,  # type: ignore[override]
                on_lost: Callable[[AsyncSession], None] | None = None,
                on_jeopardy: Callable[[AsyncSession], None] | None = None,
                on_safe: Callable[[AsyncSession], None] | None = None) -> AsyncSession:
        return AsyncSession(self, ttl, owner, lock_delay, on_lost=on_lost, on_jeopardy=on_jeopardy,
                            on_safe=on_safe)

    async def observe_election(self, election: str) -> AsyncGenerator[ElectionEvent, None]:  # type: ignore[override]
        """The election's events (Server-Sent Events): its state first, then each change."""
        api = self.api_client()
        try:
            async for event in aobserve_election(api, election):
                yield event
        finally:
            await api.get_async_httpx_client().aclose()


class AsyncLease:
    """As `guard.Lease`, with `lost` an `asyncio.Event`, renewals in a task, and one more rule:
    when the lease is lost while the block runs, the task that entered `async with` is
    cancelled, and `LeaseLost` (with the `CancelledError` as its cause) is raised out of the
    block. `on_lost(lease)` is called first, on the event loop."""

    def __init__(self, lockd: AsyncLockd, primitive: p.Primitive, wait: int | None,
                 on_lost: Callable[[AsyncLease], None] | None):
        self._lockd = lockd
        self._p = primitive
        self._wait = wait
        self._on_lost = on_lost
        self._timing = p.Timing(primitive.ttl)
        self._http = lockd.api_client()
        self._renewer: asyncio.Task[None] | None = None
        self._holder: asyncio.Task[Any] | None = None
        self._closing = False
        self._stop = asyncio.Event()
        self._cancelled_holder = False
        self.lost = asyncio.Event()
        self.lost_reason: str | None = None
        self.deadline: float = 0.0
        self.fencing_token: int = 0
        self.expires_at: datetime.datetime | None = None
        self.view: p.View | None = None

    name = property(lambda self: self._p.name)
    owner = property(lambda self: self._p.owner)
    ttl = property(lambda self: self._p.ttl)
    term = property(lambda self: self.fencing_token, doc="An election's term (its fencing token).")

    def check(self) -> None:
        if self.lost.is_set():
            raise LeaseLost(self.name, self.lost_reason or "lost")

    async def __aenter__(self) -> AsyncLease:
        self._holder = asyncio.current_task()
        await self.acquire()
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        await leave(self, self.release(), exc_type, exc)

    def _lost_error(self) -> BaseException:
        return LeaseLost(self.name, self.lost_reason or "lost")

    async def acquire(self) -> None:
        self._http = self._lockd.api_client()
        self._stop.clear()
        self._closing = self._cancelled_holder = False
        self.lost.clear()
        self.lost_reason = None
        call = self._p.acquire(self._wait)
        self._set_timeout(httpx.Timeout(self._lockd.request_timeout + (self._wait or 0)))
        sent = time.monotonic()
        try:
            response = await call.endpoint.asyncio_detailed(client=self._http, **call.kwargs)
        except Exception as error:  # no answer, or none that could be read: it may be granted
            await self._abandon(f"{type(error).__name__}: {error}")
        except asyncio.CancelledError:  # cancelled while acquiring: one quick release, shielded
            await asyncio.shield(self._send_release(tries=1, timeout=p.CLEANUP_TIMEOUT))
            raise
        if p.outcome_unknown(response):
            await self._abandon(f"HTTP {int(response.status_code)}")
        try:
            self._apply(self._p.read_acquire(response), sent)
        except LockdError:
            await self._http.get_async_httpx_client().aclose()
            raise
        if time.monotonic() - sent > self._timing.renew_every:
            if not await self._renew_once(min(self._lockd.request_timeout, self._timing.renew_every)):
                await self.release()
                raise LeaseLost(self.name, "granted after a wait, but the first renewal failed")
        self._renewer = asyncio.create_task(self._renew_loop(), name=f"lockd-renew-{self.name}")

    async def release(self) -> None:
        """Stops the renewer and waits for it (so no renewal follows), then releases."""
        self._closing = True
        self._stop.set()
        if self._renewer is not None:
            # Not cancelled: a renewal in flight is let finish (its timeout bounds it), so that
            # the server cannot see it after the release.
            try:
                await self._renewer
            except Exception:
                log.exception("lockd: renewer of %r failed", self.name)
            self._renewer = None
        if await self._send_release(tries=2, timeout=self._lockd.request_timeout) is None:
            log.warning("lockd: releasing %s %r failed; it ends at %s", self._p.kind, self.name,
                        self.expires_at)
        await self._http.get_async_httpx_client().aclose()

    async def _abandon(self, cause: str) -> None:
        released = await self._send_release(tries=p.CLEANUP_TRIES, timeout=p.CLEANUP_TIMEOUT) is not None
        await self._http.get_async_httpx_client().aclose()
        raise AcquireUnknown(self.name, cause, released=released)

    async def _send_release(self, *, tries: int, timeout: float) -> int | None:
        self._set_timeout(httpx.Timeout(timeout))
        for attempt in range(tries):
            if attempt:
                await asyncio.sleep(0.2 * attempt)
            try:
                response = await self._p.release.endpoint.asyncio_detailed(
                    client=self._http, **self._p.release.kwargs)
            except httpx.HTTPError as error:
                log.info("lockd: release of %r: %s", self.name, error)
                continue
            if self._p.release_done(response):
                return int(response.status_code)
        return None

    def _apply(self, grant: p.Grant, sent: float) -> None:
        self.view = grant.view
        self.fencing_token = grant.fencing_token
        self.expires_at = grant.expires_at
        self.deadline = sent + self._p.ttl

    def _set_timeout(self, timeout: httpx.Timeout) -> None:
        self._http.get_async_httpx_client().timeout = timeout

    async def _renew_once(self, budget: float) -> bool:
        self._set_timeout(p.http_timeout(budget))
        sent = time.monotonic()
        try:
            async with asyncio.timeout(budget):  # the whole request, not only each phase
                response = await self._p.renew.endpoint.asyncio_detailed(
                    client=self._http, **self._p.renew.kwargs)
            grant = self._p.read_renew(response)
        except LockdError as gone:
            self._declare_lost(f"the server answered {gone.status} to a renewal")
            return False
        except (httpx.HTTPError, TimeoutError) as error:
            log.info("lockd: renewal of %r: %r", self.name, error)
            return False
        if grant is None:
            return False
        self._apply(grant, sent)
        return True

    async def _renew_loop(self) -> None:
        try:
            await self._renew_until_stopped()
        except Exception as error:
            self._declare_lost(f"the renewer failed: {error!r}")
            raise

    async def _renew_until_stopped(self) -> None:
        next_at = self.deadline - self._p.ttl + self._timing.renew_every
        while True:
            try:
                await asyncio.wait_for(self._stop.wait(), max(0.0, next_at - time.monotonic()))
                return
            except TimeoutError:
                pass
            budget = self._timing.renew_budget(time.monotonic(), self.deadline)
            if budget is None:
                self._declare_lost("no renewal got through before the safety margin")
                return
            if await self._renew_once(budget):
                next_at = self.deadline - self._p.ttl + self._timing.renew_every
            elif self.lost.is_set():
                return
            else:
                lost_at = self.deadline - self._timing.margin
                next_at = min(time.monotonic() + self._timing.retry_pause, lost_at)

    def _declare_lost(self, reason: str) -> None:
        self.lost_reason = reason
        self.lost.set()
        log.warning("lockd: %s %r lost: %s", self._p.kind, self.name, reason)
        if self._on_lost is not None:
            try:
                self._on_lost(self)
            except Exception:
                log.exception("lockd: on_lost callback failed")
        if not self._closing and self._holder is not None and not self._holder.done():
            self._cancelled_holder = True
            self._holder.cancel(f"lockd: lease on {self.name!r} lost: {reason}")
