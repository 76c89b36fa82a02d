"""Inside the sandbox: the model endpoint's loopback port, bridged to a Unix socket.

A sandboxed agent with ``network: model`` runs in its own network namespace, where
only loopback exists. This script (standard library only: it runs inside the sandbox
from its own file, with the harness's interpreter) listens on the endpoint's loopback
address and port there, forwards every connection to the Unix socket the harness bound
into the sandbox (served by :mod:`benchguard.harness.model_proxy`, which connects to the
endpoint and nothing else), and runs the agent as its child. Its exit status is the
agent's; SIGTERM and SIGINT are passed on.

Usage: ``python -I model_bridge.py --port PORT --socket PATH -- AGENT ARGV...``
"""

from __future__ import annotations

import contextlib
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence

CHUNK = 64 * 1024
# Most connections bridged at once; past it a connection is closed at once.
MAX_CONNECTIONS = 64


def relay(
    a: socket.socket, b: socket.socket, observe: Callable[[bytes], bool] | None = None
) -> None:
    """Copy bytes both ways until both sides are done, then close both. ``observe``
    sees each chunk from ``a`` before it is forwarded, until it returns False."""

    def pump(
        source: socket.socket, sink: socket.socket, tap: Callable[[bytes], bool] | None = None
    ) -> None:
        try:
            while data := source.recv(CHUNK):
                if tap is not None and not tap(data):
                    tap = None
                sink.sendall(data)
        except OSError:
            pass
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    back = threading.Thread(target=pump, args=(b, a), daemon=True)
    back.start()
    pump(a, b, observe)
    back.join()
    for end in (a, b):
        with contextlib.suppress(OSError):
            end.close()


def _listeners(port: int) -> list[socket.socket]:
    found: list[socket.socket] = []
    for family, host in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
        try:
            listener = socket.socket(family, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind((host, port))
            listener.listen(64)
        except OSError:
            continue  # no IPv6 loopback in this namespace: IPv4 is enough
        found.append(listener)
    return found


def _serve(listener: socket.socket, socket_path: str, slots: threading.Semaphore) -> None:
    while True:
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        if not slots.acquire(blocking=False):
            conn.close()
            continue

        def bridge(client: socket.socket = conn) -> None:
            try:
                upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                upstream.connect(socket_path)
            except OSError:
                client.close()
            else:
                relay(client, upstream)
            finally:
                slots.release()

        threading.Thread(target=bridge, daemon=True).start()


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if "--" not in args:
        print("usage: model_bridge.py --port PORT --socket PATH -- COMMAND...", file=sys.stderr)
        return 2
    split = args.index("--")
    options, command = args[:split], args[split + 1 :]
    try:
        port = int(options[options.index("--port") + 1])
        socket_path = options[options.index("--socket") + 1]
    except (ValueError, IndexError):
        print("model_bridge.py: --port and --socket are required", file=sys.stderr)
        return 2
    listeners = _listeners(port)
    if not listeners or not command:
        print(f"model_bridge.py: cannot listen on loopback port {port}", file=sys.stderr)
        return 2
    slots = threading.Semaphore(MAX_CONNECTIONS)
    for listener in listeners:
        threading.Thread(target=_serve, args=(listener, socket_path, slots), daemon=True).start()
    try:
        child = subprocess.Popen(command)
    except OSError as exc:
        print(f"model_bridge.py: {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        return 127
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda signum, _frame: child.send_signal(signum))
    code = child.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
