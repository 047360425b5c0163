"""Import's peak memory and time: ``python bench/import_memory_bench.py [--baseline-src DIR]``.

Builds a store of each ``--sizes`` memories (``store_builder.py``), exports it once, then
imports that export into a fresh folder with the real CLI (``python -m aletheia_mem import``,
a process of its own), ``--runs`` times per variant, interleaved. For each import it reports
the child's peak resident memory (``ru_maxrss`` from ``wait4``), its wall time and its CPU time
(steadier on a busy machine), next to the peak of the same interpreter that only starts the CLI
(``aletheia --version``), so that what the import itself holds is the difference. Each figure is
the median over the runs.

``--baseline-src`` names another checkout's ``src`` folder (say ``git archive`` of an older
commit), put first on ``PYTHONPATH`` for its imports, so that the two can be compared on the
same export.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = "bench-project"
# Built and exported in a process of its own: ``ru_maxrss`` counts a child's memory from the
# fork on, before it runs the import, so a parent that built a large store in its own memory
# would show as the import's peak.
EXPORT = """
import sys
from pathlib import Path
from aletheia_mem.domain.transfer import write_export
from aletheia_mem.storage.sqlite import SqliteStore
from store_builder import build_store
store_path, dump, project, count = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
build_store(store_path, project, int(count))
store = SqliteStore(store_path)
try:
    with dump.open("w", encoding="utf-8", newline="\\n") as out:
        write_export(store, out)
finally:
    store.close()
"""


def _child(env: dict[str, str], args: list[str], data_dir: Path) -> tuple[float, float, int]:
    """Run the CLI with ``args``; its wall time and CPU time (s) and peak RSS (KiB)."""
    full = {**os.environ, **env, "ALETHEIA_DATA_DIR": str(data_dir)}
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "aletheia_mem", *args],
        env=full,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    errors = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    elapsed = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {errors.decode(errors='replace')}")
    return elapsed, usage.ru_utime + usage.ru_stime, int(usage.ru_maxrss)


def _export(root: Path, memories: int) -> Path:
    """An export of a store of ``memories`` memories built by this checkout's code."""
    dump = root / f"export-{memories}.jsonl"
    here = Path(__file__).resolve().parent
    path = os.pathsep.join((str(here.parent / "src"), str(here)))
    subprocess.run(
        [sys.executable, "-c", EXPORT, str(root / f"built-{memories}.db"), str(dump), PROJECT,
         str(memories)],
        env={**os.environ, "PYTHONPATH": path},
        check=True,
    )  # fmt: skip
    return dump


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2_000, 20_000])
    parser.add_argument("--runs", type=int, default=3, help="imports per variant and size (3)")
    parser.add_argument("--baseline-src", type=Path, help="another checkout's src folder")
    args = parser.parse_args(argv)
    variants: dict[str, dict[str, str]] = {}
    if args.baseline_src:
        variants["baseline"] = {"PYTHONPATH": str(args.baseline_src.resolve())}
    variants["this checkout"] = {"PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    rows: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="aletheia-import-bench-") as folder:
        root = Path(folder)
        idle = {
            name: statistics.median(
                _child(env, ["--version"], root / "idle")[2] for _ in range(args.runs)
            )
            for name, env in variants.items()
        }
        for size in args.sizes:
            started = time.perf_counter()
            dump = _export(root, size)
            megabytes = dump.stat().st_size / 2**20
            print(
                f"built and exported {size:,} memories ({megabytes:,.1f} MiB) in"
                f" {time.perf_counter() - started:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            samples: dict[str, list[tuple[float, float, int]]] = {name: [] for name in variants}
            names = list(variants)
            for run in range(args.runs):  # interleaved, in turn first
                for name in names[run % 2 :] + names[: run % 2]:
                    target = root / f"import-{size}-{run}-{name.replace(' ', '-')}"
                    samples[name].append(
                        _child(variants[name], ["import", "--no-progress", str(dump)], target)
                    )
            for name in names:
                seconds = statistics.median(s for s, _, _ in samples[name])
                cpu = statistics.median(c for _, c, _ in samples[name])
                peak = statistics.median(kib for _, _, kib in samples[name])
                rows.append(
                    (
                        f"{size:,}",
                        f"{megabytes:,.1f}",
                        name,
                        f"{peak / 1024:,.1f}",
                        f"{(peak - idle[name]) / 1024:,.1f}",
                        f"{seconds:,.2f}",
                        f"{cpu:,.2f}",
                    )
                )
    print("| memories | export MiB | code | peak RSS MiB | above idle MiB | wall s | CPU s |")
    print("|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {' | '.join(row)} |")
    for name, kib in idle.items():
        print(f"\nidle CLI ({name}): {kib / 1024:,.1f} MiB", end="")
    print()


if __name__ == "__main__":
    main()
