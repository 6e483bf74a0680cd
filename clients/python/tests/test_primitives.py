"""Semaphore permits and election leadership under the same guard, and observing an election."""

from __future__ import annotations

import asyncio
import threading
import time

import httpx
import pytest
from conftest import Server

from lockd_client import AsyncLockd, LockdError, LockHeld, Lockd


def test_permits_are_held_renewed_and_released(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with client.permits("exports", limit=2, permits=2, ttl=3) as permit:
        assert permit.fencing_token >= 1
        with pytest.raises(LockHeld):
            with client.permits("exports", limit=2, ttl=3):
                pass
        with pytest.raises(LockdError) as mismatch:
            with client.permits("exports", limit=3, ttl=3):
                pass
        assert mismatch.value.status == 409
        time.sleep(1.4)
        assert not permit.lost.is_set()
        renewed = [e for e in lockd.audit() if e.get("owner") == permit.owner and e["event"] == "renewed"]
        assert renewed, "the permit was not renewed"
    assert httpx.get(f"{lockd.base}/semaphores/exports").status_code == 404


def test_a_campaign_waits_for_the_leader_to_resign(lockd: Server) -> None:
    client = Lockd(lockd.base)
    resigned = threading.Event()
    leading = threading.Event()
    terms: list[int] = []

    def lead() -> None:
        with client.campaign("scheduler", candidate="node-a", ttl=3) as leadership:
            terms.append(leadership.term)
            leading.set()
            time.sleep(1.2)
        resigned.set()

    first = threading.Thread(target=lead)
    first.start()
    assert leading.wait(10)
    with pytest.raises(LockHeld):
        with client.campaign("scheduler", candidate="node-b", ttl=3):
            pass
    with client.campaign("scheduler", candidate="node-b", ttl=3, wait=10) as leadership:
        assert resigned.is_set()
        assert leadership.term > terms[0]
        assert httpx.get(f"{lockd.base}/elections/scheduler").json()["candidate"] == "node-b"
    first.join()
    assert httpx.get(f"{lockd.base}/elections/scheduler").status_code == 404


def test_observing_an_election(lockd: Server) -> None:
    client = Lockd(lockd.base)
    events = client.observe_election("observed")
    assert next(events).kind == "vacant"
    with client.campaign("observed", candidate="node-a", ttl=3) as leadership:
        event = next(events)
        assert (event.kind, event.leader, event.term) == ("leader", "node-a", leadership.term)
    ended = next(events)
    assert ended.kind == "vacant" and ended.data.get("reason") == "resigned"
    events.close()


def test_observing_an_election_with_asyncio(lockd: Server) -> None:
    async def scenario() -> None:
        client = AsyncLockd(lockd.base)
        stream = client.observe_election("observed")
        assert (await anext(stream)).kind == "vacant"
        async with client.campaign("observed", candidate="node-a", ttl=3) as leadership:
            event = await anext(stream)
            assert (event.kind, event.term) == ("leader", leadership.term)
        await stream.aclose()

    asyncio.run(scenario())
