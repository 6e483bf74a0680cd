"""What both asyncio guards (`AsyncLease` in aio.py, `AsyncSession` in aio_session.py) do when the
`async with` block they guard is left: end the hold (release, or end the session) even when the
block is cancelled, and turn their own cancellation of the block, made when the hold was lost,
into the loss."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, Protocol


class _Flag(Protocol):
    def is_set(self) -> bool: ...


class GuardedBlock(Protocol):
    """A guard whose `async with` block runs in `_holder`, which it cancels (setting
    `_cancelled_holder`) when the hold is lost, unless `_closing`."""

    _closing: bool
    _cancelled_holder: bool
    _holder: asyncio.Task[Any] | None

    @property
    def lost(self) -> _Flag: ...

    def _lost_error(self) -> BaseException: ...


async def leave(guard: GuardedBlock, cleanup: Coroutine[Any, Any, None], exc_type: Any,
                exc: Any) -> None:
    """Runs `cleanup` (shielded: a cancellation from outside lets it go on in the background),
    then raises the guard's loss when the block ended because of it, or ended cleanly after it."""
    guard._closing = True  # from here on the guard cancels nothing
    running = asyncio.ensure_future(cleanup)
    try:
        await asyncio.shield(running)
    except asyncio.CancelledError:
        if not guard._cancelled_holder:
            raise  # cancelled from outside: the cleanup goes on in the background
        await running  # our own cancellation arrived late; the cleanup is still running
    if guard._cancelled_holder:
        if guard._holder is not None:
            guard._holder.uncancel()
        if exc_type is None or issubclass(exc_type, asyncio.CancelledError):
            raise guard._lost_error() from exc
    elif exc_type is None and guard.lost.is_set():
        raise guard._lost_error()
