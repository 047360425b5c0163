"""One waiting client over stdio: ``python bench/stdio_bench.py [--baseline-src DIR] [--runs N]``.

Starts the real ``aletheia-mcp`` on a copy of a store prebuilt with ``--memories`` memories
(``store_builder.py``) and drives it as an agent does, sending each request only once the
previous reply is in: ``ping`` (the transport's own cost, the floor), ``search`` and
``save_memory`` (p50, p95, and saves per second once a few saves have loaded the saving path;
the first of those is its own row), and cold start (spawn to the ``initialize``
reply, and to the reply of a first ``tools/call``). Each figure is the median over ``--runs``
runs; every run starts from a fresh copy of the store, so that each does the same work.

``--baseline-src`` names another checkout's ``src`` folder (say ``git archive`` of an older
commit): the same script then also serves from that code (put first on ``PYTHONPATH``), runs
interleaved, so that the ratio of the two holds on a busy machine; both run on copies of one
store, built once (``shared_store.py``; a baseline with other SQLite schema steps builds its own).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from aletheia_mem.config import DB_FILE_NAME
from corpus import NoteWriter, queries
from shared_store import prebuilt_stores
from stdio_client import StdioServer, initialize_line, request_line, tool_text

SAVE_P50_TARGET_MS = 0.6
SAVES_PER_S_TARGET = 1500.0
SEARCH_P50_TARGET_MS = 1.5
COLD_START_TARGET_MS = 100.0
NOTES_SEED = 77  # not the builder's seed: every save is a new memory
# Saves before the timed ones, as searches have theirs: a server's first save loads the saving
# path (its modules, the full-text index's state), a one-off reported as its own row.
WARM_UP_SAVES = 5
WARM_UP_SEED = NOTES_SEED + 1
FIRST_CALL_QUERY = "retry backoff"


@dataclass
class Samples:
    """Seconds per request, per measurement, gathered over the runs of one variant."""

    per_run: dict[str, list[list[float]]] = field(default_factory=dict)
    rates: list[float] = field(default_factory=list)

    def add(self, name: str, samples: list[float]) -> None:
        self.per_run.setdefault(name, []).append(samples)


def quantile_ms(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def timed_calls(server: StdioServer, lines: list[bytes]) -> tuple[list[float], list[dict]]:
    """Send each line once the previous reply is in; the seconds each took and the replies."""
    samples, replies = [], []
    for line in lines:
        started = time.perf_counter()
        server.send(line)
        replies.append(server.receive())
        samples.append(time.perf_counter() - started)
    return samples, replies


def cold_start(data_dir: Path, cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the initialize reply, and to a first search's reply."""
    with StdioServer(data_dir, cwd, extra_env=env) as server:
        server.send(initialize_line())
        server.receive()
        initialized = time.perf_counter() - server.started
        server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        server.send(server.call_line("search", {"query": FIRST_CALL_QUERY}))
        tool_text(server.receive())
        first_call = time.perf_counter() - server.started
    return initialized, first_call


def one_run(
    store: Path, data_dir: Path, cwd: Path, env: dict[str, str], args: argparse.Namespace
) -> Samples:
    """Cold starts, then pings, searches and saves on one server, each waiting for its reply."""
    result = Samples()
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir()
    shutil.copyfile(store, data_dir / DB_FILE_NAME)
    starts = [cold_start(data_dir, cwd, env) for _ in range(args.cold)]
    result.add("cold start to initialize reply", [s[0] for s in starts])
    result.add("cold start to first tools/call reply", [s[1] for s in starts])
    notes = NoteWriter(seed=NOTES_SEED).notes(args.saves)
    with StdioServer(data_dir, cwd, extra_env=env) as server:
        server.initialize()
        pings = [request_line(n, "ping", {}) for n in range(10_000, 10_000 + args.pings)]
        searches = [server.call_line("search", {"query": q}) for q in queries(args.searches)]
        saves = [server.call_line("save_memory", note.arguments()) for note in notes]
        warm_saves = [
            server.call_line("save_memory", note.arguments())
            for note in NoteWriter(seed=WARM_UP_SEED).notes(WARM_UP_SAVES)
        ]
        timed_calls(server, pings[:20] + searches[:10])  # warm-up: caches, prepared statements
        result.add("first save after start", timed_calls(server, warm_saves)[0][:1])
        result.add("ping", timed_calls(server, pings)[0])
        result.add("search", timed_calls(server, searches)[0])
        started = time.perf_counter()
        samples, replies = timed_calls(server, saves)
        result.rates.append(len(saves) / (time.perf_counter() - started))
        result.add("save_memory", samples)
    for reply in replies:
        if not tool_text(reply).startswith("Saved as #"):
            raise RuntimeError(f"save_memory did not create a memory: {reply}")
    return result


