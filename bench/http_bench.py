"""tools/call search over Streamable HTTP on loopback: 8 concurrent clients, 10,000 memories.

Builds a 10,000-memory store, starts the real ``aletheia-server`` on a free 127.0.0.1 port, and
has 8 clients (one keep-alive connection and one MCP session each, on one asyncio loop) call
``search`` with varied queries for a fixed time. Prints calls/s and p50/p95 latency against the
targets; then the same clients calling ``search`` statelessly (2026-07-28: no session, the
version and client in ``_meta`` and the routing headers), side by side with sessions; and
for information the same clients doing ``ping`` (the transport alone) and the search tool
called in process on one thread (the tool alone).

    .venv/bin/python bench/http_bench.py [--memories N] [--clients N] [--seconds S] [--workers N]
"""

from __future__ import annotations

import argparse
import asyncio
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
from collections.abc import Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia_mem.clock import system_clock
from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from corpus import queries
from store_builder import build_store

TARGET_CALLS_PER_S = 1000.0
TARGET_P50_MS = 5.0
WARMUP_S = 1.0
START_TIMEOUT_S = 30.0
LISTENING = re.compile(r"Aletheia listening on http://([^:\s]+):(\d+)")
HEADERS = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
MODERN_HEADERS = (
    "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: search\r\n"
)


def start_server(
    data_dir: Path, cwd: Path, workers: int | None
) -> tuple[subprocess.Popen[bytes], int]:
    """The real server on a free port; returns the process and the port it printed."""
    script = Path(sys.executable).parent / "aletheia-server"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(data_dir), ALETHEIA_CWD=str(cwd), ALETHEIA_TOOL="bench")
    argv = [str(script), "--port", "0"]
    if workers is not None:
        argv += ["--workers", str(workers)]
    process = subprocess.Popen(argv, env=env, cwd=cwd, stderr=subprocess.PIPE)
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


class Connection:
    """One keep-alive HTTP/1.1 connection, spoken directly on an asyncio stream.

    A load generator on the same two cores as the server takes CPU from it; this one spends a
    fraction of ``http.client``'s per call (its share is printed as "client CPU per call").
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, port: int):
        self.reader, self.writer = reader, writer
        self.head = f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{HEADERS}"

    @classmethod
    async def open(cls, port: int) -> Connection:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        return cls(reader, writer, port)

    async def post(
        self, body: dict[str, Any], session: str | None, extra: str = ""
    ) -> tuple[int, str | None, bytes]:
        """(status, Mcp-Session-Id, body) of one POST to /mcp; ``extra`` are header lines."""
        data = json.dumps(body).encode()
        if session is not None:
            extra += f"Mcp-Session-Id: {session}\r\n"
        head = f"{self.head}{extra}Content-Length: {len(data)}\r\n\r\n"
        self.writer.write(head.encode() + data)
        status_line, *lines = (await self.reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines if line)
        length = int(headers["content-length"])  # the server sends every body with a length
        return (
            int(status_line.split()[1]),
            headers.get("mcp-session-id"),
            (await self.reader.readexactly(length)),
        )

    def close(self) -> None:
        self.writer.close()


@dataclass
class Client:
    """One MCP client: a keep-alive connection, a session, and the latencies it measured."""

    port: int
    words: list[str]
    method: str = "tools/call"
    stateless: bool = False  # 2026-07-28: no initialize, no session
    latencies: list[float] = field(default_factory=list)
    errors: int = 0

    def message(self, index: int) -> dict[str, Any]:
        if self.method == "ping":
            return {"jsonrpc": "2.0", "id": index, "method": "ping"}
        query = self.words[index % len(self.words)]
        params: dict[str, Any] = {"name": "search", "arguments": {"query": query}}
        if self.stateless:
            params["_meta"] = MODERN_META
        return {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}

    def ok(self, status: int, body: bytes) -> bool:
        expected = b'"result":{}' if self.method == "ping" else b'"isError":false'
        return status == 200 and expected in body

    async def run(self, start: float, stop: float) -> None:
        conn = await Connection.open(self.port)
        session, extra = None, MODERN_HEADERS if self.stateless else ""
        if not self.stateless:
            init = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "bench"}},
            }
            _, session, _ = await conn.post(init, None)
            await conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        index = 0
        while (now := time.perf_counter()) < stop:
            index += 1
            status, _, body = await conn.post(self.message(index), session, extra)
            took = time.perf_counter() - now
            if not self.ok(status, body):
                self.errors += 1
            elif now >= start:
                self.latencies.append(took)
        conn.close()


def run_loop(main: Coroutine[Any, Any, None]) -> None:
    """Run the clients on uvloop where it is installed (as the server is): less client CPU."""
    try:
        import uvloop
    except ImportError:
        asyncio.run(main)
    else:
        uvloop.run(main)


async def run_clients(clients: list[Client], start: float, stop: float) -> None:
    await asyncio.gather(*(client.run(start, stop) for client in clients))


@dataclass(frozen=True)
class Run:
    calls: int
    seconds: float
    latencies: list[float]
    errors: int
    server_cpu_s: float | None = None  # CPU the server's processes used while measured
    client_cpu_s: float | None = None  # CPU this process (the 8 clients) used while measured


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU of a process and its children so far, from /proc (None elsewhere)."""
    pids = [pid, *children_of(pid)]
    total = 0.0
    try:
        for each in pids:
            fields = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None
    return total


