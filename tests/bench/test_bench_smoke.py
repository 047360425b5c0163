"""The benchmark cannot rot: ``bench/run.py --quick`` runs end to end and prints its table."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"
BENCHES = (
    "stdio cold start",
    "save_memory over stdio",
    "search over stdio",
    "session_start_context over stdio",
)


def run_bench(script: Path, *args: str) -> list[str]:
    """The table lines a benchmark script prints; it must exit 0."""
    completed = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=90,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    return completed.stdout.splitlines()


def test_quick_benchmark_prints_the_table_and_writes_the_figures(tmp_path: Path) -> None:
    out = tmp_path / "latest.json"
    lines = run_bench(RUN, "--quick", "--out", str(out))
    assert lines[0] == "| Benchmark | Scale | Metric | Measured | Target | Result |"
    for bench in BENCHES:
        assert any(line.startswith(f"| {bench} |") for line in lines), bench
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["quick"] is True
    rows = report["results"]
    assert {row["bench"] for row in rows} >= set(BENCHES)
    assert all(row["value"] > 0 for row in rows)
    judged = [row for row in rows if row["target"] is not None]
    assert sorted(row["bench"] for row in judged) == sorted(BENCHES)
    assert all(row["passed"] in (True, False) for row in judged)


def test_startup_benchmark_prints_a_row_per_command() -> None:
    lines = run_bench(ROOT / "bench" / "startup_bench.py", "--runs", "1")
    assert lines[0] == "| Command | Median ms | p95 ms | Target |"
    names = [line.split("|")[1].strip() for line in lines[2:]]
    assert names == [
        "python -c pass (the floor)",
        "aletheia --version",
        "aletheia --help",
        "aletheia-mcp to first reply",
        "aletheia mcp to first reply",
        "aletheia-hook user-prompt (one call)",
    ]
    assert all(line.split("|")[2].strip().isdigit() for line in lines[2:])


def test_save_stalls_benchmark_prints_a_row_per_measurement() -> None:
    lines = run_bench(
        ROOT / "bench" / "save_stalls.py", "--memories", "200", "--saves", "50", "--runs", "1"
    )
    assert lines[0] == "| Measurement | this checkout |"
    names = [line.split("|")[1].strip() for line in lines[2:]]
    assert names == [
        "mean save ms",
        "save p50 ms",
        "checkpointing saves",
        "checkpointing save median ms",
        "checkpointing saves' share of the time",
    ]


def test_lockstep_benchmark_prints_both_checkouts_and_their_ratio() -> None:
    lines = run_bench(
        ROOT / "bench" / "stdio_lockstep.py",
        *("--baseline-src", str(ROOT / "src"), "--memories", "200", "--rounds", "2"),
        *("--searches", "5", "--saves", "10"),
    )
    assert lines[0] == "| Measurement | this checkout | baseline | Ratio |"
    names = [line.split("|")[1].strip() for line in lines[2:-1]]
    assert names[:2] == ["saves/s", "save mean ms"]
    assert "search p50 ms" in names
    assert "first save after start ms" in names
    assert lines[-1].startswith("mean save ratio per round: ")
    assert len(lines[-1].split(":")[1].split(",")) == 2


def test_sync_timeline_benchmark_prints_both_checkouts_and_their_ratio() -> None:
    lines = run_bench(
        ROOT / "bench" / "sync_timeline_bench.py",
        *("--baseline-src", str(ROOT / "src"), "--versions", "50", "--rounds", "1"),
    )
    assert lines[0] == "| 50 versions of one fact, applied by sync | seconds (median) |"
    assert [line.split("|")[1].strip() for line in lines[2:]] == [
        "this checkout",
        "baseline",
        "this checkout / baseline",
    ]
