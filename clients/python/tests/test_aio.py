"""The asyncio guard: held and released; when the lease is lost the task doing the work is
cancelled and LeaseLost comes out of `async with`, before the lease can have ended."""

from __future__ import annotations

import asyncio
import signal
import time

import httpx
import pytest
from conftest import Server, measured

from lockd_client import AsyncLease, AsyncLockd, LeaseLost, LockHeld


def test_async_acquire_renew_release(lockd: Server) -> None:
    async def scenario() -> None:
        client = AsyncLockd(lockd.base)
        async with client.lock("async:job", ttl=3) as lease:
            first_expiry = lease.expires_at
            await asyncio.sleep(1.4)  # one renewal (every 1 s)
            assert lease.expires_at is not None and first_expiry is not None
            assert lease.expires_at > first_expiry
            with pytest.raises(LockHeld):
                async with client.lock("async:job", ttl=3):
                    pass
        assert httpx.get(f"{lockd.base}/locks/async:job").status_code == 404
        async with client.lock("async:job", ttl=3) as again:
            assert again.fencing_token > lease.fencing_token

    asyncio.run(scenario())


def test_the_work_is_cancelled_when_the_lease_is_lost(lockd: Server, backend: str) -> None:
    fired: list[tuple[float, float]] = []

    def on_lost(lease: AsyncLease) -> None:
        fired.append((time.monotonic(), time.time()))

    async def scenario() -> None:
        client = AsyncLockd(lockd.base)
        work_cancelled = False
        with pytest.raises(LeaseLost) as raised:
            async with client.lock("async:lost", ttl=3, on_lost=on_lost) as lease:
                await asyncio.sleep(1.2)
                lockd.send_signal(signal.SIGKILL)
                killed = time.monotonic()
                try:
                    await asyncio.sleep(30)
                except asyncio.CancelledError:
                    work_cancelled = True
                    raise
        assert work_cancelled
        assert isinstance(raised.value.__cause__, asyncio.CancelledError)
        lost_mono, lost_wall = fired[0]
        assert lease.expires_at is not None
        assert lost_mono < lease.deadline and lost_wall < lease.expires_at.timestamp()
        # The task is not left cancelled: it goes on after handling LeaseLost.
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0
        await asyncio.sleep(0)
        measured(f"asyncio SIGKILL [{backend}]: work cancelled {lost_mono - killed:.2f} s after the "
                 f"kill, {lease.expires_at.timestamp() - lost_wall:.2f} s before expires_at")

    asyncio.run(scenario())


def test_a_cancelled_block_still_releases(lockd: Server) -> None:
    async def scenario() -> None:
        client = AsyncLockd(lockd.base)

        async def work() -> None:
            async with client.lock("async:cancelled", ttl=3):
                await asyncio.sleep(30)

        task = asyncio.create_task(work())
        await asyncio.sleep(0.5)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)  # the release goes on shielded from the cancellation
        assert httpx.get(f"{lockd.base}/locks/async:cancelled").status_code == 404

    asyncio.run(scenario())
