"""Instructions, not milliseconds: ``python bench/stdio_instructions.py [--baseline-src DIR]``.

Counts with ``valgrind --tool=callgrind`` (repeatable on a busy machine, where wall times of
``stdio_bench.py`` swing by tens of percent) what the real ``aletheia-mcp`` executes on a store
prebuilt with ``--memories`` memories:

- cold start: spawn to the ``initialize`` reply, and to the reply of a first search (callgrind
  dumps its counts after each ``_Py_write``, the server's writes of its replies);
- one search: the stdio line loop in process over ``--searches`` queries of ``corpus.queries``
  after 10 others, each counted on its own (callgrind dumps its counts as the loop reads each
  next line): the median and the mean per search;
- one save: the same over ``--saves`` new memories (``stdio_bench.py``'s notes) after the
  warm-up saves, on a fresh copy of the store. It counts the CPU's work only, not the time
  spent waiting for the disk (``fsync``). The median is the typical save; the mean also has the
  saves that do more (long notes, merges of the full-text index's segments, a WAL checkpoint:
  about one save in seven costs 1.5 times the median or more), the same saves for each variant
  as long as both write the same pages, so compare the same ``--saves`` only.

Every variant runs on a copy of one store, built once (seeded content and uids) and
checkpointed into one file (``shared_store.py``), so that the variants meet the same index
layout, merges and checkpoints; only a ``--baseline-src`` with other SQLite schema steps gets a
store of its own (said on stderr). ``--baseline-src`` names another checkout's ``src`` folder
(put first on ``PYTHONPATH``), as in ``stdio_bench.py``. Pass this checkout's own ``src`` for an
A/A run: its ratios should be 1.000.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from shared_store import copy_store, prebuilt_stores, variant_src
from stdio_client import initialize_line, request_line, server_command, server_env

BENCH = Path(__file__).parent
# Run in a fresh Python by ``per_call``: argv is "search" or "save", then the number counted.
# ``os.getloadavg`` (callgrind dumps before each ``getloadavg``) marks each line the loop reads.
CALL_LOOP = """
import io, os, sys
from corpus import NoteWriter, queries
from stdio_bench import NOTES_SEED, WARM_UP_SAVES, WARM_UP_SEED
from stdio_client import initialize_line, request_line
from aletheia_mem.config import load_settings
from aletheia_mem.server import stdio
from aletheia_mem.server.mcp import McpSession
from aletheia_mem.server.wiring import open_app
try:
    from aletheia_mem.server.stdio_session import serve
except ImportError:  # a checkout from before stdio_session.py
    serve = stdio.serve


class Marked:
    def __init__(self, lines):
        self.lines = lines

    def __iter__(self):
        for line in self.lines:
            os.getloadavg()
            yield line
        os.getloadavg()


kind, count = sys.argv[1], int(sys.argv[2])
session = McpSession(app=open_app(load_settings()), fixed_caller="bench")
if kind == "search":
    calls = [("search", {"query": q}) for q in queries(10 + count)]
    warm, counted = calls[:10], calls[10:]
else:
    warm_notes = NoteWriter(seed=WARM_UP_SEED).notes(WARM_UP_SAVES)
    warm = [("save_memory", n.arguments()) for n in warm_notes]
    counted = [("save_memory", n.arguments()) for n in NoteWriter(seed=NOTES_SEED).notes(count)]
lines = [
    request_line(n, "tools/call", {"name": name, "arguments": arguments})
    for n, (name, arguments) in enumerate(warm + counted, 1)
]
serve(session, io.BytesIO(initialize_line() + b"".join(lines[:len(warm)])), io.BytesIO())
replies = io.BytesIO()
serve(session, Marked(lines[len(warm):]), replies)
if replies.getvalue().count(b'"isError":true'):
    raise SystemExit("a counted call failed")