ROWS: list[tuple[str, str, float | None]] = [
    ("ping", "p50", None),
    ("ping", "p95", None),
    ("save_memory", "p50", SAVE_P50_TARGET_MS),
    ("save_memory", "p95", None),
    ("search", "p50", SEARCH_P50_TARGET_MS),
    ("search", "p95", None),
    ("cold start to initialize reply", "median", COLD_START_TARGET_MS),
    ("cold start to first tools/call reply", "median", None),
    ("first save after start", "median", None),
]


def figure(samples: Samples, name: str, stat: str) -> float:
    """The median over runs of each run's p50 or p95; for cold start, the median of all."""
    runs = samples.per_run[name]
    if stat == "median":
        return statistics.median(s for run in runs for s in run) * 1000
    q = 0.5 if stat == "p50" else 0.95
    return statistics.median(quantile_ms(run, q) for run in runs)


def print_table(variants: dict[str, Samples]) -> None:
    names = list(variants)
    header = "| Measurement | " + " | ".join(names)
    header += " | Ratio |" if len(names) == 2 else " |"
    print(header + " Target |")
    print("|---|" + "---:|" * (len(names) + (len(names) == 2)) + "---|")
    table: list[tuple[str, list[float], str]] = []
    for name, stat, target in ROWS:
        values = [figure(variants[v], name, stat) for v in names]
        table.append((f"{name} {stat} ms", values, f"<= {target} ms" if target else "-"))
    rates = [statistics.median(variants[v].rates) for v in names]
    table.append(("save_memory saves/s", rates, f">= {SAVES_PER_S_TARGET:,.0f}"))
    ping = [figure(variants[v], "ping", "p50") for v in names]
    for name in ("save_memory", "search"):
        values = [figure(variants[v], name, "p50") - p for v, p in zip(names, ping, strict=True)]
        table.append((f"{name} p50 minus ping p50 ms", values, "-"))
    for label, values, target in table:
        row = f"| {label} | " + " | ".join(f"{v:,.3f}" if v < 10 else f"{v:,.0f}" for v in values)
        if len(values) == 2:
            row += f" | {values[0] / values[1]:.2f}" if values[1] else " | n/a"
        print(f"{row} | {target} |", flush=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="store size (10,000)")
    parser.add_argument("--runs", type=int, default=5, help="runs per variant (5)")
    parser.add_argument("--cold", type=int, default=3, help="cold starts per run (3)")
    parser.add_argument("--pings", type=int, default=300)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--saves", type=int, default=500)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, str]] = {"this checkout": {}}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    with tempfile.TemporaryDirectory(prefix="aletheia-stdio-bench-") as folder:
        root = Path(folder)
        cwd = root / "bench-project"
        cwd.mkdir()
        samples = {name: Samples() for name in variants}
        runners: list[Callable[[], None]] = []
        started = time.perf_counter()
        stores = prebuilt_stores(variants, root, cwd, args.memories)
        print(
            f"built {args.memories:,} memories in {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
        )
        for name, env in variants.items():
            data_dir = root / f"data-{name.replace(' ', '-')}"
            runners.append(_runner(samples[name], stores[name], data_dir, cwd, env, args))
        for run in range(args.runs):  # interleaved, in turn first, so both see the same load
            print(f"run {run + 1} of {args.runs}", file=sys.stderr, flush=True)
            for runner in runners[run % 2 :] + runners[: run % 2]:
                runner()
    print_table(samples)


def _runner(
    into: Samples,
    store: Path,
    data_dir: Path,
    cwd: Path,
    env: dict[str, str],
    args: argparse.Namespace,
) -> Callable[[], None]:
    def run() -> None:
        if not into.per_run:  # a first start writes the .pyc files: not a cold start to count
            data_dir.mkdir(exist_ok=True)
            cold_start(data_dir, cwd, env)
        found = one_run(store, data_dir, cwd, env, args)
        for name, runs in found.per_run.items():
            for samples in runs:
                into.add(name, samples)
        into.rates += found.rates

    return run


if __name__ == "__main__":
    main()
