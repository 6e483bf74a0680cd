"""The session guard against a live lockd: holds of every kind taken under one session and kept
alive by its keepalives; jeopardy raised and cleared; lost before the session's end when lockd
is unreachable, and at once when the session is ended elsewhere; leaving the block ends the
session and frees every hold. Waits are for events, with generous timeouts."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any, Callable

import httpx
import pytest
from conftest import Server, measured
from proxy import UnknownOutcomeProxy

from lockd_client import (
    AcquireUnknown, AsyncLockd, AsyncSession, LockHeld, Lockd, Session, SessionLost,
)


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, f"timed out after {timeout} s waiting for {what}"
        time.sleep(0.05)


def session_holds(lockd: Server, session_id: str) -> list[tuple[str, str]] | None:
    """The session's live holds as (kind, name), as lockd says; None once it has ended."""
    answer = httpx.get(f"{lockd.base}/sessions/{session_id}")
    if answer.status_code == 404:
        return None
    assert answer.status_code == 200, answer.text
    return sorted((hold["kind"], hold["name"]) for hold in answer.json()["holds"])


def assert_all_free(lockd: Server) -> None:
    for path in ("locks/report", "locks/catalog", "locks/account:1", "locks/account:2",
                 "semaphores/exports", "elections/scheduler"):
        assert httpx.get(f"{lockd.base}/{path}").status_code == 404, path


def take_everything(session: Session) -> dict[str, Any]:
    return {
        "report": session.lock("report"),
        "catalog": session.lock("catalog", mode="shared"),
        "accounts": session.locks(["account:1", ("account:2", "shared")]),
        "exports": session.permits("exports", limit=3, permits=2),
        "scheduler": session.campaign("scheduler", value={"address": "10.0.0.7"}),
    }


def keepalives(lockd: Server) -> float:
    """Keepalives lockd answered 200 so far (its requests metric)."""
    for line in httpx.get(f"{lockd.base}/metrics").text.splitlines():
        if line.startswith('lockd_http_requests_total{route="/sessions/{id}/keepalive",method="POST",status="200"}'):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


EVERYTHING = sorted([("lock", "report"), ("lock", "catalog"), ("lock", "account:1"),
                     ("lock", "account:2"), ("semaphore", "exports"), ("election", "scheduler")])


