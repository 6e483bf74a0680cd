"""The lock guard against a live lockd: the lease held, contended, released with no renewal
after it, and lost at once when the server says it is gone."""

from __future__ import annotations

import threading
import time

import httpx
import pytest
from conftest import Server

from lockd_client import Lease, LeaseLost, LockHeld, Lockd


def status(lockd: Server, resource: str) -> int:
    return httpx.get(f"{lockd.base}/locks/{resource}").status_code


def test_acquire_token_release(lockd: Server) -> None:
    client = Lockd(lockd.base)
    with client.lock("export:nightly", ttl=30) as lease:
        assert lease.fencing_token >= 1
        assert not lease.lost.is_set()
        assert lease.deadline - time.monotonic() > 29
        held = httpx.get(f"{lockd.base}/locks/export:nightly").json()
        assert held["owner"] == lease.owner and held["fencing_token"] == lease.fencing_token
        with pytest.raises(LockHeld):
            with client.lock("export:nightly", ttl=30):
                pass
    assert status(lockd, "export:nightly") == 404


def test_a_lease_can_be_held_again_after_leaving(lockd: Server) -> None:
    lease = Lockd(lockd.base).lock("again", ttl=3)
    with lease:
        first = lease.fencing_token
    with lease:
        assert lease.fencing_token > first and not lease.lost.is_set()
    assert status(lockd, "again") == 404


def test_default_owners_are_unique(lockd: Server) -> None:
    client = Lockd(lockd.base)
    owners = {client.lock(f"r{i}", ttl=5).owner for i in range(50)}
    assert len(owners) == 50


def test_a_waiting_guard_gets_the_lock_when_the_first_leaves(lockd: Server) -> None:
    client = Lockd(lockd.base)
    first_out = threading.Event()
    first_token: list[int] = []

    def hold() -> None:
        with client.lock("contended", ttl=3) as lease:
            first_token.append(lease.fencing_token)
            holding.set()
            time.sleep(1.5)
        first_out.set()

    holding = threading.Event()
    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(10)
    with client.lock("contended", ttl=3, wait=10) as second:
        assert first_out.wait(1), "granted while the first still held it"
        assert second.fencing_token > first_token[0]
        # Granted after a wait longer than ttl/3: renewed at once, so the deadline is fresh.
        assert second.deadline - time.monotonic() > 2
    holder.join()
    assert status(lockd, "contended") == 404


def test_no_renewal_is_sent_after_the_release(lockd: Server) -> None:
    """Leaves the block at moments around each renewal (every ttl/3 = 1 s), so that releases
    race renewals; the audit log must show nothing of an owner after its release."""
    client = Lockd(lockd.base)
    owners = []
    for hold in (1.0, 0.98, 1.02, 2.0, 1.99, 2.01):
        with client.lock("racing", ttl=3) as lease:
            owners.append(lease.owner)
            time.sleep(hold)
    time.sleep(1.5)  # a renewal sent late would have been answered and audited by now
    audit = lockd.audit()
    renewals = 0
    for owner in owners:
        events = [e["event"] for e in audit if e.get("owner") == owner]
        assert "released" in events, events
        after = events[events.index("released") + 1:]
        assert after == [], f"{owner}: {after} after its release"
        renewals += events.count("renewed")
    assert renewals >= 3, "the holds were meant to span renewals"


def test_a_404_to_a_renewal_is_lost_at_once(lockd: Server) -> None:
    client = Lockd(lockd.base)
    fired: list[float] = []
    called = threading.Event()

    def on_lost(lease: Lease) -> None:  # runs on the renewer thread, after `lost` is set
        fired.append(time.monotonic())
        called.set()

    with pytest.raises(LeaseLost):
        with client.lock("forced", ttl=3, on_lost=on_lost) as lease:
            forced = httpx.delete(f"{lockd.base}/locks/forced", params={"force": "true", "reason": "test"})
            assert forced.status_code == 200
            forced_at = time.monotonic()
            assert called.wait(3) and lease.lost.is_set()
            assert fired[0] - forced_at < 2.0  # the next renewal (every 1 s) saw the 404
            assert "404" in (lease.lost_reason or "")
