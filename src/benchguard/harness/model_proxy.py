"""Model-only network: the harness side of a sandboxed agent's one way out.

With ``network: model`` a sandboxed agent gets no network of its own (bwrap
``--unshare-net``: loopback only). The harness serves a Unix socket in the run's
scratch directory, bound into the sandbox, and connects each connection made to it to
the model endpoint's host and port, and to nothing else; inside, :mod:`model_bridge`
listens on the endpoint's loopback port and forwards to the socket. The agent keeps
its configured URL unchanged.

What the agent can reach, per mode: unsandboxed, whatever the host can (this is no
network boundary); sandboxed with ``network: false``, loopback inside its own namespace
only; with ``network: model``, that plus the endpoint's host and port, as a byte stream
(TLS or not; nothing is filtered; the first connection's first request is copied, up
to a bound, to read its user message: ``harness.model_request``); with ``network: true`` (or a task with
``network: true``), the host's whole network.

Only loopback endpoints on ports from 1024 up are supported: the bridge listens on the
URL's own address inside, so the URL must name loopback (a local model server, or a
local forwarding proxy to a remote API), and an unprivileged agent cannot listen below
1024. :func:`model_endpoint` refuses anything else with the reason.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from benchguard.harness import model_bridge
from benchguard.harness.model_request import RequestTap

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
CONNECT_TIMEOUT_S = 10.0


class ModelNetworkError(ValueError):
    """The endpoint cannot be served as a model-only network; the message says why."""


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int


def model_endpoint(url: str) -> Endpoint:
    """The loopback host and port of ``url``; :class:`ModelNetworkError` otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelNetworkError(f"{url!r} is not an http(s) URL with a host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise ModelNetworkError(f"{url!r} has an invalid port") from None
    if parts.hostname not in LOOPBACK_HOSTS:
        raise ModelNetworkError(
            f"{url!r}: network: model serves a loopback endpoint only "
            f"({', '.join(LOOPBACK_HOSTS)}); run a local forwarding proxy to a remote "
            "API, or give the agent the host network with network: true"
        )
    if port < 1024:
        raise ModelNetworkError(
            f"{url!r}: network: model needs a port from 1024 up (the unprivileged agent "
            "listens on it inside the sandbox)"
        )
    return Endpoint("127.0.0.1" if parts.hostname == "localhost" else parts.hostname, port)


def bridge_script() -> Path:
    """The in-sandbox half, run from its own file (bound read-only)."""
    return Path(model_bridge.__file__).resolve()


class ModelProxy:
    """Serves ``socket_path``, connecting each client to ``endpoint`` and nowhere else."""

    def __init__(self, socket_path: Path, endpoint: Endpoint, *, owner: int | None = None) -> None:
        self.socket_path = socket_path
        self.endpoint = endpoint
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(socket_path))
        # The agent's uid (the harness may be root) must be able to connect.
        if owner is not None:
            os.chown(socket_path, owner, -1)
        os.chmod(socket_path, 0o600 if owner is not None else 0o666)
        self._listener.listen(64)
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._slots = threading.Semaphore(model_bridge.MAX_CONNECTIONS)
        # The first connection's request is read for its user message (model_request).
        self.tap = RequestTap()
        self._tapped = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                client.close()
                continue
            threading.Thread(target=self._bridge, args=(client,), daemon=True).start()

    def _bridge(self, client: socket.socket) -> None:
        try:
            try:
                upstream = socket.create_connection(
                    (self.endpoint.host, self.endpoint.port), timeout=CONNECT_TIMEOUT_S
                )
            except OSError:
                client.close()
                return
            upstream.settimeout(None)
            with self._lock:
                self._open.update((client, upstream))
                first, self._tapped = not self._tapped, True
            model_bridge.relay(client, upstream, self.tap.feed if first else None)
            if first:
                self.tap.finish()
            with self._lock:
                self._open.difference_update((client, upstream))
        finally:
            self._slots.release()

    def close(self) -> None:
        """Stop serving and cut every open connection."""
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            for end in self._open:
                with contextlib.suppress(OSError):
                    end.shutdown(socket.SHUT_RDWR)
                    end.close()
            self._open.clear()
        self._thread.join(timeout=5)
        with contextlib.suppress(OSError):
            self.socket_path.unlink()
