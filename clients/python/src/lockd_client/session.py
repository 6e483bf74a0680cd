"""The session guard (threads): `with Lockd(url).session(ttl=10) as session:` opens a session,
keeps it alive from a background thread, takes holds under it (locks in either mode, sets of
locks, semaphore permits, election campaigns), says when it is in jeopardy and when it is lost,
and ends it, with every hold, when the block is left."""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Callable

import httpx

from . import _primitive as p
from . import _session as s
from ._session import Hold
from .generated.client import AuthenticatedClient, Client
from .generated.models import SessionView
from .generated.types import UNSET, Response
from .errors import AcquireUnknown, LockdError, SessionLost

if TYPE_CHECKING:
    from .guard import Lockd

log = logging.getLogger("lockd_client")

SessionCallback = Callable[["Session"], None]


class Session(s.SessionSignals):
    """One session, open inside `with` (or between `open()` and `close()`).

    Entering opens it (`POST /sessions`; `LockdError` when refused or not answered: a session
    opened unseen holds nothing and runs out after `ttl`). Inside, a thread keeps it alive every
    ttl/3, by the leases' rules (`Lease`): `deadline` is the send time of the last successful
    keepalive (or of the open) plus `ttl`, on `time.monotonic()`.

    - **Jeopardy**: the first keepalive that fails (no answer, a 5xx, a 429) sets `jeopardy` (a
      `threading.Event`) and calls `on_jeopardy(session)`; the next one that gets through
      clears it and calls `on_safe(session)`. The session may still be alive meanwhile.
    - **Lost**: when no keepalive got through by `deadline` minus a margin (min(ttl/5, 2 s)),
      or one is answered 404 (the session was closed, forced or ran out), `lost` is set and
      `on_lost(session)` called, before the session can have ended on the server. Every hold
      may be gone: stop.

    The callbacks run on the keepalive thread. Leaving stops and joins that thread (no keepalive
    follows), then ends the session (`DELETE /sessions/{id}`), which releases every hold at
    once, also when the block raised; if the session was lost and the block raised nothing,
    `SessionLost` is raised."""

    def __init__(self, lockd: Lockd, ttl: int, owner: str | None, lock_delay: int | None, *,
                 on_lost: SessionCallback | None = None, on_jeopardy: SessionCallback | None = None,
                 on_safe: SessionCallback | None = None):
        self._lockd = lockd
        self.ttl = ttl
        self._label = owner
        self._lock_delay = lock_delay
        self._on_lost = on_lost
        self._on_jeopardy = on_jeopardy
        self._on_safe = on_safe
        self._timing = p.Timing(ttl)
        self._http = lockd.api_client()
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None
        self._mutex = threading.Lock()
        self._held: set[tuple[str, str]] = set()
        #: The session's id, once open: anyone with it may act for the session (keep it secret).
        self.id: str | None = None
        self.view: SessionView | None = None
        self.lost: threading.Event = threading.Event()
        self.lost_reason: str | None = None
        self.jeopardy: threading.Event = threading.Event()
        #: time.monotonic() before which the session is surely live: last open/keepalive sent + ttl.
        self.deadline: float = 0.0
        #: The server's end of the session as of the last open or keepalive answer (its clock).
        self.expires_at: datetime.datetime | None = None

    def __enter__(self) -> Session:
        self.open()
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close()
        if exc_type is None and self.lost.is_set():
            raise SessionLost(self._name, self.lost_reason or "lost")

    def open(self) -> None:
        self._http = self._lockd.api_client()
        self._stop.clear()
        self.lost.clear()
        self.jeopardy.clear()
        self.lost_reason = None
        self._held.clear()
        call = s.open_call(self.ttl, self._label, self._lock_delay)
        _set_timeout(self._http, httpx.Timeout(self._lockd.request_timeout))
        sent = time.monotonic()
        try:
            response = call.endpoint.sync_detailed(client=self._http, **call.kwargs)
            if p.outcome_unknown(response):
                raise LockdError(f"opening a session answered {int(response.status_code)}; if it was "
                                 "opened, it holds nothing and runs out by itself",
                                 status=int(response.status_code), problem=p.problem_of(response))
            view = s.read_open(response)
        except httpx.HTTPError as error:
            self._http.get_httpx_client().close()
            raise LockdError(f"opening a session: no answer ({type(error).__name__}: {error}); if "
                             "it was opened, it holds nothing and runs out by itself") from error
        except LockdError:
            self._http.get_httpx_client().close()
            raise
        self.id = view.id
        self._apply(view, sent)
        self._keeper = threading.Thread(target=self._keep_alive_loop, daemon=True,
                                        name=f"lockd-session-{view.owner}")
        self._keeper.start()

    def close(self) -> None:
        """Stops and joins the keepalive thread (no keepalive can follow), then ends the session
        and so every hold (best effort: if no try is answered, it ends at `expires_at`)."""
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join()
            self._keeper = None
        if self.id is not None:
            if self._send(s.end_call(self.id), s.end_done, tries=2,
                          timeout=self._lockd.request_timeout) is None:
                log.warning("lockd: ending session %r failed; it and its holds end at %s",
                            self._name, self.expires_at)
        self._http.get_httpx_client().close()

    # Holds.

    def lock(self, resource: str, *, mode: str = "exclusive", wait: int | None = None,
             value: Any = UNSET) -> Hold:
        """Takes the lock on `resource` (`mode` exclusive or shared) under the session, waiting
        up to `wait` seconds. Raises `LockHeld` when not granted by then, `SessionLost` when the
        session is lost (or the server says it has ended), `AcquireUnknown` when the outcome is
        unknown (the hold has then been released, unless the session already held it),
        `LockdError` for a refused request."""
        claim = s.lock(resource, self._live_id(), mode, value)
        return self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)])[0]

    def locks(self, resources: Iterable[str | tuple[str, str]], *, wait: int | None = None,
              value: Any = UNSET) -> list[Hold]:
        """Takes several locks together or none (`resources`: names, or `(name, mode)` pairs),
        one hold each, in request order. `LockHeld` names the locks that were unavailable."""
        locks = s.lock_set(resources, self._live_id(), value)
        return self._take(locks.acquire(wait), wait, locks.claims, locks.read_acquire)

    def permits(self, name: str, *, limit: int, permits: int = 1, wait: int | None = None,
                value: Any = UNSET) -> Hold:
        """`permits` of semaphore `name` (at most `limit` held at once) under the session."""
        claim = s.permits(name, self._live_id(), limit, permits, value)
        return self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)])[0]

    def campaign(self, election: str, *, wait: int | None = None, value: Any = UNSET) -> Hold:
        """Leadership of `election` under the session; `hold.term` is the term."""
        claim = s.leadership(election, self._live_id(), value)
        return self._take(claim.acquire(wait), wait, (claim,), lambda r: [claim.read_acquire(r)])[0]

    def release(self, hold: Hold) -> bool:
        """Releases one hold (the session and its other holds go on): True when it was released
        now, False when there was nothing of the session's to release (it had ended, or another
        holder has it) or no try was answered (logged; it ends with the session at the latest)."""
        if self.id is None:
            raise LockdError("the session is not open")
        call = s.release_call(hold.kind, hold.name, self.id)
        with self._mutex:
            self._held.discard((hold.kind, hold.name))
        http = self._lockd.api_client()
        try:
            status = self._send(call, p.Claim.release_done, tries=2,
                                timeout=self._lockd.request_timeout, http=http)
        finally:
            http.get_httpx_client().close()
        if status is None:
            log.warning("lockd: releasing %s %r of session %r failed", hold.kind, hold.name, self._name)
        return status == 204

    def _take(self, call: p.Call, wait: int | None, claims: Sequence[p.Claim],
              read: Callable[[Response[Any]], list[p.Grant]]) -> list[Hold]:
        http = self._lockd.api_client()
        _set_timeout(http, httpx.Timeout(self._lockd.request_timeout + (wait or 0)))
        try:
            try:
                response = call.endpoint.sync_detailed(client=http, **call.kwargs)
            except Exception as error:  # no answer, or none that could be read: it may be granted
                self._abandon(http, claims, f"{type(error).__name__}: {error}")
            except BaseException:  # e.g. KeyboardInterrupt: one quick release, then go on
                self._release_unseen(http, claims, tries=1)
                raise
            if p.outcome_unknown(response):
                self._abandon(http, claims, f"HTTP {int(response.status_code)}")
            if s.session_not_found(response):
                self._declare_lost("an acquire answered 404 session-not-found: the session has ended")
                raise SessionLost(self._name, self.lost_reason or "lost")
            grants = read(response)
        finally:
            http.get_httpx_client().close()
        holds = [s.hold(claim.kind, grant) for claim, grant in zip(claims, grants)]
        with self._mutex:
            self._held.update((hold.kind, hold.name) for hold in holds)
        return holds

    def _abandon(self, http: Client | AuthenticatedClient, claims: Sequence[p.Claim], cause: str) -> None:
        released = self._release_unseen(http, claims, tries=p.CLEANUP_TRIES)
        names = ", ".join(claim.name for claim in claims)
        raise AcquireUnknown(names, cause, released=released)

    def _release_unseen(self, http: Client | AuthenticatedClient, claims: Sequence[p.Claim], *,
                        tries: int) -> bool:
        """Releases what an acquire of unknown outcome may have granted, but not what the
        session held before it (that acquire was at most a re-grant). True if all answered."""
        with self._mutex:
            unseen = [claim for claim in claims if (claim.kind, claim.name) not in self._held]
        answered = [self._send(claim.release, p.Claim.release_done, tries=tries,
                               timeout=p.CLEANUP_TIMEOUT, http=http) is not None for claim in unseen]
        return all(answered)

    def _send(self, call: p.Call, done: Callable[[Response[Any]], bool], *, tries: int,
              timeout: float, http: Client | AuthenticatedClient | None = None) -> int | None:
        """The status of a release or an end, or None if no try got an answer below 500."""
        http = http or self._http
        _set_timeout(http, httpx.Timeout(timeout))
        for attempt in range(tries):
            if attempt:
                time.sleep(0.2 * attempt)
            try:
                response = call.endpoint.sync_detailed(client=http, **call.kwargs)
            except httpx.HTTPError as error:
                log.info("lockd: %s of session %r: %s", call.endpoint.__name__, self._name, error)
                continue
            if done(response):
                return int(response.status_code)
        return None

    # Keeping it alive.

    def _keep_alive_once(self, budget: float) -> bool:
        """Sends one keepalive; True if it got through. Declares the session lost on a 404, in
        jeopardy on any other failure, safe again on a success."""
        assert self.id is not None
        call = s.keepalive_call(self.id)
        _set_timeout(self._http, p.http_timeout(budget))
        sent = time.monotonic()
        try:
            response = call.endpoint.sync_detailed(client=self._http, **call.kwargs)
            view = s.read_keepalive(response)
        except LockdError as gone:
            self._declare_lost(f"the server answered {gone.status} to a keepalive: the session has ended")
            return False
        except httpx.HTTPError as error:
            log.info("lockd: keepalive of session %r: %s", self._name, error)
            self._enter_jeopardy()
            return False
        if view is None:
            log.info("lockd: keepalive of session %r answered %s", self._name, int(response.status_code))
            self._enter_jeopardy()
            return False
        self._apply(view, sent)
        self._leave_jeopardy()
        return True

    def _keep_alive_loop(self) -> None:
        try:
            self._keep_alive_until_stopped()
        except Exception as error:
            self._declare_lost(f"the keepalive thread failed: {error!r}")
            raise

    def _keep_alive_until_stopped(self) -> None:
        next_at = self.deadline - self.ttl + self._timing.renew_every
        while not self._stop.wait(max(0.0, next_at - time.monotonic())):
            budget = self._timing.renew_budget(time.monotonic(), self.deadline)
            if budget is None:
                self._declare_lost("no keepalive got through before the safety margin")
                return
            if self._keep_alive_once(budget):
                next_at = self.deadline - self.ttl + self._timing.renew_every
            elif self.lost.is_set():
                return
            else:
                lost_at = self.deadline - self._timing.margin
                next_at = min(time.monotonic() + self._timing.retry_pause, lost_at)

    def _declare_lost(self, reason: str) -> None:
        with self._mutex:
            if not self._set_lost(reason):
                return
        self._tell_lost(reason)


def _set_timeout(http: Client | AuthenticatedClient, timeout: httpx.Timeout) -> None:
    http.get_httpx_client().timeout = timeout
