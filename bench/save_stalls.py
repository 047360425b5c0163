"""The saves that stall on a WAL checkpoint: ``python bench/save_stalls.py [--baseline-src DIR]``.

``save_memory`` through the stdio line loop, in process (no pipe: the figures are the store's),
``--saves`` new memories (``stdio_bench.py``'s notes) on a fresh copy of a store prebuilt with
``--memories`` memories. SQLite checkpoints the WAL into the database file in the commit of the
save that passes ``wal_autocheckpoint`` pages (every ~340 saves at 10,000 memories); that save
is told by the database file changing (only a checkpoint writes it). Printed per variant (the
median over ``--runs`` runs, interleaved): the mean save, the p50, the checkpointing saves and
their share of all the time spent saving.

``--baseline-src`` names another checkout's ``src`` folder, as in ``stdio_bench.py``; both run on
copies of one store (``shared_store.py``).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from aletheia_mem.config import DB_FILE_NAME
from shared_store import prebuilt_stores
from stdio_bench import NOTES_SEED
from stdio_client import server_env

BENCH = Path(__file__).parent
# Run in a fresh Python: argv is the number of saves; prints each save's seconds and the
# indexes of the saves that wrote the database file.
SAVE_LOOP = """
import io, json, os, sys, time
from pathlib import Path
from corpus import NoteWriter
from stdio_client import initialize_line, request_line
from aletheia_mem.config import DB_FILE_NAME, load_settings
from aletheia_mem.server.mcp import McpSession
from aletheia_mem.server.stdio_session import serve
from aletheia_mem.server.wiring import open_app
count, seed = int(sys.argv[1]), int(sys.argv[2])
db = Path(os.environ["ALETHEIA_DATA_DIR"]) / DB_FILE_NAME
session = McpSession(app=open_app(load_settings()), fixed_caller="bench")
lines = [
    request_line(n, "tools/call", {"name": "save_memory", "arguments": note.arguments()})
    for n, note in enumerate(NoteWriter(seed=seed).notes(count), 1)
]
serve(session, io.BytesIO(initialize_line()), io.BytesIO())
seconds, checkpoints, written = [], [], os.stat(db).st_mtime_ns
for n, line in enumerate(lines):
    started = time.perf_counter()
    serve(session, io.BytesIO(line), io.BytesIO())
    seconds.append(time.perf_counter() - started)
    if os.stat(db).st_mtime_ns != written:
        checkpoints.append(n)
        written = os.stat(db).st_mtime_ns
print(json.dumps([seconds, checkpoints]))
"""


def one_run(env: dict[str, str], store: Path, data_dir: Path, cwd: Path, saves: int) -> dict:
    shutil.rmtree(data_dir, ignore_errors=True)
    data_dir.mkdir()
    shutil.copyfile(store, data_dir / DB_FILE_NAME)
    path = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(BENCH)) if p)
    argv = [sys.executable, "-c", SAVE_LOOP, str(saves), str(NOTES_SEED)]
    out = subprocess.run(
        argv,
        env={**server_env(data_dir, cwd), "PYTHONPATH": path},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    seconds, checkpoints = json.loads(out.strip().splitlines()[-1])
    stalls = [seconds[n] for n in checkpoints]
    return {
        "mean save ms": statistics.mean(seconds) * 1000,
        "save p50 ms": sorted(seconds)[len(seconds) // 2] * 1000,
        "checkpointing saves": len(stalls),
        "checkpointing save median ms": statistics.median(stalls) * 1000 if stalls else 0.0,
        "checkpointing saves' share of the time": sum(stalls) / sum(seconds),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="store size (10,000)")
    parser.add_argument("--saves", type=int, default=1500)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, str]] = {"this checkout": {}}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    runs: dict[str, list[dict]] = {name: [] for name in variants}
    with tempfile.TemporaryDirectory(prefix="aletheia-save-stalls-") as folder:
        root = Path(folder)
        cwd = root / "bench-project"
        cwd.mkdir()
        stores = prebuilt_stores(variants, root, cwd, args.memories)
        names = list(variants)
        for run in range(args.runs):  # interleaved, in turn first
            print(f"run {run + 1} of {args.runs}", file=sys.stderr, flush=True)
            for name in names[run % 2 :] + names[: run % 2]:
                data_dir = root / f"data-{name.replace(' ', '-')}"
                runs[name].append(one_run(variants[name], stores[name], data_dir, cwd, args.saves))
    print_table(runs)


def print_table(runs: dict[str, list[dict]]) -> None:
    names = list(runs)
    ratio = len(names) == 2
    print("| Measurement | " + " | ".join(names) + (" | Ratio |" if ratio else " |"))
    print("|---|" + "---:|" * (len(names) + ratio))
    for measure in runs[names[0]][0]:
        values = [statistics.median(r[measure] for r in runs[name]) for name in names]
        row = f"| {measure} | " + " | ".join(f"{v:,.3f}" for v in values)
        if ratio:
            row += f" | {values[0] / values[1]:.2f}" if values[1] else " | n/a"
        print(row + " |", flush=True)


if __name__ == "__main__":
    main()