"""
MARKER = "getloadavg"


def callgrind(argv: list[str], env: dict[str, str], cwd: Path, stdin: bytes, out: Path) -> None:
    command = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}.%p", *argv]
    env = {"PYTHONHASHSEED": "0", **env}  # the same dict and set layouts in every run
    subprocess.run(command, input=stdin, env=env, cwd=cwd, capture_output=True, check=True)


def totals(out: Path) -> list[int]:
    """The instructions of each dump, in order (``.1``, ``.2``, ... then the final one)."""
    files = sorted(out.parent.glob(out.name + ".*"), key=_dump_number)
    found = []
    for file in files:
        match = re.search(r"^(?:summary|totals): (\d+)", file.read_text(), re.M)
        found.append(int(match.group(1)) if match else 0)
    return found


def _dump_number(file: Path) -> int:
    suffix = file.name.rsplit(".", 1)[-1]
    parts = file.name.split(".")
    return int(suffix) if len(parts) > 2 and suffix.isdigit() else 1 << 30


def cold_start(env: dict[str, str], data_dir: Path, cwd: Path, work: Path) -> tuple[int, int]:
    """Instructions from spawn to the initialize reply, and to a first search's reply."""
    search = request_line(1, "tools/call", {"name": "search", "arguments": {"query": "retry"}})
    stdin = initialize_line() + b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    stdin += search
    server = {**server_env(data_dir, cwd), **env}
    subprocess.run(server_command(), input=stdin, env=server, cwd=cwd, capture_output=True)
    out = work / "start"
    argv = ["--dump-after=_Py_write", *server_command()]
    callgrind(argv, server, cwd, stdin, out)
    parts = totals(out)
    return parts[0], parts[0] + parts[1]


def per_call(
    env: dict[str, str], store: Path, cwd: Path, work: Path, kind: str, count: int
) -> list[int]:
    """The instructions of each of ``count`` counted calls (``kind``: search or save) through
    the stdio line loop, on a fresh copy of ``store``."""
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(BENCH)) if p)
    data_dir = copy_store(store, work / f"{kind}-data")
    server = {**server_env(data_dir, cwd), "PYTHONPATH": path}
    out = work / kind
    argv = [f"--dump-before={MARKER}", sys.executable, "-c", CALL_LOOP, kind, str(count)]
    callgrind(argv, server, cwd, b"", out)
    parts = totals(out)  # before the first call, each call, then the exit
    if len(parts) != count + 2:
        raise RuntimeError(f"{kind}: {len(parts)} callgrind dumps, not {count + 2}")
    return parts[1:-1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="store size (10,000)")
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed.")
    # Both on PYTHONPATH: the same import path shape, so the same lookups at start.
    variants: dict[str, dict[str, str]] = {"this checkout": {"PYTHONPATH": str(variant_src({}))}}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    results: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="aletheia-instructions-") as folder:
        root = Path(folder)
        cwd = root / "bench-project"
        cwd.mkdir()
        stores = prebuilt_stores(variants, root, cwd, args.memories)
        for name, env in variants.items():
            work = root / name.replace(" ", "-")
            data_dir = copy_store(stores[name], work / "start-data")
            initialized, first_call = cold_start(env, data_dir, cwd, work)
            searches = per_call(env, stores[name], cwd, work, "search", args.searches)
            saves = per_call(env, stores[name], cwd, work, "save", args.saves)
            results[name] = {
                "cold start to initialize reply": initialized,
                "cold start to first tools/call reply": first_call,
                "one search (median)": int(statistics.median(searches)),
                "one search (mean)": sum(searches) // len(searches),
                "one save (median)": int(statistics.median(saves)),
                "one save (mean)": sum(saves) // len(saves),
            }
            print(name, json.dumps(results[name]), file=sys.stderr, flush=True)
    print_table(results)


def print_table(results: dict[str, dict[str, int]]) -> None:
    names = list(results)
    ratio = len(names) == 2
    print("| Instructions (millions) | " + " | ".join(names) + (" | Ratio |" if ratio else " |"))
    print("|---|" + "---:|" * (len(names) + ratio))
    for measure in results[names[0]]:
        values = [results[name][measure] for name in names]
        row = f"| {measure} | " + " | ".join(f"{v / 1e6:,.3f}" for v in values)
        print(row + (f" | {values[0] / values[1]:.3f} |" if ratio else " |"))


if __name__ == "__main__":
    main()
