"""The Facts page of a long history: ``python bench/facts_page_bench.py [--facts 20000]
[--rounds 20] [--baseline-src DIR]``.

Builds a store whose one subject has ``--facts`` facts (five predicates, one value an hour, in
memories of 100 facts, through the store's own write path), starts the real ``aletheia-server``
on it and times a keep-alive GET of the subject's first page, of it with ``as_of`` and of an
older page (p50 of ``--rounds``, after a few warm-up requests). With ``--baseline-src`` (another
checkout's ``src`` folder) the same store is served by that code too, the variants taking
turns, so that one run compares them on the same machine at the same time.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import tempfile
import time
from pathlib import Path

from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.facts import put_fact
from aletheia_mem.storage.sqlite.memories import insert_memory
from http_bench import start_server
from web_bench import timed_gets

HOUR_MS = 3_600_000
PER_MEMORY = 100
SUBJECT = "payments"


def build(path: Path, count: int) -> None:
    """``count`` facts about ``SUBJECT``, the newest an hour ago."""
    now = int(time.time() * 1000)
    store = SqliteStore(path)
    try:
        with store._write() as conn:
            for first in range(0, count, PER_MEMORY):
                at = now - (count - first) * HOUR_MS
                memory = NewMemory(
                    project="shop",
                    type="note",
                    kind="note",
                    title=f"flood {first}",
                    text=f"facts from {first}",
                    tool="cli",
                    created_at=at,
                    dedupe_key=f"flood:{first}",
                )
                memory_id = insert_memory(conn, memory)
                for n in range(first, min(first + PER_MEMORY, count)):
                    at = now - (count - n) * HOUR_MS
                    fact = NewFact("shop", SUBJECT, f"p{n % 5}", f"value {n}", at, at, source="cli")
                    put_fact(conn, fact, memory_id)
    finally:
        store.close()


def serve_and_time(
    data: Path, cwd: Path, src: Path, paths: list[str], rounds: int
) -> dict[str, float]:
    """p50 ms of each path, served by the code in ``src``."""
    os.environ["PYTHONPATH"] = str(src)
    process, port = start_server(data, cwd, 1)
    try:
        return {path: statistics.median(timed_gets(port, path, rounds)[0]) for path in paths}
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args()
    variants = {"this checkout": Path(__file__).resolve().parent.parent / "src"}
    if args.baseline_src is not None:
        variants["baseline"] = args.baseline_src.resolve()
    paths = [
        f"/facts?subject={SUBJECT}",
        f"/facts?subject={SUBJECT}&as_of=2025-01-01",
        f"/facts?subject={SUBJECT}&older={args.facts // 2}",
    ]
    times: dict[str, dict[str, list[float]]] = {n: {p: [] for p in paths} for n in variants}
    with tempfile.TemporaryDirectory(prefix="aletheia-facts-bench-") as folder:
        data, cwd = Path(folder) / "data", Path(folder) / "shop"
        data.mkdir()
        cwd.mkdir()
        build(data / DB_FILE_NAME, args.facts)
        for _ in range(3):  # the variants take turns: the machine's noise hits both
            for name, src in variants.items():
                for path, ms in serve_and_time(data, cwd, src, paths, args.rounds).items():
                    times[name][path].append(ms)
    print(f"Facts page, one subject with {args.facts:,} facts: server p50 ms")
    print()
    print("| page | " + " | ".join(variants) + " |")
    print("| --- |" + " ---: |" * len(variants))
    for path in paths:
        row = [f"{statistics.median(times[name][path]):.1f}" for name in variants]
        print(f"| `{path}` | " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
