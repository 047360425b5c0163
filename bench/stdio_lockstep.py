"""Two checkouts in lockstep over stdio: ``python bench/stdio_lockstep.py --baseline-src DIR``.

``stdio_bench.py`` interleaves whole runs (seconds each), so on a machine shared with other work
the load moves between a run and the next: an A/A comparison there swings by tens of percent.
Here two ``aletheia-mcp`` servers, this checkout's and ``--baseline-src``'s, each on a fresh
copy of one store prebuilt with ``--memories`` memories (built once and checkpointed into one
file, ``shared_store.py``: both meet the same index merges and WAL checkpoints; only a baseline
with other SQLite schema steps gets a store of its own), get the same requests in
turn, one waiting client each: request n goes to one, then to the other (which goes first
alternates by round), so both meet the same load within a millisecond. Per round: ``--searches``
searches, a few saves that load the saving path (the first is its own row), then ``--saves``
new memories (``stdio_bench.py``'s notes). Printed: each figure's
median over ``--rounds`` rounds, the ratio, and the ratio of the mean save per round.
Pass the same src as ``--baseline-src`` for an A/A run: what its ratios miss 1.00 by is noise.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from corpus import NoteWriter, queries
from shared_store import copy_store, prebuilt_stores
from stdio_bench import NOTES_SEED, WARM_UP_SAVES, WARM_UP_SEED, quantile_ms
from stdio_client import StdioServer

WARM_UP = 20  # searches before the timed ones: caches, prepared statements
Samples = dict[str, list[float]]


def timed(server: StdioServer, name: str, arguments: dict[str, Any]) -> float:
    line = server.call_line(name, arguments)
    started = time.perf_counter()
    server.send(line)
    server.receive()
    return time.perf_counter() - started


def one_round(
    variants: dict[str, dict[str, str]], stores: dict[str, Path], root: Path, cwd: Path, args: Any
) -> dict[str, Samples]:
    """Both servers on fresh copies; each request sent to one and then the other."""
    servers: dict[str, StdioServer] = {}
    try:
        for name, env in variants.items():
            data_dir = copy_store(stores[name], root / f"data-{name}")
            servers[name] = StdioServer(data_dir, cwd, extra_env=env)
            servers[name].initialize()
        found: dict[str, Samples] = {
            name: {"search": [], "save": [], "first save": []} for name in variants
        }
        searches = [("search", {"query": q}) for q in queries(WARM_UP + args.searches)]
        warm_saves = [
            ("save_memory", n.arguments())
            for n in NoteWriter(seed=WARM_UP_SEED).notes(WARM_UP_SAVES)
        ]
        saves = [
            ("save_memory", n.arguments()) for n in NoteWriter(seed=NOTES_SEED).notes(args.saves)
        ]
        first_save_at = len(searches)
        for n, (tool, arguments) in enumerate(searches + warm_saves + saves):
            for name, server in servers.items():
                seconds = timed(server, tool, arguments)
                if n == first_save_at:
                    found[name]["first save"].append(seconds)
                elif WARM_UP <= n < first_save_at:
                    found[name]["search"].append(seconds)
                elif n >= first_save_at + WARM_UP_SAVES:
                    found[name]["save"].append(seconds)
        return found
    finally:
        for server in servers.values():
            server.close()


ROWS: list[tuple[str, Callable[[Samples], float]]] = [
    ("saves/s", lambda s: len(s["save"]) / sum(s["save"])),
    ("save mean ms", lambda s: statistics.mean(s["save"]) * 1000),
    ("save p50 ms", lambda s: quantile_ms(s["save"], 0.5)),
    ("save p95 ms", lambda s: quantile_ms(s["save"], 0.95)),
    ("save p99 ms", lambda s: quantile_ms(s["save"], 0.99)),
    ("search p50 ms", lambda s: quantile_ms(s["search"], 0.5)),
    ("search p95 ms", lambda s: quantile_ms(s["search"], 0.95)),
    ("first save after start ms", lambda s: s["first save"][0] * 1000),
]


def print_table(rounds: list[dict[str, Samples]]) -> None:
    print("| Measurement | this checkout | baseline | Ratio |")
    print("|---|---:|---:|---:|")
    for label, stat in ROWS:
        ours, theirs = (statistics.median(stat(r[name]) for r in rounds) for name in ("a", "b"))
        print(f"| {label} | {ours:,.3f} | {theirs:,.3f} | {ours / theirs:.3f} |")
    ratios = [statistics.mean(r["a"]["save"]) / statistics.mean(r["b"]["save"]) for r in rounds]
    print("mean save ratio per round: " + ", ".join(f"{x:.3f}" for x in ratios))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-src", type=Path, required=True, help="another src folder")
    parser.add_argument("--memories", type=int, default=10_000, help="store size (10,000)")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--saves", type=int, default=1000)
    args = parser.parse_args(argv)
    variants = {"a": {}, "b": {"PYTHONPATH": str(args.baseline_src.resolve())}}
    with tempfile.TemporaryDirectory(prefix="aletheia-lockstep-") as folder:
        root = Path(folder)
        cwd = root / "bench-project"
        cwd.mkdir()
        stores = prebuilt_stores(variants, root, cwd, args.memories)
        rounds = []
        for n in range(args.rounds):
            print(f"round {n + 1} of {args.rounds}", file=sys.stderr, flush=True)
            order = list(variants) if n % 2 == 0 else list(variants)[::-1]
            rounds.append(one_round({k: variants[k] for k in order}, stores, root, cwd, args))
    print_table(rounds)


if __name__ == "__main__":
    main()
