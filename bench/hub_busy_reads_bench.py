"""Reads on a busy SQLite hub: searches and pulls while several clients push and save at once.

Run: ``PYTHONPATH=src .venv/bin/python bench/hub_busy_reads_bench.py [--seconds 20]``. Everything
is real: one ``aletheia-sync`` process on a SQLite file on 127.0.0.1, with its rate limit on (set
high enough that no request is refused, so every request still counts in the store's windows),
``--writers`` clients pushing pages of new memories and saving over MCP without pause, and
``--readers`` clients searching over MCP and pulling from ``/sync/pull``. Prints one table:
requests, 503 answers, and p50/p99/max latency of the reads and of the writes.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import random
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from aletheia_mem.clock import system_clock
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.storage.sqlite import SqliteStore
from hub_bench import hub_process  # bench/ is on the path of a script run from it

WORDS = ["cache", "deploy", "staging", "vpn", "webhook", "retry", "timeout", "schema", "index"]
# High enough that the burst is never refused; the limiter still counts every request.
RATE_LIMIT = 1_000_000
PAGE_RECORDS = 200
INIT = {
    "protocolVersion": "2025-06-18",
    "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"},
}


@dataclass
class Tally:
    """Latencies (seconds) of answered requests and the count of each refused status."""

    latencies: list[float] = field(default_factory=list)
    statuses: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, status: int, seconds: float) -> None:
        with self.lock:
            self.statuses[status] = self.statuses.get(status, 0) + 1
            if status == 200:
                self.latencies.append(seconds)


class Client:
    """One keep-alive connection with one token."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self.conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=60)
        self.token = token
        self.session: str | None = None
        self.store_id = hashlib.sha256(token.encode()).hexdigest()[:32]

    def post(self, path: str, body: object) -> tuple[int, float, bytes]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "Authorization": f"Bearer {self.token}",
        }
        if self.session:
            headers["Mcp-Session-Id"] = self.session
        started = time.perf_counter()
        self.conn.request("POST", path, json.dumps(body), headers)
        response = self.conn.getresponse()
        payload = response.read()
        if response.getheader("mcp-session-id"):
            self.session = response.getheader("mcp-session-id")
        return response.status, time.perf_counter() - started, payload

    def tool(self, name: str, arguments: dict[str, object]) -> tuple[int, float, bytes]:
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        return self.post("/mcp", body)


def _record(rng: random.Random, store_id: str, index: int) -> dict[str, object]:
    now = system_clock()
    text = " ".join(rng.choice(WORDS) for _ in range(60)) + f" ({store_id[:6]} {index})"
    key = hashlib.sha256(f"{store_id}-{index}".encode()).hexdigest()[:32]
    data = {
        "project": "shop", "type": "note", "kind": "note", "title": text[:60], "text": text,
        "narrative": None, "facts": [], "files": [], "tool": "bench", "pinned": False,
        "created_at": now, "updated_at": now, "dismissed_at": None, "dismiss_reason": None,
        "dedupe_key": None,
    }  # fmt: skip
    return {"kind": "memory", "key": key, "v": [now, store_id], "data": data}


def writer(url: str, token: str, seed: int, until: float, tally: Tally) -> None:
    """Push a page, save a memory over MCP, again, until ``until``."""
    client, rng, index = Client(url, token), random.Random(seed), 0
    client.post("/mcp", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    while time.monotonic() < until:
        records = [_record(rng, client.store_id, index + n) for n in range(PAGE_RECORDS)]
        index += PAGE_RECORDS
        status, seconds, _ = client.post(
            "/sync/push", {"store_id": client.store_id, "records": records}
        )
        tally.add(status, seconds)
        text = " ".join(rng.choice(WORDS) for _ in range(20)) + f" save {seed}-{index}"
        status, seconds, _ = client.tool("save_memory", {"text": text, "project": "shop"})
        tally.add(status, seconds)


def reader(url: str, token: str, seed: int, until: float, searches: Tally, pulls: Tally) -> None:
    """Search over MCP and pull a page from the start, in turn, until ``until``."""
    client, rng = Client(url, token), random.Random(seed)
    client.post("/mcp", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT})
    while time.monotonic() < until:
        status, seconds, _ = client.tool("search", {"query": rng.choice(WORDS), "project": "shop"})
        searches.add(status, seconds)
        body = {"store_id": client.store_id, "cursor": 0, "limit": 50}
        status, seconds, _ = client.post("/sync/pull", body)
        pulls.add(status, seconds)


def _row(name: str, tally: Tally) -> str:
    values = sorted(tally.latencies)
    total = sum(tally.statuses.values())
    busy = tally.statuses.get(503, 0)
    other = total - busy - len(values)
    if len(values) >= 2:
        cuts = statistics.quantiles(values, n=100)
        p50, p99 = cuts[49] * 1000, cuts[98] * 1000
    else:
        p50 = p99 = float("nan")
    worst = max(values, default=float("nan")) * 1000
    return f"{name:<14}{total:>9}{busy:>7}{other:>7}{p50:>10.1f}{p99:>10.1f}{worst:>10.1f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the burst")
    parser.add_argument("--writers", type=int, default=4, help="clients pushing and saving")
    parser.add_argument("--readers", type=int, default=4, help="clients searching and pulling")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        db = Path(temp) / "hub.db"
        store = SqliteStore(db)
        try:
            tokens = [
                create_token(store, system_clock, scope="sync", projects=("shop",), name=f"c{i}")[0]
                for i in range(args.writers + args.readers)
            ]
        finally:
            store.close()
        writes, searches, pulls = Tally(), Tally(), Tally()
        with hub_process(db, RATE_LIMIT) as url:
            until = time.monotonic() + args.seconds
            threads = [
                threading.Thread(target=writer, args=(url, tokens[i], i, until, writes))
                for i in range(args.writers)
            ] + [
                threading.Thread(
                    target=reader, args=(url, tokens[args.writers + i], i, until, searches, pulls)
                )
                for i in range(args.readers)
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    print(
        f"{args.writers} writers (pages of {PAGE_RECORDS} + a save), {args.readers} readers"
        f" (search + pull), {args.seconds:g} s, SQLite hub"
    )
    columns = ("total", "503", "other", "p50 ms", "p99 ms", "max ms")
    widths = (9, 7, 7, 10, 10, 10)
    print(f"{'requests':<14}" + "".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)))
    print(_row("reads: search", searches))
    print(_row("reads: pull", pulls))
    print(_row("writes", writes))


if __name__ == "__main__":
    main()
