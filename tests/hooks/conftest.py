"""Fixtures of the hook tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A home with the git work tree ``code/shop``, a data folder, and Claude Code as the tool."""
    home = tmp_path / "home"
    (home / "code" / "shop" / ".git").mkdir(parents=True)
    return {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),  # a worktree's sources, when tested
        "HOME": str(home),
        "ALETHEIA_DATA_DIR": str(home / ".aletheia"),
        "ALETHEIA_TOOL": "claude-code",
    }
