"""The hub past one process: 8 clients on a SQLite hub and on 1, 2 and 3 PostgreSQL hub processes.

Run: ``.venv/bin/python bench/hub_scale_bench.py [--memories 10000] [--seconds 8]``. Everything
is real and on 127.0.0.1: a local store of 10,000 memories (``store_builder``) is pushed with
``aletheia sync`` into a SQLite hub and into a PostgreSQL hub, then pulled into a fresh store
(both timed). The hubs so filled serve the throughput runs: N ``aletheia-sync`` processes on one
database (``ALETHEIA_HUB_DB``, ``--rate-limit 0``, each on its own port) and 8 asyncio clients,
one keep-alive connection, session and token each, spread round-robin over the processes (no
proxy), calling ``search`` (project shop), then ``save_memory`` (project scratch, so the
searches of later runs see the same store), then both at once (half the clients each). Server
CPU is read from /proc: the hub processes' and the PostgreSQL backends' serving the bench's
database. The bench makes its own database on ``--pg`` (trust auth) and drops it at the end; it
prints the size of the database at 10,000 memories.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import select
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from corpus import queries
from cpu_caps import CpuCap
from http_bench import Connection, percentile, process_cpu_seconds, run_clients, run_loop
from hub_bench import run_sync
from store_builder import build_store

CLIENTS = 8
WARMUP_S = 1.0
START_TIMEOUT_S = 60.0
LISTENING = re.compile(r"listening on http://[^:\s]+:(\d+)")
# Half the clients search while the others save: each search then reads back the saves made
# since the last one (postings.py), as when a team's agents work at once.
MIXED = "search + save_memory"
TOOLS = ("search", "save_memory", MIXED)
TARGET_RATIO = 1.5  # the issue: two PostgreSQL hub processes serve >= 1.5x one
ADMIN_URL = os.environ.get("ALETHEIA_BENCH_PG", "postgresql://postgres@127.0.0.1:5432/postgres")
CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def cli_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    return {**env, "ALETHEIA_DATA_DIR": str(data_dir), "HOME": str(data_dir), **extra}


def make_token(data_dir: Path, hub_db: str, projects: str, name: str) -> str:
    """A sync token made as an operator makes one: ``aletheia mcp-link create``."""
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "mcp-link", "create", "--hub-db", hub_db,
         "--projects", projects, "--scope", "sync", "--name", name, "--json"],
        env=cli_env(data_dir), capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return str(json.loads(done.stdout)["token"])


def start_hub(
    hub_db: str, data_dir: Path, cap: CpuCap | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """One ``aletheia-sync`` on a free port, the store named by ``ALETHEIA_HUB_DB``, in ``cap``'s
    cgroup when given."""
    argv = [sys.executable, "-m", "aletheia_mem.hub.main", "--port", "0", "--rate-limit", "0"]
    env = cli_env(data_dir, ALETHEIA_HUB_DB=hub_db)
    join = cap.joiner() if cap is not None else None
    process = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, preexec_fn=join)
    assert process.stderr is not None
    deadline, seen = time.monotonic() + START_TIMEOUT_S, b""
    while time.monotonic() < deadline:
        if select.select([process.stderr], [], [], 0.2)[0]:
            chunk = os.read(process.stderr.fileno(), 4096)
            if not chunk:
                break
            seen += chunk
            if match := LISTENING.search(seen.decode(errors="replace")):
                threading.Thread(target=process.stderr.read, daemon=True).start()  # drain
                return process, int(match.group(1))
    process.kill()
    raise SystemExit(f"aletheia-sync did not start: {seen.decode(errors='replace')}")


@contextmanager
def hubs(
    hub_db: str, data_dir: Path, count: int, cores: float | None = None
) -> Iterator[list[tuple[int, int]]]:
    """``count`` hub processes on one store, each held to ``cores`` cores when given: their
    (pid, port) pairs; stopped on exit."""
    with ExitStack() as stack:
        found = []
        for number in range(count):
            cap = None
            if cores is not None:
                cap = CpuCap(f"aletheia-bench-{os.getpid()}-{number}", cores)
                stack.callback(cap.remove)  # after _stop below: callbacks run last in, first out
            process, port = start_hub(hub_db, data_dir, cap)
            stack.callback(_stop, process)
            found.append((process.pid, port))
        yield found


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)


# --- CPU, from /proc -------------------------------------------------------------------------


def cpu_of(pids: list[int]) -> dict[int, float]:
    """User + system CPU seconds of each pid still running."""
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        found[pid] = (int(fields[11]) + int(fields[12])) / CLOCK_TICK
    return found


def used(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two readings; a pid born in between counts from zero."""
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