def test_holds_of_every_kind_under_one_session(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with client.session(ttl=30, owner="nightly") as session:
        assert session.id is not None and session.owner == "nightly"
        held = take_everything(session)
        assert session_holds(lockd, session.id) == EVERYTHING
        report = httpx.get(f"{lockd.base}/locks/report").json()
        assert (report["owner"], report["session"]) == ("nightly", session.id)
        assert report["fencing_token"] == held["report"].fencing_token
        assert held["catalog"].mode == "shared" and held["report"].mode == "exclusive"
        assert [hold.name for hold in held["accounts"]] == ["account:1", "account:2"]
        assert [hold.mode for hold in held["accounts"]] == ["exclusive", "shared"]
        assert held["exports"].permits == 2
        leader = httpx.get(f"{lockd.base}/elections/scheduler").json()
        assert (leader["candidate"], leader["term"]) == ("nightly", held["scheduler"].term)

        # Another holder is kept out: a lease of its own, or another session.
        with pytest.raises(LockHeld):
            with client.lock("report", ttl=5):
                pass
        with client.session(ttl=5) as other:
            with pytest.raises(LockHeld):
                other.locks(["account:1", "account:3"])
            with pytest.raises(LockHeld):
                other.campaign("scheduler")
            reader = other.lock("catalog", mode="shared")  # readers share
            assert reader.fencing_token > held["catalog"].fencing_token

        # One hold released; the session and the others go on.
        assert session.release(held["report"]) is True
        assert session.release(held["report"]) is False  # nothing left to release
        assert httpx.get(f"{lockd.base}/locks/report").status_code == 404
        assert session_holds(lockd, session.id) == [h for h in EVERYTHING if h != ("lock", "report")]
        session_id = session.id
    assert session_holds(lockd, session_id) is None
    assert_all_free(lockd)


def test_keepalives_keep_the_holds_beyond_the_ttl(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with client.session(ttl=3) as session:
        assert session.id is not None
        held = take_everything(session)
        first_end = session.expires_at
        time.sleep(7)  # more than twice the TTL: only keepalives (every 1 s) keep them
        assert not session.lost.is_set()
        assert session_holds(lockd, session.id) == EVERYTHING
        assert session.expires_at is not None and first_end is not None
        assert session.expires_at > first_end
        assert httpx.get(f"{lockd.base}/locks/report").json()["fencing_token"] == held["report"].fencing_token
        kept = keepalives(lockd)
        assert kept >= 3, f"{kept} keepalives in 7 s"
    assert_all_free(lockd)


def test_jeopardy_is_raised_at_a_failed_keepalive_and_cleared_at_the_next(lockd: Server) -> None:
    """The proxy answers the first keepalive 503 (after lockd took it): jeopardy, then the retry
    gets through and the session is safe again, never lost."""
    events: list[str] = []
    jeopardy, safe = threading.Event(), threading.Event()

    def on_jeopardy(session: Session) -> None:
        events.append("jeopardy")
        assert session.jeopardy.is_set()
        jeopardy.set()

    def on_safe(session: Session) -> None:
        events.append("safe")
        assert not session.jeopardy.is_set()
        safe.set()

    with UnknownOutcomeProxy(lockd.base, b"POST /sessions/", "503") as proxy:
        client = Lockd(proxy.base)
        with client.session(ttl=6, on_jeopardy=on_jeopardy, on_safe=on_safe,
                            on_lost=lambda s: events.append("lost")) as session:
            session.lock("report")
            assert jeopardy.wait(20), "no jeopardy"
            assert safe.wait(20), "jeopardy was not cleared"
            assert not session.lost.is_set() and not session.jeopardy.is_set()
            assert len(proxy.spoiled) == 1 and proxy.spoiled[0].endswith(b"/keepalive HTTP/1.1")
            assert httpx.get(f"{lockd.base}/locks/report").status_code == 200
    assert events == ["jeopardy", "safe"]
    assert_all_free(lockd)


def test_lost_before_the_session_ends_when_lockd_is_unreachable(lockd: Server, backend: str) -> None:
    """Cut off from lockd (every request through the proxy fails): jeopardy at the first failed
    keepalive, lost before the last expires_at lockd gave; lockd then ends the session itself."""
    ttl = 3
    fired: dict[str, tuple[float, float]] = {}
    lost = threading.Event()

    def on(name: str) -> Callable[[Session], None]:
        def record(session: Session) -> None:
            fired.setdefault(name, (time.monotonic(), time.time()))
            if name == "lost":
                lost.set()
        return record

    with UnknownOutcomeProxy(lockd.base, None) as proxy:
        client = Lockd(proxy.base, request_timeout=2.0)
        with pytest.raises(SessionLost):
            with client.session(ttl=ttl, on_jeopardy=on("jeopardy"), on_lost=on("lost")) as session:
                assert session.id is not None
                session.lock("report")
                opened_end = session.expires_at
                wait_until(lambda: session.expires_at != opened_end, 15, "a keepalive")
                proxy.cut.set()
                cut = time.monotonic()
                assert lost.wait(ttl + 15), "lost never fired"
                lost_mono, lost_wall = fired["lost"]
                assert session.expires_at is not None
                expires_at = session.expires_at.timestamp()  # the last one lockd gave
                assert "jeopardy" in fired and fired["jeopardy"][0] <= lost_mono
                assert lost_mono < session.deadline, (lost_mono, session.deadline)
                assert lost_wall < expires_at, (lost_wall, expires_at)
                with pytest.raises(SessionLost):
                    session.lock("another")
                measured(f"session cut off [{backend}]: jeopardy {fired['jeopardy'][0] - cut:.2f} s and lost "
                         f"{lost_mono - cut:.2f} s after the cut, {expires_at - lost_wall:.2f} s before "
                         f"expires_at ({session.lost_reason})")
                session_id = session.id
    # Leaving could not reach lockd either: the session ends by itself, with its hold.
    wait_until(lambda: session_holds(lockd, session_id) is None, ttl + 15, "the session to run out")
    assert httpx.get(f"{lockd.base}/locks/report").status_code == 404


def test_lost_at_once_when_the_session_is_ended_elsewhere(lockd: Server) -> None:
    lost = threading.Event()
    client = Lockd(lockd.base)
    with pytest.raises(SessionLost) as raised:
        with client.session(ttl=3, on_lost=lambda session: lost.set()) as session:
            session.lock("report")
            ended = httpx.delete(f"{lockd.base}/sessions/{session.id}")
            assert ended.status_code == 204
            assert httpx.get(f"{lockd.base}/locks/report").status_code == 404  # freed with it
            assert lost.wait(10), "lost never fired"  # at the next keepalive (every 1 s)
            assert "404" in (session.lost_reason or "")
            assert not session.jeopardy.is_set()
            with pytest.raises(SessionLost):
                session.check()
    assert "404" in raised.value.reason


def test_an_acquire_finding_the_session_ended_is_lost(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with pytest.raises(SessionLost):
        with client.session(ttl=60) as session:  # no keepalive due for 20 s
            assert httpx.delete(f"{lockd.base}/sessions/{session.id}").status_code == 204
            session.permits("exports", limit=2)
    assert session.lost.is_set()
    assert httpx.get(f"{lockd.base}/semaphores/exports").status_code == 404


def test_leaving_on_an_exception_ends_the_session(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with pytest.raises(RuntimeError, match="the work failed"):
        with client.session(ttl=30) as session:
            take_everything(session)
            session_id = session.id
            raise RuntimeError("the work failed")
    assert session_id is not None and session_holds(lockd, session_id) is None
    assert_all_free(lockd)


def test_an_acquire_of_unknown_outcome_under_a_session_is_released(lockd: Server) -> None:
    with UnknownOutcomeProxy(lockd.base, b"POST /locks/orphan ", "drop") as proxy:
        with Lockd(proxy.base, request_timeout=1.0).session(ttl=30) as session:
            with pytest.raises(AcquireUnknown) as raised:
                session.lock("orphan")
            assert raised.value.released
            assert proxy.spoiled == [b"POST /locks/orphan HTTP/1.1"]
            assert httpx.get(f"{lockd.base}/locks/orphan").status_code == 404
            assert session.id is not None and session_holds(lockd, session.id) == []
            assert not session.lost.is_set()


def test_async_session(lockd: Server) -> None:
    async def scenario() -> None:
        client = AsyncLockd(lockd.base)
        async with client.session(ttl=3, owner="async") as session:
            assert session.id is not None
            report = await session.lock("report")
            await session.lock("catalog", mode="shared")
            await session.locks(["account:1", ("account:2", "shared")])
            await session.permits("exports", limit=3, permits=2)
            leader = await session.campaign("scheduler")
            assert leader.term > report.fencing_token
            await asyncio.sleep(4)  # beyond the TTL: kept alive
            assert not session.lost.is_set()
            assert session_holds(lockd, session.id) == EVERYTHING
            with pytest.raises(LockHeld):
                async with client.session(ttl=3) as other:
                    await other.lock("report")
            assert await session.release(report) is True
            session_id = session.id
        assert session_holds(lockd, session_id) is None
        assert_all_free(lockd)

    asyncio.run(scenario())


def test_async_session_jeopardy_then_safe(lockd: Server) -> None:
    events: list[str] = []

    async def scenario() -> None:
        client = AsyncLockd(proxy.base)
        async with client.session(ttl=6, on_jeopardy=lambda s: events.append("jeopardy"),
                                  on_safe=lambda s: events.append("safe")) as session:
            await session.lock("report")
            for _ in range(400):
                if events == ["jeopardy", "safe"]:
                    break
                await asyncio.sleep(0.05)
            assert events == ["jeopardy", "safe"]
            assert not session.jeopardy.is_set() and not session.lost.is_set()

    with UnknownOutcomeProxy(lockd.base, b"POST /sessions/", "503") as proxy:
        asyncio.run(scenario())
    assert_all_free(lockd)


def test_async_block_is_cancelled_when_the_session_is_lost(lockd: Server) -> None:
    async def scenario() -> None:
        client = AsyncLockd(lockd.base)
        cancelled = False
        session: AsyncSession | None = None
        with pytest.raises(SessionLost) as raised:
            async with client.session(ttl=3) as session:
                await session.lock("report")
                async with httpx.AsyncClient() as other:
                    assert (await other.delete(f"{lockd.base}/sessions/{session.id}")).status_code == 204
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    cancelled = True
                    raise
        assert cancelled
        assert isinstance(raised.value.__cause__, asyncio.CancelledError)
        assert session is not None and "404" in (session.lost_reason or "")
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0
        assert httpx.get(f"{lockd.base}/locks/report").status_code == 404

    asyncio.run(scenario())
