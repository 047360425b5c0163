"""The redaction benchmark cannot rot: ``bench/redaction_bench.py --quick`` prints its table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "redaction_bench.py"


def test_quick_redaction_benchmark_prints_speed_adversarial_and_corpus_rows() -> None:
    result = subprocess.run(
        [sys.executable, str(BENCH), "--quick"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    table = result.stdout
    assert "| aletheia: 1,000-char note, p50 |" in table
    assert "| aletheia: 20,000-char note, p50 |" in table
    assert "| aletheia: 1,000-char Cyrillic and Greek note, p50 |" in table
    assert "adversarial 20,000-char inputs" in table
    assert "| aletheia: recall on " in table
    assert "| aletheia: innocent texts changed, of " in table