def machine_times() -> tuple[int, int]:
    """(idle, total) jiffies of all cores so far, from the first line of /proc/stat."""
    fields = [int(value) for value in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return fields[3] + fields[4], sum(fields[:8])  # idle + iowait; user..steal


def busy_share(before: tuple[int, int], after: tuple[int, int]) -> float:
    idle, total = after[0] - before[0], after[1] - before[1]
    return 1.0 - idle / total if total else float("nan")


def backend_pids(admin: psycopg.Connection[Any], database: str) -> list[int]:
    """The PostgreSQL backends connected to ``database`` (on this machine: our hubs' pools)."""
    rows = admin.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,))
    return [int(row[0]) for row in rows]


# --- clients ---------------------------------------------------------------------------------


@dataclass
class Client:
    """One MCP client with its own token, connection and session on one hub process."""

    port: int
    token: str
    tool: str
    number: int
    words: list[str]
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def arguments(self, index: int) -> dict[str, Any]:
        if self.tool == "search":
            return {"query": self.words[index % len(self.words)], "project": "shop"}
        word = self.words[index % len(self.words)]
        text = f"Bench note {self.number}-{index}-{secrets.token_hex(4)}: {word} needs care."
        return {"text": text, "project": "scratch"}

    async def run(self, start: float, stop: float) -> None:
        conn = await Connection.open(self.port)
        auth = f"Authorization: Bearer {self.token}\r\n"
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "clientInfo": {"name": "bench"}},
        }
        _, session, _ = await conn.post(init, None, auth)
        await conn.post({"jsonrpc": "2.0", "method": "notifications/initialized"}, session, auth)
        index = 0
        while (now := time.perf_counter()) < stop:
            index += 1
            params = {"name": self.tool, "arguments": self.arguments(index)}
            body = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}
            status, _, answer = await conn.post(body, session, auth)
            took = time.perf_counter() - now
            if status != 200 or b'"isError":false' not in answer:
                self.errors.append(f"{status} {answer[:200]!r}")
            elif now >= start:
                self.latencies.append(took)
        conn.close()


@dataclass(frozen=True)
class Run:
    label: str
    tool: str
    processes: int
    seconds: float
    latencies: list[float]
    hub_cpu_s: float
    db_cpu_s: float | None  # None for SQLite: the hub process does the database's work
    client_cpu_s: float  # this process: the 8 clients
    machine_busy: float  # share of all cores busy (anyone's work), from /proc/stat

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds


def client_tool(tool: str, number: int) -> str:
    """The tool client ``number`` calls: ``tool``, or for MIXED, search and save_memory in turn
    over the clients (each process serves both)."""
    if tool != MIXED:
        return tool
    return "search" if number // max(1, CLIENTS // 4) % 2 == 0 else "save_memory"


