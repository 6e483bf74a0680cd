"""Fixtures of the live tests: a lockd of its own for every test (the debug binary, started by
tests/live/lockd_process.py) on SQLite or on a fresh PostgreSQL database, with its audit log
kept; and a summary of the measured margins at the end of the run."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "live"))

from lockd_process import BINARY, LockdProcess  # noqa: E402

POSTGRES_URL = os.environ.get("LOCKD_TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/test")
BACKENDS = os.environ.get("LOCKD_PY_BACKENDS", "sqlite,postgres").split(",")

#: Lines for the summary at the end (how long before expires_at `lost` fired, ...).
MEASUREMENTS: list[str] = []


def measured(line: str) -> None:
    MEASUREMENTS.append(line)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if MEASUREMENTS:
        terminalreporter.section("measured")
        for line in MEASUREMENTS:
            terminalreporter.write_line(line)


def _missing(postgres: bool) -> str | None:
    """What the live tests lack, in one line that says how to get it; None when nothing is."""
    if not (BINARY.is_file() and os.access(BINARY, os.X_OK)):
        if os.environ.get("LOCKD_BINARY"):
            return (f"LOCKD_BINARY={BINARY} is not an executable file: point it at a lockd binary, "
                    "or unset it and run `cargo build -p lockd` at the repository's root")
        return (f"no lockd binary at {BINARY}: run `cargo build -p lockd` at the repository's root, "
                "or set LOCKD_BINARY=/path/to/lockd")
    if postgres:
        try:
            answers = subprocess.run(["psql", "-X", "-qtAc", "SELECT 1", "-d", POSTGRES_URL],
                                     capture_output=True, timeout=10).returncode == 0
        except FileNotFoundError:
            return ("psql is not installed, and the PostgreSQL backend's tests use it: install "
                    "PostgreSQL (scripts/ensure-postgres, as root), or test on SQLite only with "
                    "LOCKD_PY_BACKENDS=sqlite")
        except subprocess.TimeoutExpired:
            answers = False
        if not answers:
            return (f"PostgreSQL does not answer at {_shown(POSTGRES_URL)}, and the PostgreSQL "
                    "backend's tests need it: start one (scripts/ensure-postgres, as root), set "
                    "LOCKD_TEST_DATABASE_URL, or test on SQLite only with LOCKD_PY_BACKENDS=sqlite")
    return None


def _shown(url: str) -> str:
    """The URL without its password, if it has one."""
    parts = urllib.parse.urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test but the drift tests runs a live lockd: without one (or without PostgreSQL for
    that backend), stop before running any, with one line that says what to do."""
    live = [item for item in items if item.path.name != "test_generated_drift.py"]
    if live:
        postgres = any(getattr(item, "callspec", None) is not None
                       and item.callspec.params.get("backend") == "postgres" for item in live)
        missing = _missing(postgres)
        if missing is not None:
            raise pytest.UsageError(missing)


def _psql(sql: str) -> None:
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-d", POSTGRES_URL, "-c", sql],
                   check=True, capture_output=True, text=True)


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


class Server(LockdProcess):
    """A running lockd whose audit log (JSON lines of target lockd::audit) can be read."""

    def audit(self) -> list[dict[str, Any]]:
        events = []
        for line in self.stderr_lines():
            if line.startswith("{"):
                record = json.loads(line)
                if record.get("target") == "lockd::audit":
                    events.append(record["fields"])
        return events


@pytest.fixture
def database_url(backend: str) -> Iterator[str | None]:
    """None for SQLite (lockd_process makes a temporary file); a database of its own on
    PostgreSQL, dropped afterwards. Fails (never skips) when PostgreSQL does not answer."""
    if backend == "sqlite":
        yield None
        return
    name = f"lockd_py_{uuid.uuid4().hex[:12]}"
    _psql(f"CREATE DATABASE {name}")
    try:
        yield POSTGRES_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        _psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@pytest.fixture
def lockd(database_url: str | None) -> Iterator[Server]:
    env = {"LOCKD_LOG": "warn,lockd::audit=info", "LOCKD_LOG_FORMAT": "json"}
    with Server(database_url=database_url, env=env) as server:
        yield server
