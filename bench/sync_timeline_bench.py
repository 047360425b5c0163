"""Applying one fact's long history by sync: ``python bench/sync_timeline_bench.py
[--versions 3000] [--rounds 3] [--baseline-src DIR]``.

A store writes ``--versions`` values of one fact (one key, one after another in time); its
change log is applied, in pages of 1,000 as ``aletheia sync`` sends them, to an empty store.
Sync places every applied fact in its key's timeline, which reads all of that key's facts: the
table shows the time to apply the whole history, the median of ``--rounds``, so that a cost
per fact that grows with the history shows as a ratio against ``--baseline-src`` (another
checkout's ``src`` folder, as in ``stdio_bench.py``). Each run is a process of its own.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START_MS = 1_700_000_000_000
NOW_MS = 1_800_000_000_000
PAGE = 1000


def run_once(versions: int) -> float:
    """Seconds to apply ``versions`` values of one fact, page by page (in this process)."""
    from aletheia_mem.domain import facts
    from aletheia_mem.storage.sqlite import SqliteStore

    with tempfile.TemporaryDirectory(prefix="aletheia-timeline-") as temp:
        source, target = SqliteStore(Path(temp) / "a.db"), SqliteStore(Path(temp) / "b.db")
        try:
            for i in range(versions):
                facts.record_fact(
                    source, project="shop", subject="build", predicate="status",
                    object=f"v{i}", valid_from=START_MS + i * 1000, source="cli", now=NOW_MS,
                )  # fmt: skip
            pages, after = [], 0
            while True:
                page = source.export_changes(
                    after=after, limit=PAGE, max_bytes=10**8, local_only=True,
                    exclude_origin=None, projects=None,
                )  # fmt: skip
                pages.append(page.records)
                after = page.cursor
                if not page.more:
                    break
            started = time.perf_counter()
            for records in pages:
                target.apply_changes(records, projects=None, now=NOW_MS)
            return time.perf_counter() - started
        finally:
            source.close()
            target.close()


def measure(src: Path | None, versions: int) -> float:
    env = dict(os.environ)
    if src is not None:
        env["PYTHONPATH"] = str(src)
    done = subprocess.run(
        [sys.executable, __file__, "--child", str(versions)],
        env=env, capture_output=True, text=True, check=True, timeout=3600,
    )  # fmt: skip
    return float(json.loads(done.stdout)["seconds"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--versions", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps({"seconds": run_once(args.child)}))
        return 0
    variants: dict[str, Path | None] = {"this checkout": None}
    if args.baseline_src is not None:
        variants["baseline"] = args.baseline_src.resolve()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):  # interleaved, so that the machine's noise hits both
        for name, src in variants.items():
            times[name].append(measure(src, args.versions))
    print(f"| {args.versions:,} versions of one fact, applied by sync | seconds (median) |")
    print("|---|---:|")
    for name, found in times.items():
        print(f"| {name} | {statistics.median(found):.2f} |")
    if "baseline" in times:
        ratio = statistics.median(times["this checkout"]) / statistics.median(times["baseline"])
        print(f"| this checkout / baseline | {ratio:.2f} x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
