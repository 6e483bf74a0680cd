"""The guard when the server fails: killed or frozen mid-hold, `lost` fires before the lease
can have ended; an acquire whose answer never comes is followed by a release."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import httpx
import pytest
from conftest import Server, measured
from proxy import UnknownOutcomeProxy

from lockd_client import AcquireUnknown, AsyncLockd, Lease, LeaseLost, Lockd

TTL = 3


def hold_until_lost(lockd: Server, fault: signal.Signals, backend: str) -> None:
    client = Lockd(lockd.base)
    fired: list[tuple[float, float]] = []
    called = threading.Event()

    def on_lost(lease: Lease) -> None:
        fired.append((time.monotonic(), time.time()))
        called.set()

    with pytest.raises(LeaseLost):
        with client.lock("held", ttl=TTL, on_lost=on_lost) as lease:
            time.sleep(1.5)  # at least one renewal went through
            lockd.send_signal(fault)
            faulted = time.monotonic()
            assert called.wait(TTL + 1), "on_lost was not called"
            assert lease.lost.is_set()
            lost_mono, lost_wall = fired[0]
            assert lease.expires_at is not None
            expires_at = lease.expires_at.timestamp()  # the last one the server gave
            assert lost_mono < lease.deadline, (lost_mono, lease.deadline)
            assert lost_wall < expires_at, (lost_wall, expires_at)
            measured(f"{fault.name} [{backend}]: lost {lost_mono - faulted:.2f} s after the fault, "
                     f"{expires_at - lost_wall:.2f} s before expires_at, "
                     f"{lease.deadline - lost_mono:.2f} s before lease.deadline ({lease.lost_reason})")
            if fault == signal.SIGSTOP:
                lockd.send_signal(signal.SIGCONT)
    if fault == signal.SIGSTOP:
        # Thawed, the server took the release that leaving the block sent.
        assert httpx.get(f"{lockd.base}/locks/held").status_code == 404


def test_lost_fires_before_expiry_when_the_server_is_killed(lockd: Server, backend: str) -> None:
    hold_until_lost(lockd, signal.SIGKILL, backend)


def test_lost_fires_before_expiry_when_the_server_is_frozen(lockd: Server, backend: str) -> None:
    hold_until_lost(lockd, signal.SIGSTOP, backend)


@pytest.mark.parametrize("flavour", ["threads", "asyncio"])
@pytest.mark.parametrize("mode", ["drop", "stall", "503"])
def test_an_acquire_of_unknown_outcome_is_released(lockd: Server, mode: str, flavour: str) -> None:
    """The proxy lets lockd grant the lock, then drops the connection (or never answers, or
    answers 503): the guard must release it with the same owner before raising."""
    with UnknownOutcomeProxy(lockd.base, b"POST /locks/orphan ", mode) as proxy:
        if flavour == "threads":
            lease = Lockd(proxy.base, request_timeout=1.0).lock("orphan", ttl=60)
            with pytest.raises(AcquireUnknown) as raised:
                with lease:
                    pytest.fail("the block ran without a known grant")
        else:
            alease = AsyncLockd(proxy.base, request_timeout=1.0).lock("orphan", ttl=60)

            async def enter() -> None:
                async with alease:
                    pytest.fail("the block ran without a known grant")

            with pytest.raises(AcquireUnknown) as raised:
                asyncio.run(enter())
        assert raised.value.released
        assert proxy.spoiled == [b"POST /locks/orphan HTTP/1.1"]
    time.sleep(0.3)
    events = [(e["event"], e.get("owner")) for e in lockd.audit() if e.get("resource") == "orphan"]
    owner = lease.owner if flavour == "threads" else alease.owner
    assert events == [("granted", owner), ("released", owner)], events
    assert httpx.get(f"{lockd.base}/locks/orphan").status_code == 404
