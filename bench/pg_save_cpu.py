"""Backend CPU per hub save on PostgreSQL: ``python bench/pg_save_cpu.py [--baseline-src DIR]``.

What a hub's ``save_memory`` call asks of the store, in process: the session read, then the save
with the call's audit row riding it (``audit_with_next_write``), a short note in project scratch
as ``hub_scale_bench.py`` saves it. The store holds ``--memories`` notes first (a template
database, filled once and copied for each variant). Each round runs every variant in a process
of its own (``PYTHONPATH`` its ``src``), alternating the order, with ``--threads`` writers on a
pool of as many connections; a variant's figure is the CPU its backends used
(``/proc/<pid>/schedstat``) per save, the median over ``--rounds``, beside the round trips per
save (each wait of psycopg on the network).

``--baseline-src`` names another checkout's ``src`` folder, as in ``stdio_bench.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import psycopg

from corpus import NoteWriter
from pg_store_bench import count_waits, round_trips

BENCH = Path(__file__).parent
ADMIN_URL = os.environ.get("ALETHEIA_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
TEMPLATE = "aletheia_save_cpu_template"
WARMUP = 100


def database_url(name: str) -> str:
    return f"{ADMIN_URL.rsplit('/', 1)[0]}/{name}"


def backend_cpu_ns(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/schedstat", encoding="utf-8") as stat:
            total += int(stat.read().split()[0])
    return total


def fill_template(memories_count: int) -> None:
    """The template database with ``memories_count`` notes in project shop, made once."""
    from aletheia_mem.clock import system_clock
    from aletheia_mem.domain import memories
    from aletheia_mem.storage.postgres.store import open_postgres_store

    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (TEMPLATE,))
        if found.fetchone() is not None:
            return
        admin.execute(f'CREATE DATABASE "{TEMPLATE}"')
    store = open_postgres_store(database_url(TEMPLATE))
    try:
        for i, note in enumerate(NoteWriter().notes(memories_count)):
            facts = [
                memories.FactInput(f["subject"], f["predicate"], f["object"]) for f in note.facts
            ]
            item = memories.MemoryInput(
                text=f"{note.text} ({i})", project="shop", tool="bench", title=note.title,
                type=note.type, facts=facts, files=note.files,
            )  # fmt: skip
            memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    with psycopg.connect(database_url(TEMPLATE), autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")


def worker(database: str, saves: int, threads: int) -> dict[str, float]:
    """The hub's store work for ``saves`` saves on ``threads`` threads: CPU and round trips."""
    from aletheia_mem.clock import system_clock
    from aletheia_mem.domain import memories
    from aletheia_mem.storage.contracts import SessionRow
    from aletheia_mem.storage.entries import AuditEntry
    from aletheia_mem.storage.postgres.store import open_postgres_store

    count_waits()
    store = open_postgres_store(database_url(database), pool_size=threads)
    sessions, session, tag = store.sessions(), secrets.token_hex(32), secrets.token_hex(4)
    row = SessionRow("bench", "2025-11-25", "bench", system_clock())
    sessions.insert(session, row, expired_before=0, keep_at_most=100)
    words = ("payments", "webhook", "retry", "session", "cart", "ledger", "token", "schema")

    def save(i: int) -> None:
        sessions.find(session)
        text = f"Bench note {i % 8}-{i}-{tag}: {words[i % 8]} needs care."
        entry = AuditEntry(system_clock(), "bench", "save_memory", "scratch", "ok")
        with store.audit_with_next_write(entry):
            item = memories.MemoryInput(text=text, project="scratch", tool="bench")
            memories.save_memory(store, system_clock, item)

    def run_all(first: int, each: int) -> None:
        runners = [
            threading.Thread(target=lambda t=t: [save(first + t * each + i) for i in range(each)])
            for t in range(threads)
        ]
        for runner in runners:
            runner.start()
        for runner in runners:
            runner.join()

    try:
        run_all(-(10**6), max(1, WARMUP // threads))  # every connection opened and warmed up
        with psycopg.connect(database_url(database), autocommit=True) as admin:
            pids = [
                int(found[0])
                for found in admin.execute(
                    "SELECT pid FROM pg_stat_activity"
                    " WHERE datname = %s AND pid <> pg_backend_pid()",
                    (database,),
                )
            ]
        each = saves // threads
        trips_before, cpu_before = round_trips(), backend_cpu_ns(pids)
        own_before = time.process_time()
        run_all(0, each)
        cpu = backend_cpu_ns(pids) - cpu_before
        own = time.process_time() - own_before
    finally:
        store.close()
    done = each * threads
    return {
        "cpu_ms": cpu / done / 1e6,
        "client_ms": own / done * 1e3,
        "round_trips": (round_trips() - trips_before) / done,
    }


def run_variant(src: Path, database: str, saves: int, threads: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{BENCH}"}
    argv = [sys.executable, __file__, "--worker", database, "--saves", str(saves)]
    done = subprocess.run(
        [*argv, "--threads", str(threads)], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--saves", type=int, default=400, help="per variant and round")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.saves, args.threads)))
        return
    fill_template(args.memories)
    variants = {"this": BENCH.parent / "src"}
    if args.baseline_src:
        variants["baseline"] = args.baseline_src.resolve()
    names = {label: f"aletheia_save_cpu_{label}_{os.getpid()}" for label in variants}
    results: dict[str, list[dict[str, float]]] = {label: [] for label in variants}
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        for name in names.values():
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{TEMPLATE}"')
        try:
            for round_number in range(args.rounds):
                order = list(variants) if round_number % 2 == 0 else list(variants)[::-1]
                for label in order:
                    found = run_variant(variants[label], names[label], args.saves, args.threads)
                    results[label].append(found)
                line = "  ".join(f"{label} {results[label][-1]['cpu_ms']:.3f}" for label in results)
                print(f"round {round_number}: {line} ms/save", flush=True)
        finally:
            for name in names.values():
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    print(
        f"\n{args.memories:,} memories, {args.threads} writer(s),"
        f" {args.saves} saves x {args.rounds} rounds"
    )
    print(
        "| variant | backend CPU ms/save (median) | min | client CPU ms/save | round trips/save |"
        "\n|---|---:|---:|---:|---:|"
    )
    for label, runs in results.items():
        cpu = [run["cpu_ms"] for run in runs]
        trips = statistics.median(run["round_trips"] for run in runs)
        client = statistics.median(run["client_ms"] for run in runs)
        line = f"{statistics.median(cpu):.3f} | {min(cpu):.3f} | {client:.3f} | {trips:.1f}"
        print(f"| {label} | {line} |")


if __name__ == "__main__":
    main()
