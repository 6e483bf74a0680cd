"""A tiny HTTP/1.1 proxy in front of lockd that makes an acquire's outcome unknown: the first
request whose line starts with a given prefix is forwarded, lockd's answer is awaited (so the
request did take effect), and then the client gets either nothing (the connection is closed) or
a 503 instead. Every other request is passed through untouched. `cut` cuts lockd off: while it
is set, every request's connection is closed unanswered (nothing reaches lockd)."""

from __future__ import annotations

import socket
import threading
from urllib.parse import urlsplit

PROBLEM_503 = (b'{"type":"/problems/service-unavailable","title":"Service Unavailable",'
               b'"status":503,"detail":"made up by the test proxy","instance":"/"}')


def _read_message(sock: socket.socket, buffered: bytes = b"") -> tuple[bytes, bytes]:
    """One HTTP message with a Content-Length (or none) from `sock`: (message, what follows)."""
    data = buffered
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the headers ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the body")
        rest += chunk
    return head + b"\r\n\r\n" + rest[:length], rest[length:]


class UnknownOutcomeProxy:
    """`with UnknownOutcomeProxy(lockd.base, b"POST /locks/", "drop") as proxy: proxy.base`."""

    def __init__(self, upstream: str, prefix: bytes | None, mode: str = "drop"):
        assert mode in ("drop", "stall", "503")
        parts = urlsplit(upstream)
        self.upstream = (parts.hostname, parts.port)
        self.prefix = prefix
        self.mode = mode
        self.spoiled: list[bytes] = []  # the request lines whose answers were withheld
        self.cut = threading.Event()  # set: lockd is unreachable through the proxy
        self._armed = prefix is not None
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.base = f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> UnknownOutcomeProxy:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        if self.cut.is_set():
            client.close()
            return
        upstream = socket.create_connection(self.upstream)
        pending = b""
        try:
            while True:
                request, pending = _read_message(client, pending)
                if self.cut.is_set():
                    return
                upstream.sendall(request)
                response, _ = _read_message(upstream)
                with self._lock:
                    spoil = self._armed and self.prefix is not None and request.startswith(self.prefix)
                    if spoil:
                        self._armed = False
                        self.spoiled.append(request.split(b"\r\n", 1)[0])
                if not spoil:
                    client.sendall(response)
                    continue
                if self.mode == "stall":
                    while client.recv(65536):  # until the client times out and closes
                        pass
                elif self.mode == "503":
                    client.sendall(b"HTTP/1.1 503 Service Unavailable\r\n"
                                   b"content-type: application/problem+json\r\n"
                                   b"connection: close\r\n"
                                   b"content-length: " + str(len(PROBLEM_503)).encode() + b"\r\n\r\n"
                                   + PROBLEM_503)
                return
        except (ConnectionError, OSError):
            return
        finally:
            client.close()
            upstream.close()