def measure(
    label: str,
    tool: str,
    procs: list[tuple[int, int]],
    tokens: list[str],
    seconds: float,
    db_pids: Any = None,
) -> Run:
    """8 clients round-robin over the processes for ``seconds`` after a warm-up."""
    words = queries(400)
    clients = [
        Client(procs[i % len(procs)][1], tokens[i], client_tool(tool, i), i, words[i::CLIENTS])
        for i in range(CLIENTS)
    ]
    begin = time.perf_counter()
    start, stop = begin + WARMUP_S, begin + WARMUP_S + seconds
    thread = threading.Thread(target=run_loop, args=(run_clients(clients, start, stop),))
    thread.start()
    time.sleep(max(0.0, start - time.perf_counter()))
    hub_pids = [pid for pid, _ in procs]
    hub_before, machine_before = cpu_of(hub_pids), machine_times()
    db_before = cpu_of(db_pids()) if db_pids else None
    client_before = process_cpu_seconds()
    time.sleep(max(0.0, stop - time.perf_counter()))
    hub_after, machine_after = cpu_of(hub_pids), machine_times()
    db_after = cpu_of(db_pids()) if db_pids else None
    client_cpu = process_cpu_seconds() - client_before
    thread.join(timeout=seconds + 60)
    errors = [error for client in clients for error in client.errors]
    if errors:
        raise SystemExit(f"{label} {tool}: {len(errors)} calls failed, e.g. {errors[0]}")
    db_cpu = used(db_before, db_after) if db_before is not None and db_after else None
    latencies = sorted(t for client in clients for t in client.latencies)
    hub_cpu = used(hub_before, hub_after)
    busy = busy_share(machine_before, machine_after)
    return Run(label, tool, len(procs), seconds, latencies, hub_cpu, db_cpu, client_cpu, busy)


# --- the database ----------------------------------------------------------------------------


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path="/" + name))


@contextmanager
def scratch_database() -> Iterator[tuple[str, str]]:
    """A new database on the bench's server, dropped at the end: (name, URL)."""
    name = f"aletheia_scale_bench_{os.getpid()}"
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield name, with_database(ADMIN_URL, name)
    finally:
        with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@dataclass(frozen=True)
class Sizes:
    database: int  # pg_database_size: everything, the catalogue included
    memories: int  # rows in memories
    tables: dict[str, int]  # each table with its indexes and TOAST, largest first


