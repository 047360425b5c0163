"""Instructions, not milliseconds: ``python bench/stdio_instructions.py [--baseline-src DIR]``.

Counts with ``valgrind --tool=callgrind`` (repeatable on a busy machine, where wall times of
``stdio_bench.py`` swing by tens of percent) what the real ``aletheia-mcp`` executes on a store
prebuilt with ``--memories`` memories:

- cold start: spawn to the ``initialize`` reply, and to the reply of a first search (callgrind
  dumps its counts after each ``_Py_write``, the server's writes of its replies);
- one search: the stdio line loop in process over ``--searches`` queries of ``corpus.queries``,
  minus the same process without them, divided by their number;
- one save: the same over ``--saves`` new memories (``stdio_bench.py``'s notes), each run on a
  fresh copy of the store. It counts the CPU's work only, not the time spent waiting for the
  disk (``fsync``), and ``--saves`` (300) spans a WAL checkpoint or a full merge of the
  full-text index only now and then, so compare the same ``--saves`` only.

``--baseline-src`` names another checkout's ``src`` folder (put first on ``PYTHONPATH``), as in
``stdio_bench.py``; each variant builds its store with its own code.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from aletheia_mem.config import DB_FILE_NAME
from stdio_bench import build_with
from stdio_client import initialize_line, request_line, server_command, server_env

BENCH = Path(__file__).parent
# Run in a fresh Python by ``search_instructions``: argv is the number of searches.
SEARCH_LOOP = """
import io, sys
from corpus import queries
from stdio_client import initialize_line, request_line
from aletheia_mem.config import load_settings
from aletheia_mem.server import stdio
from aletheia_mem.server.mcp import McpSession
from aletheia_mem.server.wiring import open_app
try:
    from aletheia_mem.server.stdio_session import serve
except ImportError:  # a checkout from before stdio_session.py
    serve = stdio.serve
count = int(sys.argv[1])
session = McpSession(app=open_app(load_settings()), fixed_caller="bench")
lines = [initialize_line()] + [
    request_line(n, "tools/call", {"name": "search", "arguments": {"query": q}})
    for n, q in enumerate(queries(10 + count), 1)
]
serve(session, io.BytesIO(b"".join(lines[:11])), io.BytesIO())  # warm-up, as stdio_bench
serve(session, io.BytesIO(b"".join(lines[11:])), io.BytesIO())
"""
# The same for ``save_memory``: argv is the number of saves, then 1 to send them (0: only to
# build their lines, the cost subtracted).
SAVE_LOOP = """
import io, sys
from corpus import NoteWriter
from stdio_bench import NOTES_SEED
from stdio_client import initialize_line, request_line
from aletheia_mem.config import load_settings
from aletheia_mem.server import stdio
from aletheia_mem.server.mcp import McpSession
from aletheia_mem.server.wiring import open_app
try:
    from aletheia_mem.server.stdio_session import serve
except ImportError:  # a checkout from before stdio_session.py
    serve = stdio.serve
count, send = int(sys.argv[1]), sys.argv[2] == "1"
session = McpSession(app=open_app(load_settings()), fixed_caller="bench")
saves = [
    request_line(n, "tools/call", {"name": "save_memory", "arguments": note.arguments()})
    for n, note in enumerate(NoteWriter(seed=NOTES_SEED).notes(count), 1)
]
serve(session, io.BytesIO(initialize_line()), io.BytesIO())
serve(session, io.BytesIO(b"".join(saves if send else [])), io.BytesIO())
"""


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


def search_instructions(
    env: dict[str, str], data_dir: Path, cwd: Path, work: Path, count: int
) -> int:
    """Instructions of one search through the stdio line loop, averaged over ``count``."""
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(BENCH)) if p)
    server = {**server_env(data_dir, cwd), "PYTHONPATH": path}
    runs = []
    for searches in (0, count):
        out = work / f"search{searches}"
        argv = [sys.executable, "-c", SEARCH_LOOP, str(searches)]
        callgrind(argv, server, cwd, b"", out)
        runs.append(sum(totals(out)))
    return (runs[1] - runs[0]) // count


def save_instructions(
    env: dict[str, str], data_dir: Path, cwd: Path, work: Path, count: int
) -> int:
    """Instructions of one new memory saved through the stdio line loop, averaged over
    ``count``, each run on a fresh copy of the store."""
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(BENCH)) if p)
    store = work / "saves-prebuilt.db"
    shutil.copyfile(data_dir / DB_FILE_NAME, store)
    runs = []
    for send in (0, 1):
        run_dir = work / f"saves-data{send}"
        run_dir.mkdir()
        shutil.copyfile(store, run_dir / DB_FILE_NAME)
        server = {**server_env(run_dir, cwd), "PYTHONPATH": path}
        out = work / f"saves{send}"
        argv = [sys.executable, "-c", SAVE_LOOP, str(count), str(send)]
        callgrind(argv, server, cwd, b"", out)
        runs.append(sum(totals(out)))
    return (runs[1] - runs[0]) // count


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="store size (10,000)")
    parser.add_argument("--searches", type=int, default=100)
    parser.add_argument("--saves", type=int, default=300)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed.")
    variants: dict[str, dict[str, str]] = {"this checkout": {}}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    results: dict[str, dict[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="aletheia-instructions-") as folder:
        root = Path(folder)
        cwd = root / "bench-project"
        cwd.mkdir()
        for name, env in variants.items():
            work = root / name.replace(" ", "-")
            data_dir = work / "data"
            data_dir.mkdir(parents=True)
            build_with(env, data_dir / "aletheia.db", cwd, args.memories)
            initialized, first_call = cold_start(env, data_dir, cwd, work)
            results[name] = {
                "cold start to initialize reply": initialized,
                "cold start to first tools/call reply": first_call,
                "one search": search_instructions(env, data_dir, cwd, work, args.searches),
                "one save": save_instructions(env, data_dir, cwd, work, args.saves),
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
        row = f"| {measure} | " + " | ".join(f"{v / 1e6:,.2f}" for v in values)
        print(row + (f" | {values[0] / values[1]:.2f} |" if ratio else " |"))


if __name__ == "__main__":
    main()
