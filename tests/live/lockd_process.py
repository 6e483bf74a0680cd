"""A live lockd process for the live tests (docs-check, the generated Python client).

Starts the debug binary on a fresh SQLite file in a temporary directory (or on the database
given) and on a port the kernel picks (`--bind 127.0.0.1:0`), reads the port from its
"listening on" line, and kills it on exit. Its stderr is kept (`stderr_lines()`), e.g. for the
audit log. Standard library only, so docs-check needs nothing but python3.
"""

import os
import pathlib
import queue
import subprocess
import tempfile
import threading

REPO = pathlib.Path(__file__).resolve().parents[2]
BINARY = pathlib.Path(os.environ.get("LOCKD_BINARY", REPO / "target" / "debug" / "lockd"))


class LockdProcess:
    """`with LockdProcess() as lockd: lockd.base` is e.g. `http://127.0.0.1:40123`."""

    def __init__(self, extra_args=(), api_keys=None, database_url=None, env=None):
        self.extra_args = list(extra_args)
        # None: a fresh SQLite file in the temporary directory.
        self.database_url = database_url
        # Added to lockd's environment (e.g. {"LOCKD_LOG": "warn,lockd::audit=info"}).
        self.env = dict(env or {})
        # {tenant: key}: written as an API keys file (hashed with `lockd hash-key`).
        self.api_keys = api_keys or {}
        self.base = None
        self._dir = None
        self._process = None
        self._stderr = []

    def __enter__(self):
        if not BINARY.exists():
            raise RuntimeError(f"{BINARY} is missing: run `cargo build -p lockd` first")
        self._dir = tempfile.TemporaryDirectory(prefix="lockd-live-")
        args = [
            str(BINARY), "serve",
            "--bind", "127.0.0.1:0",
            "--database-url", self.database_url or f"sqlite://{self._dir.name}/locks.db",
            *self.extra_args,
        ]
        if self.api_keys:
            args += ["--api-keys-file", self._write_api_keys()]
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "RUST_LOG")}
        env.setdefault("LOCKD_LOG", "warn")
        env.update(self.env)
        self._process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, text=True, env=env,
        )
        lines = queue.Queue()
        threading.Thread(target=self._read_stderr, args=(lines,), daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=30)
            except queue.Empty:
                self.__exit__(None, None, None)
                raise RuntimeError(f"lockd did not start listening: {self._stderr}")
            if line is None:
                raise RuntimeError(f"lockd exited before listening: {self._stderr}")
            if line.startswith("listening on "):
                self.base = line.removeprefix("listening on ").strip()
                return self

    @property
    def pid(self):
        return self._process.pid

    def send_signal(self, sig):
        """E.g. signal.SIGKILL, or SIGSTOP and SIGCONT to freeze and thaw the server."""
        self._process.send_signal(sig)

    def stderr_lines(self):
        """Every stderr line so far (a copy)."""
        return list(self._stderr)

    def _read_stderr(self, lines):
        for line in self._process.stderr:
            self._stderr.append(line.rstrip("\n"))
            lines.put(line)
        lines.put(None)

    def _write_api_keys(self):
        path = pathlib.Path(self._dir.name) / "api-keys"
        entries = []
        for tenant, key in self.api_keys.items():
            digest = subprocess.run(
                [str(BINARY), "hash-key"], input=key, capture_output=True, text=True, check=True,
            ).stdout.strip()
            entries.append(f"{tenant} {digest}\n")
        path.write_text("".join(entries))
        return str(path)

    def __exit__(self, *exc):
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        return False