def children_of(pid: int) -> list[int]:
    try:
        found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    return [int(child) for child in found]


def measure(
    server: int, port: int, clients: int, seconds: float, method: str, stateless: bool = False
) -> Run:
    words = queries(200)
    workers = [Client(port, words[i::clients] or words, method, stateless) for i in range(clients)]
    begin = time.perf_counter()
    start, stop = begin + WARMUP_S, begin + WARMUP_S + seconds
    thread = threading.Thread(target=run_loop, args=(run_clients(workers, start, stop),))
    thread.start()
    time.sleep(max(0.0, start - time.perf_counter()))
    cpu_before, client_before = cpu_seconds(server), process_cpu_seconds()
    time.sleep(max(0.0, stop - time.perf_counter()))
    cpu_after, client_after = cpu_seconds(server), process_cpu_seconds()
    thread.join(timeout=seconds + 60)
    latencies = sorted(t for w in workers for t in w.latencies)
    used = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
    errors = sum(w.errors for w in workers)
    return Run(len(latencies), seconds, latencies, errors, used, client_after - client_before)


def process_cpu_seconds() -> float:
    times = os.times()
    return times.user + times.system


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
    found = [
        (bench, "calls/s", f"{rate:,.0f}", rate_target, judged(rate >= TARGET_CALLS_PER_S)),
        (bench, "p50 latency", f"{p50:.2f} ms", p50_target, judged(p50 <= TARGET_P50_MS)),
        (bench, "p95 latency", f"{p95:.2f} ms", "-", "-"),
        (bench, "mean latency", f"{mean:.2f} ms", "-", "-"),
    ]
    if run.server_cpu_s is not None and run.calls:
        per_call = run.server_cpu_s / run.calls * 1000
        found.append((bench, "server CPU per call", f"{per_call:.2f} ms", "-", "-"))
    if run.client_cpu_s is not None and run.calls:
        per_call = run.client_cpu_s / run.calls * 1000
        found.append((bench, "client CPU per call", f"{per_call:.2f} ms", "-", "-"))
    return found


def side_by_side(session: Run, stateless: Run) -> tuple[str, str, str, str, str]:
    """Stateless calls/s over session calls/s, measured one after the other in this run."""
    ratio = (stateless.calls / stateless.seconds) / (session.calls / session.seconds)
    verdict = "pass" if ratio >= 1.0 else "FAIL"
    return ("stateless vs session", "calls/s ratio", f"{ratio:.2f}", ">= 1.00", verdict)


def table(scale: str, found: list[tuple[str, str, str, str, str]]) -> str:
    lines = ["| bench | scale | metric | value | target | result |", "|---|---|---|---|---|---|"]
    lines += [f"| {b} | {scale} | {m} | {v} | {t} | {r} |" for b, m, v, t, r in found]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument(
        "--workers", type=int, help="server worker processes (default: the server's own)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aletheia-http-bench-") as folder:
        data, cwd = Path(folder) / "data", Path(folder) / "shop"
        cwd.mkdir()
        built = time.perf_counter()
        build_store(data / DB_FILE_NAME, "shop", args.memories)
        print(f"built {args.memories:,} memories in {time.perf_counter() - built:.1f} s")
        direct = in_process(data)
        process, port = start_server(data, cwd, args.workers)
        workers = len(children_of(process.pid)) or 1
        try:
            search = measure(process.pid, port, args.clients, args.seconds, "tools/call")
            stateless = measure(
                process.pid, port, args.clients, args.seconds, "tools/call", stateless=True
            )
            ping = measure(process.pid, port, args.clients, args.seconds, "ping")
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=15)
    scale = (
        f"{args.memories:,} memories, {args.clients} clients, {workers} server workers,"
        f" {args.seconds:.0f} s"
    )
    found = rows("http tools/call search", search, True)
    found += rows("http tools/call search, stateless 2026-07-28", stateless, True)
    found.append(side_by_side(search, stateless))
    found += rows("http ping (transport only)", ping, False)
    found += rows("search in process, 1 thread (no transport)", direct, False)
    print(table(scale, found))
    errors = search.errors + stateless.errors + ping.errors
    if errors:
        print(f"{errors} calls failed")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