def database_size(url: str) -> Sizes:
    """The size of the hub's database after a settling VACUUM ANALYZE."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        total = conn.execute("SELECT pg_database_size(current_database())").fetchone()
        tables = conn.execute(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE c.relkind = 'r' AND n.nspname = 'public' ORDER BY 2 DESC"
        ).fetchall()
        memories = conn.execute("SELECT count(*) FROM memories").fetchone()
    assert total is not None and memories is not None
    return Sizes(int(total[0]), int(memories[0]), {str(n): int(size) for n, size in tables})


# --- the run ---------------------------------------------------------------------------------


def bench_sync(built: Path, hub_db: str, folder: Path, label: str) -> dict[str, Any]:
    """Push a copy of the built store into an empty hub, pull it into a fresh store: the times.
    (A copy: a store remembers what it pushed, and would push nothing to the second hub.)"""
    local = folder / f"{label}-sender"
    shutil.copytree(built, local)
    data = folder / f"{label}-admin"
    data.mkdir()
    token = make_token(data, hub_db, "*", "bench-sync")
    receiver = folder / f"{label}-receiver"
    receiver.mkdir()
    with hubs(hub_db, data, 1) as [(_, port)]:
        url = f"http://127.0.0.1:{port}"
        push = run_sync(local, "--hub", url, "--token", token)
        pull = run_sync(receiver, "--hub", url, "--token", token)
    with sqlite3.connect(receiver / "aletheia.db") as conn:
        received = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    return {"hub": label, "push_s": push, "pull_s": pull, "received": received}


def bench_throughput(
    label: str,
    hub_db: str,
    data: Path,
    counts: list[int],
    seconds: float,
    db_pids: Any,
    rounds: int = 1,
    cores: float | None = None,
) -> list[Run]:
    """Every tool on 1, 2 ... processes, and again for each round (1, 2, 3, 1, 2, 3 ...), so
    that a burst of other load on the machine falls on every process count alike."""
    slug = re.sub(r"\W+", "-", label)  # token names are unique on a hub
    tokens = [make_token(data, hub_db, "shop,scratch", f"{slug}-{i}") for i in range(CLIENTS)]
    found = []
    with snapshot(hub_db) as restore:
        for _ in range(rounds):
            for count in counts:
                restore()
                found += _cell(label, hub_db, data, count, tokens, seconds, db_pids, cores)
    return found


def _cell(
    label: str,
    hub_db: str,
    data: Path,
    count: int,
    tokens: list[str],
    seconds: float,
    db_pids: Any,
    cores: float | None,
) -> list[Run]:
    """Every tool, in turn, on ``count`` processes started for it."""
    found = []
    with hubs(hub_db, data, count, cores) as procs:
        for tool in TOOLS:
            found.append(measure(label, tool, procs, tokens, seconds, db_pids))
            print(f"  {label} x{count} {tool}: {found[-1].rate:,.0f} calls/s", flush=True)
    return found


@contextmanager
def snapshot(hub_db: str) -> Iterator[Callable[[], None]]:
    """A copy of the hub's store as it is, and a function putting it back (no hub running):
    every cell starts on the same store, not on one grown by the saves of the cells before
    (80,000 more memories after five rounds, sharing the searched words)."""
    if not hub_db.startswith("postgresql://"):
        kept = Path(hub_db).with_suffix(".snapshot")
        _sqlite_copy(Path(hub_db), kept)
        try:
            yield lambda: _sqlite_copy(kept, Path(hub_db))
        finally:
            kept.unlink()
        return
    name = urlsplit(hub_db).path.lstrip("/")
    with psycopg.connect(ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}_snapshot" TEMPLATE "{name}"')

        def restore() -> None:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{name}_snapshot"')

        try:
            yield restore
        finally:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}_snapshot" WITH (FORCE)')


def _sqlite_copy(source: Path, target: Path) -> None:
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def medians(runs: list[Run]) -> tuple[list[Run], dict[tuple[str, str, int], list[float]]]:
    """Per hub, tool and process count, the run of median throughput (the lower of the middle
    two for an even number), and every round's calls/s."""
    groups: dict[tuple[str, str, int], list[Run]] = {}
    for run in runs:
        groups.setdefault((run.label, run.tool, run.processes), []).append(run)
    chosen = [
        sorted(group, key=lambda r: r.rate)[(len(group) - 1) // 2] for group in groups.values()
    ]
    return chosen, {key: [run.rate for run in group] for key, group in groups.items()}


def throughput_table(runs: list[Run], rates: dict[tuple[str, str, int], list[float]]) -> str:
    lines = [
        "| hub | tool | processes | calls/s (median) | every round | p50 ms | p95 ms"
        " | hub CPU ms/call | PG CPU ms/call | client CPU ms/call"
        " | cores used (hub+PG+clients) | machine busy | vs 1 PG process |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    one = {(run.label, run.tool): run.rate for run in runs if run.processes == 1}
    for run in runs:
        calls = max(1, len(run.latencies))
        db = "-" if run.db_cpu_s is None else f"{run.db_cpu_s / calls * 1000:.2f}"
        postgres = run.label.startswith("postgresql")
        ratio = f"{run.rate / one[(run.label, run.tool)]:.2f}" if postgres else "-"
        cores = (run.hub_cpu_s + (run.db_cpu_s or 0.0) + run.client_cpu_s) / run.seconds
        spread = rates.get((run.label, run.tool, run.processes), [run.rate])
        every = ", ".join(f"{rate:,.0f}" for rate in spread)
        lines.append(
            f"| {run.label} | {run.tool} | {run.processes} | {run.rate:,.0f} | {every}"
            f" | {percentile(run.latencies, 0.5) * 1000:.1f}"
            f" | {percentile(run.latencies, 0.95) * 1000:.1f}"
            f" | {run.hub_cpu_s / calls * 1000:.2f} | {db} | {run.client_cpu_s / calls * 1000:.2f}"
            f" | {cores:.2f} | {run.machine_busy:.0%} | {ratio} |"
        )
    return "\n".join(lines)


def verdicts(runs: list[Run]) -> list[str]:
    rates = {(r.label, r.tool, r.processes): r.rate for r in runs}
    lines = []
    for label in dict.fromkeys(r.label for r in runs if r.label.startswith("postgresql")):
        for tool in TOOLS:
            for count in (2, 3):
                ratio = rates[(label, tool, count)] / rates[(label, tool, 1)]
                verdict = ("pass" if ratio >= TARGET_RATIO else "MISS") if count == 2 else "-"
                target = f" (target >= {TARGET_RATIO})" if count == 2 else ""
                lines.append(
                    f"{label}, {tool}: {count} processes / 1 = {ratio:.2f}{target} {verdict}"
                )
    return lines


def size_lines(sizes: Sizes) -> list[str]:
    tables = sum(sizes.tables.values())
    lines = [
        f"PostgreSQL hub at {sizes.memories:,} memories (after the push and VACUUM ANALYZE):"
        f" database {sizes.database / 1e6:.1f} MB; tables with their indexes"
        f" {tables / 1e6:.1f} MB, {tables / max(1, sizes.memories):,.0f} bytes per memory",
    ]
    lines += [f"  {name}: {size / 1e6:.2f} MB" for name, size in list(sizes.tables.items())[:10]]
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=8.0, help="measured time per run")
    parser.add_argument(
        "--rounds", type=int, default=1, help="throughput runs per cell; the median is shown"
    )
    parser.add_argument(
        "--hub-cores",
        type=float,
        help="also run the PostgreSQL cells with each hub process held to this many cores"
        " (a cgroup CPU quota; needs root), as if each ran on a machine of its own",
    )
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    with (
        tempfile.TemporaryDirectory(prefix="aletheia-scale-bench-") as temp,
        scratch_database() as (database, pg_url),
        psycopg.connect(ADMIN_URL, autocommit=True) as admin,
    ):
        folder = Path(temp)
        local, sqlite_hub = folder / "local", str(folder / "hub" / "hub.db")
        built = time.perf_counter()
        build_store(local / "aletheia.db", "shop", args.memories)
        print(
            f"built {args.memories:,} memories in {time.perf_counter() - built:.1f} s", flush=True
        )
        syncs = [
            bench_sync(local, sqlite_hub, folder, "sqlite"),
            bench_sync(local, pg_url, folder, "postgresql"),
        ]
        sizes = database_size(pg_url)
        runs = bench_throughput(
            "sqlite", sqlite_hub, folder / "sqlite-admin", [1], args.seconds, None, args.rounds
        )
        runs += bench_throughput(
            "postgresql", pg_url, folder / "postgresql-admin", [1, 2, 3], args.seconds,
            lambda: backend_pids(admin, database), args.rounds,
        )  # fmt: skip
        if args.hub_cores is not None:
            (folder / "postgresql-capped-admin").mkdir()
            runs += bench_throughput(
                f"postgresql, {args.hub_cores:g} core each", pg_url,
                folder / "postgresql-capped-admin", [1, 2, 3], args.seconds,
                lambda: backend_pids(admin, database), args.rounds, args.hub_cores,
            )  # fmt: skip
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    scale = (
        f"{CLIENTS} clients, {args.memories:,} memories, {args.seconds:.0f} s each,"
        f" {args.rounds} round(s)"
    )
    print(f"\n## tools/call, {scale}\n")
    runs, rates = medians(runs)
    print(throughput_table(runs, rates))
    print()
    print("\n".join(verdicts(runs)))
    print(f"\n## aletheia sync, {args.memories:,} memories\n")
    print("| hub | push s | pull into a fresh store s | memories pulled |\n|---|---|---|---|")
    for sync in syncs:
        times = f"{sync['push_s']:.2f} | {sync['pull_s']:.2f}"
        print(f"| {sync['hub']} | {times} | {sync['received']:,} |")
    print()
    print("\n".join(size_lines(sizes)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
