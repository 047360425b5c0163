"""Per-operation cost of the hub's store, PostgreSQL beside SQLite, in process.

``python bench/pg_store_bench.py [--memories 10000] [--pg URL]`` fills a SQLite store and a
PostgreSQL store (a database of its own, dropped afterwards unless ``--keep``) with the same
notes through ``domain.memories.save_memory``, then times each operation a hub request makes:
verify a token, a rate-window hit, a session find and touch, an audit row, a save and a search
(``domain.recall.search``). Round trips are the waits psycopg makes on the server (each
statement, each BEGIN/COMMIT, each pool check), counted per operation.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories, recall
from aletheia_mem.hub.tokens import create_token, verify_token
from aletheia_mem.storage.contracts import SessionRow
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.postgres.store import open_postgres_store
from aletheia_mem.storage.sqlite import SqliteStore
from corpus import NoteWriter, queries

PROJECT = "shop"
THREADS = 8
ADMIN_URL = "postgresql://postgres@127.0.0.1:5432/postgres"
_round_trips = 0


def count_waits() -> None:
    """Count every wait of a psycopg connection on the server that goes to the network (a
    COMMIT on an idle connection does not): one per round trip."""
    original = psycopg.Connection.wait

    def counted(gen: Any) -> Any:
        global _round_trips
        try:
            item = next(gen)
        except StopIteration as stop:
            return stop.value
        _round_trips += 1
        while True:
            sent = yield item
            try:
                item = gen.send(sent)
            except StopIteration as stop:
                return stop.value

    def wait(self: Any, gen: Any, *args: Any, **kwargs: Any) -> Any:
        return original(self, counted(gen), *args, **kwargs)

    psycopg.Connection.wait = wait  # type: ignore[method-assign]


def _input(note: Any, index: int, nonce: str = "") -> memories.MemoryInput:
    facts = [memories.FactInput(f["subject"], f["predicate"], f["object"]) for f in note.facts]
    return memories.MemoryInput(
        text=f"{note.text} ({index}{nonce})",
        project=PROJECT,
        tool="bench",
        title=note.title,
        type=note.type,
        facts=facts,
        files=note.files,
    )


def fill(store: Any, count: int) -> float:
    writer = NoteWriter()
    started = time.perf_counter()
    for index, note in enumerate(writer.notes(count)):
        memories.save_memory(store, system_clock, _input(note, index))
    return time.perf_counter() - started


def round_trips() -> int:
    """The waits counted since ``count_waits``: round trips, of every connection."""
    return _round_trips


def measure(operation: Callable[[int], object], runs: int) -> tuple[float, float, float]:
    """p50 and p95 in ms, and round trips per run."""
    for i in range(min(20, runs)):  # warm-up: caches and prepared statements
        operation(-1 - i)
    samples = []
    before = _round_trips
    for i in range(runs):
        started = time.perf_counter()
        operation(i)
        samples.append(time.perf_counter() - started)
    trips = (_round_trips - before) / runs
    cuts = statistics.quantiles(samples, n=100)
    return cuts[49] * 1000, cuts[94] * 1000, trips


def operations(store: Any, runs: int) -> dict[str, Callable[[int], object]]:
    secret, token = create_token(
        store, system_clock, scope="sync", projects=None, name="bench-" + secrets.token_hex(4)
    )
    windows, sessions = store.rate_windows(), store.sessions()
    now, session = system_clock(), secrets.token_hex(32)
    sessions.insert(session, SessionRow("1", "2025-06-18", "bench", now), expired_before=0,
                    keep_at_most=100)  # fmt: skip
    texts = queries(200)
    writer = NoteWriter(seed=99)
    extra = [
        _input(note, 10**6 + i, secrets.token_hex(3))
        for i, note in enumerate(writer.notes(runs + 20))
    ]
    return {
        "verify token": lambda i: verify_token(store, secret),
        "rate hit": lambda i: windows.hit(
            f"token:{token.id}:{i % 8}", 1, 10**9, 60_000, system_clock()
        ),
        "session find": lambda i: sessions.find(session),
        "session touch": lambda i: sessions.touch(session, system_clock()),
        "audit insert": lambda i: store.add_audit(
            AuditEntry(system_clock(), token.name, "search", PROJECT, "ok")
        ),
        "save_memory": lambda i: memories.save_memory(store, system_clock, extra[i]),
        "search": lambda i: recall.search(
            store, recall.SearchRequest(texts[i % len(texts)], (PROJECT,)), system_clock()
        ),
    }


def concurrent_saves(store: Any, threads: int, each: int) -> float:
    """Saves per second with ``threads`` writers saving at once (distinct notes)."""
    notes = NoteWriter(seed=98).notes(threads * each)
    nonce = secrets.token_hex(3)
    batches = [
        [_input(note, 2 * 10**6 + t * each + i, nonce) for i, note in enumerate(notes[t::threads])]
        for t in range(threads)
    ]

    def save_all(batch: list[memories.MemoryInput]) -> None:
        for item in batch:
            memories.save_memory(store, system_clock, item)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=threads) as pool:
        list(pool.map(save_all, batches))
    return threads * each / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--pg", default=ADMIN_URL, help="an admin URL: a database is made")
    parser.add_argument("--keep", help="a database name: made and filled once, kept, reused")
    args = parser.parse_args()
    count_waits()
    name = args.keep or f"aletheia_bench_{secrets.token_hex(4)}"
    url = f"{args.pg.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(args.pg, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if exists is None:
            admin.execute(f'CREATE DATABASE "{name}"')
    reuse = exists is not None
    results: dict[str, dict[str, tuple[float, float, float]]] = {}
    rates: dict[str, float] = {}
    try:
        with tempfile.TemporaryDirectory() as folder:
            sqlite = SqliteStore(Path(folder) / "bench.db")
            pg = open_postgres_store(url)
            try:
                for label, store in (("sqlite", sqlite), ("postgres", pg)):
                    if label == "sqlite" or not reuse:
                        seconds = fill(store, args.memories)
                        rate = args.memories / seconds
                        print(f"{label}: filled {args.memories} in {seconds:.1f} s ({rate:.0f}/s)")
                    if label == "postgres":
                        with psycopg.connect(url, autocommit=True) as conn:
                            conn.execute("VACUUM (ANALYZE)")  # as after a bulk load
                    for op, run in operations(store, args.runs).items():
                        results.setdefault(op, {})[label] = measure(run, args.runs)
                    rates[label] = concurrent_saves(store, THREADS, args.runs // 4)
            finally:
                sqlite.close()
                pg.close()
    finally:
        if not args.keep:
            with psycopg.connect(args.pg, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(f"\n{args.memories:,} memories, {args.runs} runs each (ms; round trips per op, PG)")
    print("| operation | SQLite p50 | SQLite p95 | PG p50 | PG p95 | PG round trips |")
    print("|---|---:|---:|---:|---:|---:|")
    for op, by_store in results.items():
        s50, s95, _ = by_store["sqlite"]
        p50, p95, trips = by_store["postgres"]
        print(f"| {op} | {s50:.3f} | {s95:.3f} | {p50:.3f} | {p95:.3f} | {trips:.1f} |")
    print(
        f"\nsave_memory with {THREADS} threads at once: SQLite {rates['sqlite']:.0f}/s,"
        f" PostgreSQL {rates['postgres']:.0f}/s"
    )


if __name__ == "__main__":
    main()
