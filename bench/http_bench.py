"""tools/call search over Streamable HTTP on loopback: 8 concurrent clients, 10,000 memories.

Builds a 10,000-memory store, starts the real ``aletheia-server`` on a free 127.0.0.1 port, and
has 8 client threads (one keep-alive connection and one MCP session each) call ``search`` with
varied queries for a fixed time. Prints calls/s and p50/p95 latency against the targets, and
for information the same clients doing ``ping`` (the transport alone) and the search tool
called in process on one thread (the tool alone).

    .venv/bin/python bench/http_bench.py [--memories N] [--clients N] [--seconds S]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia.clock import system_clock
from aletheia.config import DB_FILE_NAME
from aletheia.storage.sqlite import SqliteStore
from aletheia.tools.app import AppContext
from aletheia.tools.registry import TOOLS_BY_NAME, call_tool
from corpus import queries
from store_builder import build_store

TARGET_CALLS_PER_S = 1000.0
TARGET_P50_MS = 5.0
WARMUP_S = 1.0
START_TIMEOUT_S = 30.0
LISTENING = re.compile(r"Aletheia listening on http://([^:\s]+):(\d+)")
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def start_server(data_dir: Path, cwd: Path) -> tuple[subprocess.Popen[bytes], int]:
    """The real server on a free port; returns the process and the port it printed."""
    script = Path(sys.executable).parent / "aletheia-server"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(data_dir), ALETHEIA_CWD=str(cwd), ALETHEIA_TOOL="bench")
    process = subprocess.Popen(
        [str(script), "--port", "0"], env=env, cwd=cwd, stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    deadline = time.monotonic() + START_TIMEOUT_S
    seen = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stderr], [], [], 0.2)
        if ready:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            match = LISTENING.search(seen.decode(errors="replace"))
            if match:
                return process, int(match.group(2))
    process.kill()
    raise SystemExit(f"aletheia-server did not start: {seen.decode(errors='replace')}")


def post(
    conn: http.client.HTTPConnection, body: dict[str, Any], session: str | None
) -> tuple[int, str | None, bytes]:
    headers = dict(HEADERS)
    if session is not None:
        headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", json.dumps(body), headers)
    response = conn.getresponse()
    return response.status, response.getheader("Mcp-Session-Id"), response.read()


@dataclass
class Client:
    """One MCP client: a keep-alive connection, a session, and the latencies it measured."""

    port: int
    words: list[str]
    method: str = "tools/call"
    latencies: list[float] = field(default_factory=list)
    errors: int = 0

    def message(self, index: int) -> dict[str, Any]:
        if self.method == "ping":
            return {"jsonrpc": "2.0", "id": index, "method": "ping"}
        query = self.words[index % len(self.words)]
        return {
            "jsonrpc": "2.0",
            "id": index,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": query}},
        }

    def ok(self, status: int, body: bytes) -> bool:
        expected = b'"result":{}' if self.method == "ping" else b'"isError":false'
        return status == 200 and expected in body

    def run(self, start: float, stop: float) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "bench"}},
        }
        _, session, _ = post(conn, init, None)
        post(conn, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        index = 0
        while (now := time.perf_counter()) < stop:
            index += 1
            status, _, body = post(conn, self.message(index), session)
            took = time.perf_counter() - now
            if not self.ok(status, body):
                self.errors += 1
            elif now >= start:
                self.latencies.append(took)
        conn.close()


@dataclass(frozen=True)
class Run:
    calls: int
    seconds: float
    latencies: list[float]
    errors: int


def measure(port: int, clients: int, seconds: float, method: str) -> Run:
    words = queries(200)
    workers = [Client(port, words[i::clients] or words, method) for i in range(clients)]
    begin = time.perf_counter()
    start, stop = begin + WARMUP_S, begin + WARMUP_S + seconds
    threads = [threading.Thread(target=w.run, args=(start, stop)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)
    latencies = sorted(t for w in workers for t in w.latencies)
    return Run(len(latencies), seconds, latencies, sum(w.errors for w in workers))


def in_process(data: Path, count: int = 200) -> Run:
    """The same search tool called directly, one thread, no transport: the tool's own cost."""
    store = SqliteStore(data / DB_FILE_NAME)
    app = AppContext(store=store, clock=system_clock, default_project="shop", caller="bench")
    latencies: list[float] = []
    try:
        for query in queries(count):
            started = time.perf_counter()
            call_tool(app, TOOLS_BY_NAME["search"], {"query": query})
            latencies.append(time.perf_counter() - started)
    finally:
        store.close()
    return Run(count, sum(latencies), sorted(latencies), 0)


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))] if values else float("nan")


def rows(bench: str, run: Run, targets: bool) -> list[tuple[str, str, str, str, str]]:
    """(bench, metric, value, target, result) rows of one run."""
    rate = run.calls / run.seconds
    p50, p95 = percentile(run.latencies, 0.50) * 1000, percentile(run.latencies, 0.95) * 1000
    mean = statistics.fmean(run.latencies) * 1000 if run.latencies else float("nan")

    def judged(passed: bool) -> str:
        return ("pass" if passed else "FAIL") if targets else "-"

    rate_target = f">= {TARGET_CALLS_PER_S:,.0f}" if targets else "-"
    p50_target = f"<= {TARGET_P50_MS:.0f} ms" if targets else "-"
    return [
        (bench, "calls/s", f"{rate:,.0f}", rate_target, judged(rate >= TARGET_CALLS_PER_S)),
        (bench, "p50 latency", f"{p50:.2f} ms", p50_target, judged(p50 <= TARGET_P50_MS)),
        (bench, "p95 latency", f"{p95:.2f} ms", "-", "-"),
        (bench, "mean latency", f"{mean:.2f} ms", "-", "-"),
    ]


def table(scale: str, found: list[tuple[str, str, str, str, str]]) -> str:
    lines = ["| bench | scale | metric | value | target | result |", "|---|---|---|---|---|---|"]
    lines += [f"| {b} | {scale} | {m} | {v} | {t} | {r} |" for b, m, v, t, r in found]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aletheia-http-bench-") as folder:
        data, cwd = Path(folder) / "data", Path(folder) / "shop"
        cwd.mkdir()
        built = time.perf_counter()
        build_store(data / DB_FILE_NAME, "shop", args.memories)
        print(f"built {args.memories:,} memories in {time.perf_counter() - built:.1f} s")
        direct = in_process(data)
        process, port = start_server(data, cwd)
        try:
            search = measure(port, args.clients, args.seconds, "tools/call")
            ping = measure(port, args.clients, args.seconds, "ping")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=15)
    scale = f"{args.memories:,} memories, {args.clients} clients, {args.seconds:.0f} s"
    found = rows("http tools/call search", search, True)
    found += rows("http ping (transport only)", ping, False)
    found += rows("search in process, 1 thread (no transport)", direct, False)
    print(table(scale, found))
    errors = search.errors + ping.errors
    if errors:
        print(f"{errors} calls failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
