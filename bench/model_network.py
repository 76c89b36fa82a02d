"""Latency of the model-only network (network: model), beside a direct loopback call.

A local HTTP server stands in for the model endpoint, answering each POST with a
streamed-size body (``--body-kib``, default 32 KiB: a long SSE reply). One client
process, started through ``model_bridge.py`` exactly as a sandboxed agent is (the
bridge listens on its own loopback port and forwards to the harness's Unix socket,
served by ``ModelProxy``, which connects to the endpoint), makes ``--requests`` POSTs,
each on a new connection, alternating: directly to the endpoint (the baseline, what
``network: true`` gives) and through the bridge and proxy. No sandbox is built, so the
figure is the relay's own cost, not bwrap's start-up.

Figures: median milliseconds per request each way, and their ratio, measured in this
one run. A model call takes seconds, so a few hundred microseconds per request is
noise for an agent.
Usage: python bench/model_network.py [--requests 200] [--body-kib 32]
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchguard.harness.model_proxy import Endpoint, ModelProxy, bridge_script

CLIENT = """\
import json, sys, time, urllib.request
direct, bridged, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
times = {"direct": [], "bridged": []}
body = json.dumps({"messages": [{"role": "user", "content": "x" * 2000}]}).encode()
for index in range(2 * count):
    name, url = ("direct", direct) if index % 2 == 0 else ("bridged", bridged)
    start = time.perf_counter()
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    with opener.open(request, timeout=30) as answer:
        answer.read()
    times[name].append(time.perf_counter() - start)
print(json.dumps(times))
"""


def _server(body_kib: int) -> ThreadingHTTPServer:
    payload = (b"data: " + b"x" * 1018 + b"\n\n") * body_kib

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--body-kib", type=int, default=32)
    args = parser.parse_args()
    server = _server(args.body_kib)
    port = int(server.server_address[1])
    bridge_port = _free_port()
    with tempfile.TemporaryDirectory(prefix="bg-bench-net-") as scratch:
        socket_path = Path(scratch) / "model.sock"
        proxy = ModelProxy(socket_path, Endpoint("127.0.0.1", port))
        try:
            command = [
                sys.executable,
                "-I",
                str(bridge_script()),
                "--port",
                str(bridge_port),
                "--socket",
                str(socket_path),
                "--",
                sys.executable,
                "-I",
                "-c",
                CLIENT,
                f"http://127.0.0.1:{port}/v1/messages",
                f"http://127.0.0.1:{bridge_port}/v1/messages",
                str(args.requests),
            ]
            result = subprocess.run(command, capture_output=True, text=True, check=True)
        finally:
            proxy.close()
            server.shutdown()
    times = json.loads(result.stdout)
    direct = statistics.median(times["direct"]) * 1000
    bridged = statistics.median(times["bridged"]) * 1000
    print(f"requests each way: {args.requests}, reply body: {args.body_kib} KiB")
    print(f"direct loopback (baseline, network: true): {direct:.3f} ms/request (median)")
    print(f"model-only network (bridge + proxy):       {bridged:.3f} ms/request (median)")
    print(f"ratio: {bridged / direct:.2f}x; added: {bridged - direct:.3f} ms/request")


if __name__ == "__main__":
    main()
