"""The stdio server's start path stays free of the CLI's dependencies."""

from __future__ import annotations

import subprocess
import sys


def test_aletheia_mcp_does_not_import_click_or_tomlkit() -> None:
    probe = (
        "import sys, aletheia_mem.server.stdio; "
        "heavy = ('click', 'tomlkit', 'aletheia_mem.cli.main'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    assert result.stdout.strip() == "[]"
