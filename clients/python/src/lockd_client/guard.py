"""The guard (threads): `with Lockd(url).lock(name, ttl=30) as lease:` holds a lease for the
block, renews it from a background thread, says when it is lost, and releases it afterwards."""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Generator
from typing import Any, Callable

import httpx

from . import _primitive as p
from .generated.client import AuthenticatedClient, Client
from .generated.types import UNSET
from .errors import AcquireUnknown, LeaseLost, LockdError
from .observe import ElectionEvent, observe_election
from .session import Session

log = logging.getLogger("lockd_client")


class Lockd:
    """A lockd server. Cheap to make; every lease opens its own connection.

    `request_timeout` bounds an acquire beyond its `wait` (the server may take a few seconds
    more than the wait to report an attempt running when the wait ends) and a release.
    `httpx_args` go to every `httpx.Client` (TLS settings, transports)."""

    def __init__(self, base_url: str, api_key: str | None = None, *, request_timeout: float = 10.0,
                 httpx_args: dict[str, Any] | None = None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.request_timeout = request_timeout
        self.httpx_args = dict(httpx_args or {})

    def api_client(self) -> Client | AuthenticatedClient:
        """A client of the generated HTTP layer (`lockd_client.generated.api`), for every other call."""
        timeout = httpx.Timeout(self.request_timeout)
        if self.api_key is not None:
            return AuthenticatedClient(base_url=self.base_url, token=self.api_key, timeout=timeout,
                                       httpx_args=self.httpx_args)
        return Client(base_url=self.base_url, timeout=timeout, httpx_args=self.httpx_args)

    def lock(self, resource: str, *, ttl: int, wait: int | None = None, owner: str | None = None,
             value: Any = UNSET, on_lost: Callable[[Lease], None] | None = None) -> Lease:
        """An exclusive lock on `resource`, held for the `with` block (see `Lease`). `wait` is
        how long the server may queue the acquire (seconds, at most its `--max-wait-seconds`)."""
        primitive = p.lock(resource, owner or p.default_owner(), ttl, value)
        return Lease(self, primitive, wait, on_lost)

    def permits(self, name: str, *, limit: int, permits: int = 1, ttl: int, wait: int | None = None,
                owner: str | None = None, value: Any = UNSET,
                on_lost: Callable[[Lease], None] | None = None) -> Lease:
        """`permits` of semaphore `name` (at most `limit` held at once), for the `with` block."""
        primitive = p.permits(name, owner or p.default_owner(), ttl, limit, permits, value)
        return Lease(self, primitive, wait, on_lost)

    def campaign(self, election: str, *, ttl: int, wait: int | None = None,
                 candidate: str | None = None, value: Any = UNSET,
                 on_lost: Callable[[Lease], None] | None = None) -> Lease:
        """Leadership of `election` for the `with` block; `lease.term` is the term."""
        primitive = p.leadership(election, candidate or p.default_owner(), ttl, value)
        return Lease(self, primitive, wait, on_lost)

    def session(self, *, ttl: int, owner: str | None = None, lock_delay: int | None = None,
                on_lost: Callable[[Session], None] | None = None,
                on_jeopardy: Callable[[Session], None] | None = None,
                on_safe: Callable[[Session], None] | None = None) -> Session:
        """A session of `ttl` seconds, open for the `with` block (see `Session`): locks, sets of
        locks, permits and campaigns taken through it live as long as it does. `owner` is the
        label its holds show (the session's id when None); `lock_delay` (seconds) keeps their
        places from others for that long after the session runs out (the server's default when
        None)."""
        return Session(self, ttl, owner, lock_delay, on_lost=on_lost, on_jeopardy=on_jeopardy,
                       on_safe=on_safe)

    def observe_election(self, election: str) -> Generator[ElectionEvent, None, None]:
        """The election's events (Server-Sent Events): its state first, then each change."""
        api = self.api_client()
        try:
            yield from observe_election(api, election)
        finally:
            api.get_httpx_client().close()


class Lease:
    """One lease, held inside `with` (or between `acquire()` and `release()`).

    Entering acquires it: `LockHeld` when another owner kept it for the whole wait,
    `AcquireUnknown` when the outcome is unknown (a release with the same owner has then been
    sent), `LockdError` for a refused request. Inside, a thread renews it every ttl/3. When no
    renewal got through by `deadline` minus a margin (min(ttl/5, 2 s)), or the server says it
    is gone (404/403), `lost` is set and `on_lost(lease)` called (on the renewer thread) before
    the lease can have ended. Leaving stops and joins the renewer, then releases, always; if the
    lease was lost and the block raised nothing, `LeaseLost` is raised."""

    def __init__(self, lockd: Lockd, primitive: p.Primitive, wait: int | None,
                 on_lost: Callable[[Lease], None] | None):
        self._lockd = lockd
        self._p = primitive
        self._wait = wait
        self._on_lost = on_lost
        self._timing = p.Timing(primitive.ttl)
        self._http = lockd.api_client()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.lost = threading.Event()
        self.lost_reason: str | None = None
        #: time.monotonic() before which the lease is surely held: last acquire/renew sent + ttl.
        self.deadline: float = 0.0
        self.fencing_token: int = 0
        #: The server's end of the lease as of the last acquire or renew answer (its clock).
        self.expires_at: datetime.datetime | None = None
        self.view: p.View | None = None

    name = property(lambda self: self._p.name)
    owner = property(lambda self: self._p.owner)
    ttl = property(lambda self: self._p.ttl)
    term = property(lambda self: self.fencing_token, doc="An election's term (its fencing token).")

    def check(self) -> None:
        """Raises LeaseLost if the lease was lost: call it before each protected step."""
        if self.lost.is_set():
            raise LeaseLost(self.name, self.lost_reason or "lost")

    def __enter__(self) -> Lease:
        self.acquire()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.release()
        if exc_type is None and self.lost.is_set():
            raise LeaseLost(self.name, self.lost_reason or "lost")

    def acquire(self) -> None:
        self._http = self._lockd.api_client()
        self._stop.clear()
        self.lost.clear()
        self.lost_reason = None
        call = self._p.acquire(self._wait)
        self._set_timeout(httpx.Timeout(self._lockd.request_timeout + (self._wait or 0)))
        sent = time.monotonic()
        try:
            response = call.endpoint.sync_detailed(client=self._http, **call.kwargs)
        except Exception as error:  # no answer, or none that could be read: it may be granted
            self._abandon(f"{type(error).__name__}: {error}")
        except BaseException:  # e.g. KeyboardInterrupt: one quick release, then go on
            self._send_release(tries=1, timeout=p.CLEANUP_TIMEOUT)
            raise
        if p.outcome_unknown(response):
            self._abandon(f"HTTP {int(response.status_code)}")
        try:
            self._apply(self._p.read_acquire(response), sent)
        except LockdError:
            self._http.get_httpx_client().close()
            raise
        if time.monotonic() - sent > self._timing.renew_every and not self._renew_now():
            self.release()
            raise LeaseLost(self.name, "granted after a wait, but the first renewal failed")
        self._renewer = threading.Thread(target=self._renew_loop, daemon=True,
                                         name=f"lockd-renew-{self.name}")
        self._renewer.start()

    def release(self) -> None:
        """Stops and joins the renewer (no renewal can follow), then releases (best effort)."""
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
            self._renewer = None
        if self._send_release(tries=2, timeout=self._lockd.request_timeout) is None:
            log.warning("lockd: releasing %s %r failed; it ends at %s", self._p.kind, self.name,
                        self.expires_at)
        self._http.get_httpx_client().close()

    def _abandon(self, cause: str) -> None:
        released = self._send_release(tries=p.CLEANUP_TRIES, timeout=p.CLEANUP_TIMEOUT) is not None
        self._http.get_httpx_client().close()
        raise AcquireUnknown(self.name, cause, released=released)

    def _send_release(self, *, tries: int, timeout: float) -> int | None:
        """The status of the release, or None if no try got an answer below 500."""
        self._set_timeout(httpx.Timeout(timeout))
        for attempt in range(tries):
            if attempt:
                time.sleep(0.2 * attempt)
            try:
                response = self._p.release.endpoint.sync_detailed(client=self._http, **self._p.release.kwargs)
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
        self._http.get_httpx_client().timeout = timeout

    def _renew_now(self) -> bool:
        """One renewal right after a grant that came late (after a wait), whose local deadline
        counted from the acquire's sending says little."""
        return self._renew_once(min(self._lockd.request_timeout, self._timing.renew_every))

    def _renew_once(self, budget: float) -> bool:
        """Sends one renewal; True if it got through. Declares the lease lost on a 404/403."""
        self._set_timeout(p.http_timeout(budget))
        sent = time.monotonic()
        try:
            response = self._p.renew.endpoint.sync_detailed(client=self._http, **self._p.renew.kwargs)
            grant = self._p.read_renew(response)
        except LockdError as gone:
            self._declare_lost(f"the server answered {gone.status} to a renewal")
            return False
        except httpx.HTTPError as error:
            log.info("lockd: renewal of %r: %s", self.name, error)
            return False
        if grant is None:
            return False
        self._apply(grant, sent)
        return True

    def _renew_loop(self) -> None:
        try:
            self._renew_until_stopped()
        except Exception as error:
            self._declare_lost(f"the renewer failed: {error!r}")
            raise

    def _renew_until_stopped(self) -> None:
        next_at = self.deadline - self._p.ttl + self._timing.renew_every
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            budget = self._timing.renew_budget(time.monotonic(), self.deadline)
            if budget is None:
                self._declare_lost("no renewal got through before the safety margin")
                return
            if self._renew_once(budget):
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
