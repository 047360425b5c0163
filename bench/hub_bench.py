"""Benchmarks of the team hub: tools/call with 8 clients on 8 tokens, and a 10,000-memory sync.

Run: ``.venv/bin/python bench/hub_bench.py [--calls 200] [--memories 10000]``. Everything is real:
an ``aletheia-sync`` process on 127.0.0.1, HTTP keep-alive clients in threads, ``aletheia sync``
processes on two SQLite stores. The hub runs with ``--rate-limit 0``: at the default 60 requests
per minute per token the first part would measure the limiter, not the hub.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import random
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.storage.sqlite import SqliteStore

CLIENTS = 8
WORDS = [
    "cache",
    "deploy",
    "staging",
    "vpn",
    "pnpm",
    "webhook",
    "retry",
    "timeout",
    "schema",
    "migration",
    "index",
    "token",
    "queue",
    "worker",
    "redis",
    "postgres",
    "sqlite",
    "docker",
    "build",
    "lint",
    "test",
    "release",
    "branch",
    "rollback",
    "flag",
]


@contextmanager
def hub_process(db: Path, rate_limit: int = 0) -> Iterator[str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", str(db), "--port", "0",
         "--rate-limit", str(rate_limit)],
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(line) for line in iter(process.stderr.readline, "")],  # type: ignore[union-attr]
        daemon=True,
    ).start()
    try:
        while True:
            found = re.search(r"listening on (\S+)", lines.get(timeout=15))
            if found:
                yield found.group(1)
                return
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def _post(conn: http.client.HTTPConnection, token: str, session: str | None, body: object):
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {token}"}
    if session:
        headers["Mcp-Session-Id"] = session
    conn.request("POST", "/mcp", json.dumps(body), headers)
    response = conn.getresponse()
    payload = response.read()
    assert response.status == 200, (response.status, payload[:200])
    return response, json.loads(payload)


def client_run(url: str, token: str, calls: int, seed: int, latencies: list[float]) -> None:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=30)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    response, _ = _post(conn, token, None, init)
    session = response.getheader("mcp-session-id")
    rng = random.Random(seed)
    for index in range(calls):
        if index % 4 == 0:  # one write in four, three reads
            text = " ".join(rng.choice(WORDS) for _ in range(12)) + f" #{seed}-{index}"
            name, arguments = "save_memory", {"text": text, "project": "shop"}
        else:
            name, arguments = "search", {"query": rng.choice(WORDS), "project": "shop"}
        body = {
            "jsonrpc": "2.0",
            "id": index + 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments},
        }
        started = time.perf_counter()
        _, answer = _post(conn, token, session, body)
        latencies.append(time.perf_counter() - started)
        assert not answer["result"]["isError"], answer
    conn.close()


def bench_tools_call(folder: Path, calls: int) -> dict[str, float]:
    db = folder / "hub.db"
    store = SqliteStore(db)
    try:
        tokens = [
            create_token(store, system_clock, scope="sync", projects=("shop",), name=f"c{i}")[0]
            for i in range(CLIENTS)
        ]
        seed_store(store, 2000)
    finally:
        store.close()
    with hub_process(db) as url:
        results: list[list[float]] = [[] for _ in range(CLIENTS)]
        threads = [
            threading.Thread(target=client_run, args=(url, tokens[i], calls, i, results[i]))
            for i in range(CLIENTS)
        ]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
    latencies = sorted(value for values in results for value in values)
    assert len(latencies) == CLIENTS * calls, "a client failed"
    quantiles = statistics.quantiles(latencies, n=100)
    return {
        "calls": len(latencies),
        "seconds": round(elapsed, 2),
        "calls_per_second": round(len(latencies) / elapsed, 1),
        "p50_ms": round(quantiles[49] * 1000, 1),
        "p95_ms": round(quantiles[94] * 1000, 1),
        "p99_ms": round(quantiles[98] * 1000, 1),
    }


def seed_store(store: SqliteStore, count: int, project: str = "shop") -> None:
    rng = random.Random(count)
    for index in range(count):
        text = " ".join(rng.choice(WORDS) for _ in range(30)) + f" (note {index})"
        memories.save_memory(
            store, system_clock, memories.MemoryInput(text=text, project=project, tool="bench")
        )


def run_sync(data_dir: Path, *args: str) -> float:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    env["ALETHEIA_DATA_DIR"] = str(data_dir)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "sync", *args], env=env, check=True, timeout=600,
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return time.perf_counter() - started


def bench_sync(folder: Path, count: int) -> dict[str, float]:
    sender, receiver, db = folder / "sender", folder / "receiver", folder / "sync-hub.db"
    sender.mkdir()
    receiver.mkdir()
    store = SqliteStore(sender / "aletheia.db")
    try:
        seed_store(store, count)
    finally:
        store.close()
    hub = SqliteStore(db)
    try:
        token, _ = create_token(hub, system_clock, scope="sync", projects=None, name="bench")
    finally:
        hub.close()
    with hub_process(db) as url:
        push = run_sync(sender, "--hub", url, "--token", token)
        pull = run_sync(receiver, "--hub", url, "--token", token)
    conn = sqlite3.connect(receiver / "aletheia.db")
    try:
        received = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    finally:
        conn.close()
    assert received == count, received
    return {
        "memories": count,
        "push_seconds": round(push, 2),
        "pull_seconds": round(pull, 2),
        "total_seconds": round(push + pull, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=200, help="tools/call per client")
    parser.add_argument("--memories", type=int, default=10_000, help="memories to sync")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temp:
        folder = Path(temp)
        report = {
            "tools_call_8_clients": bench_tools_call(folder, args.calls),
            "sync_new_memories": bench_sync(folder, args.memories),
        }
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
