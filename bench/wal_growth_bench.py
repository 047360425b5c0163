"""The WAL's size while readers overlap: ``python bench/wal_growth_bench.py [--baseline-src DIR]``.

Reproduces checkpoint starvation on a real store file with real processes: one process saves
memories through ``SqliteStore`` as fast as it can (an agent's server, hooks and CLI commands
saving), while ``--readers`` other processes each pass a read transaction between two
connections, opening the next before closing the last (a server answering searches without a
gap), each held ``--hold-ms``. So some reader is always in the WAL, and SQLite's automatic
(PASSIVE) checkpoint never lets it start over. The parent samples the ``-wal`` file's size every
``--every`` seconds for ``--seconds``, and reports it over time for each variant, with the saves
the writer made.

``--baseline-src`` names another checkout's ``src`` folder (say ``git archive`` of an older
commit): its writer runs first on a store of its own, then this checkout's, with the same
readers.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WRITER = """
import sys, time
from pathlib import Path
from aletheia_mem.storage.entries import NewMemory
from aletheia_mem.storage.sqlite import SqliteStore
store = SqliteStore(Path(sys.argv[1]))
Path(sys.argv[3]).touch()  # the store exists: the readers may start
while not Path(sys.argv[4]).exists():
    time.sleep(0.005)
deadline, saves = time.monotonic() + float(sys.argv[2]), 0
while time.monotonic() < deadline:
    text = f"note {saves}: the deploy script needs the VPN on staging, run make deploy"
    store.add_memory(NewMemory("bench", "note", "note", f"note {saves}", text, "mcp", 0, None))
    saves += 1
bound = getattr(store, "_wal_bound", None)
store.close()
print(saves, getattr(bound, "truncated", "-"), getattr(bound, "refused", "-"))
"""

READER = """
import sqlite3, sys, time
from pathlib import Path
path, hold, stop = sys.argv[1], float(sys.argv[2]) / 1000, Path(sys.argv[3])
conns = [sqlite3.connect(path, isolation_level=None, timeout=30) for _ in range(2)]
turn = 0
conns[turn].execute("BEGIN")
conns[turn].execute("SELECT count(*) FROM memories").fetchone()
while not stop.exists():
    time.sleep(hold)
    nxt = 1 - turn
    conns[nxt].execute("BEGIN")  # the next read starts before the last one ends
    conns[nxt].execute("SELECT count(*) FROM memories").fetchone()
    conns[turn].execute("COMMIT")
    turn = nxt
conns[turn].execute("COMMIT")
"""


def _run(env: dict[str, str], folder: Path, args: argparse.Namespace) -> tuple[list[int], str]:
    """One variant: the WAL's size at each sample (bytes) and the writer's report."""
    store = folder / "aletheia.db"
    wal = Path(f"{store}-wal")
    ready, go, stop = folder / "ready", folder / "go", folder / "stop"
    full = {**os.environ, **env}
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(store), str(args.seconds), str(ready), str(go)],
        env=full,
        stdout=subprocess.PIPE,
        text=True,
    )
    while not ready.exists():
        time.sleep(0.01)
    readers = [
        subprocess.Popen([sys.executable, "-c", READER, str(store), str(args.hold_ms), str(stop)])
        for _ in range(args.readers)
    ]
    time.sleep(0.3)  # the readers are in
    go.touch()
    sizes: list[int] = []
    started = time.monotonic()
    while writer.poll() is None:
        elapsed = time.monotonic() - started
        if elapsed >= len(sizes) * args.every:
            sizes.append(wal.stat().st_size if wal.exists() else 0)
        time.sleep(0.01)
    stop.touch()
    for reader in readers:
        reader.wait()
    report, _ = writer.communicate()
    return sizes, report.strip()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="how long the writer saves")
    parser.add_argument("--every", type=float, default=1.0, help="seconds between samples")
    parser.add_argument("--readers", type=int, default=2, help="reader processes (2)")
    parser.add_argument("--hold-ms", type=float, default=20.0, help="each read's length (20)")
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, str]] = {}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    variants["this checkout"] = {"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    results: dict[str, tuple[list[int], str]] = {}
    with tempfile.TemporaryDirectory(prefix="aletheia-wal-bench-") as root:
        for name, env in variants.items():
            folder = Path(root) / name.replace(" ", "-")
            folder.mkdir()
            results[name] = _run(env, folder, args)
            print(f"{name}: done", file=sys.stderr, flush=True)
    names = list(results)
    print("| seconds | " + " | ".join(f"{name} WAL MiB" for name in names) + " |")
    print("|---:|" + "---:|" * len(names))
    longest = max(len(sizes) for sizes, _ in results.values())
    for index in range(longest):
        cells = [
            f"{results[name][0][index] / 2**20:,.1f}" if index < len(results[name][0]) else ""
            for name in names
        ]
        print(f"| {index * args.every:g} | " + " | ".join(cells) + " |")
    print()
    for name in names:
        sizes, report = results[name]
        saves, truncated, refused = report.split()
        print(
            f"{name}: {int(saves):,} saves ({int(saves) / args.seconds:,.0f}/s), largest WAL"
            f" {max(sizes) / 2**20:,.1f} MiB, checkpoints that emptied it {truncated},"
            f" refused {refused}"
        )


if __name__ == "__main__":
    main()
