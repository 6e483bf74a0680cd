"""Watching an election (`GET /elections/{name}/observe`, Server-Sent Events) as an iterator of
`ElectionEvent`s: the current state first, then every change of leader."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from .generated.client import AuthenticatedClient, Client


@dataclass(frozen=True)
class ElectionEvent:
    """`kind` is `leader` (data: the leader, with `term`) or `vacant` (data: `election`, and
    the `term` that ended with its `reason` when one did). `id` only grows."""

    kind: str
    id: str | None
    data: dict[str, Any]

    @property
    def leader(self) -> str | None:
        return self.data.get("candidate") if self.kind == "leader" else None

    @property
    def term(self) -> int | None:
        term = self.data.get("term")
        return term if isinstance(term, int) else None


class _Parser:
    """The SSE wire format: fields up to a blank line make one event; `:` lines are comments."""

    def __init__(self) -> None:
        self.kind = "message"
        self.id: str | None = None
        self.data: list[str] = []

    def feed(self, line: str) -> ElectionEvent | None:
        if not line:
            if not self.data:
                return None
            event = ElectionEvent(self.kind, self.id, json.loads("\n".join(self.data)))
            self.kind, self.data = "message", []
            return event
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if field == "event":
            self.kind = value
        elif field == "data":
            self.data.append(value)
        elif field == "id":
            self.id = value
        return None


def _path(name: str) -> str:
    return f"/elections/{quote(name, safe='')}/observe"


def observe_election(api: Client | AuthenticatedClient, name: str) -> Generator[ElectionEvent, None, None]:
    """Yields the election's events until the server ends the stream (or the caller stops
    iterating). No read timeout: the server sends a keep-alive every 15 s."""
    parser = _Parser()
    client = api.get_httpx_client()
    with client.stream("GET", _path(name), timeout=httpx.Timeout(10.0, read=None)) as response:
        response.raise_for_status()
        for line in response.iter_lines():
            event = parser.feed(line)
            if event is not None:
                yield event


async def aobserve_election(api: Client | AuthenticatedClient, name: str) -> AsyncGenerator[ElectionEvent, None]:
    """The asyncio twin of `observe_election`."""
    parser = _Parser()
    client = api.get_async_httpx_client()
    async with client.stream("GET", _path(name), timeout=httpx.Timeout(10.0, read=None)) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            event = parser.feed(line)
            if event is not None:
                yield event
