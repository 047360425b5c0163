"""README's exit-code table is the source of truth; docs/troubleshooting.md repeats it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
HEADER = "| exit code | meaning |"


def _table(path: Path) -> list[str]:
    """The table's rows, each link as its text alone (the two files link from different places)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(HEADER)
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        rows.append(re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", line))
    return rows


def test_the_troubleshooting_page_has_the_readme_exit_code_table() -> None:
    readme = _table(ROOT / "README.md")
    assert len(readme) == 13  # the header, the rule and the codes 0 to 10
    assert _table(ROOT / "docs" / "troubleshooting.md") == readme


def test_the_table_tells_a_partial_show_and_a_closed_pipe() -> None:
    rows = {row.split(" | ", 1)[0]: row for row in _table(ROOT / "README.md")[2:]}
    assert "`show 1 2`" in rows["| 0"] and "`show`" in rows["| 3"]
    assert "closed pipe" in rows["| 1"]
