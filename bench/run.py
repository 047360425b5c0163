"""Benchmarks of the core stdio server: ``make bench`` or ``python bench/run.py [--quick]``.

Prints a markdown table (measurement, target, pass/fail) and writes the figures to
``bench/results/latest.json``. Every figure comes from the real ``aletheia-mcp`` console script
over stdio on a real SQLite store in a temp folder, except rows that say "in process".
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from cases import BENCHES, COLD_START, FULL, QUICK, Row, Workspace, import_offenders

RESULTS = Path(__file__).resolve().parent / "results" / "latest.json"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    parser.add_argument(
        "--only", choices=sorted(BENCHES), action="append", help="run only this benchmark"
    )
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON")
    parser.add_argument(
        "--importtime", action="store_true", help="list slow imports even when on target"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    return parser.parse_args(argv)


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.2f}"


def _target(row: Row) -> str:
    if row.target is None:
        return ""
    return f"{'>=' if row.higher_is_better else '<='} {_number(row.target)} {row.unit}"


def _result(row: Row, quick: bool) -> str:
    if row.passed is None:
        return "info"
    verdict = "pass" if row.passed else "FAIL"
    return f"{verdict} (quick)" if quick else verdict


def markdown_table(rows: list[Row], quick: bool) -> str:
    lines = [
        "| Benchmark | Scale | Metric | Measured | Target | Result |",
        "|---|---|---|---:|---|---|",
    ]
    lines += [
        f"| {row.bench} | {row.scale} | {row.metric} | {_number(row.value)} {row.unit}"
        f" | {_target(row)} | {_result(row, quick)} |"
        for row in rows
    ]
    return "\n".join(lines)


def environment() -> dict[str, object]:
    return {
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "load_average": list(os.getloadavg()),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = QUICK if args.quick else FULL
    names = [name for name in BENCHES if not args.only or name in args.only]
    rows: list[Row] = []
    offenders: list[tuple[str, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="aletheia-bench-") as root:
        work = Workspace(Path(root))
        for name in names:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            rows += BENCHES[name](work, sizes)
        slow_start = any(r.bench == COLD_START and r.passed is False for r in rows)
        if args.importtime or slow_start:
            offenders = import_offenders(work)
    table = markdown_table(rows, args.quick)
    print(table)
    print(
        f"\nPython {platform.python_version()}, SQLite {sqlite3.sqlite_version},"
        f" {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at the end"
        " (other processes on the machine skew timings)."
    )
    if offenders:
        print("\nSlowest imports on the stdio start path (python -X importtime, self time):")
        for module, self_ms, cumulative_ms in offenders:
            print(f"- {module}: {self_ms:.1f} ms self, {cumulative_ms:.1f} ms cumulative")
    report = {
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "quick": args.quick,
        "environment": environment(),
        "results": [{**asdict(row), "passed": row.passed} for row in rows],
        "slowest_imports": [
            {"module": m, "self_ms": s, "cumulative_ms": c} for m, s, c in offenders
        ],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"\nFigures written to {args.out}", file=sys.stderr)
    missed = [row for row in rows if row.passed is False]
    return 1 if args.strict and missed else 0


if __name__ == "__main__":
    sys.exit(main())
