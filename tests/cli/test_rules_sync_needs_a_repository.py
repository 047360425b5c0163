"""``aletheia rules sync`` writes into a git repository's instruction files: a folder that is in
none is refused as bad input (exit code 2), said so, and left as it was. Real folders, one made
a repository by ``git init``, and the CLI as a process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e


def _aletheia(
    tmp_path: Path, cwd: Path, *args: str, **env: str
) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    return subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        cwd=cwd,
        env={**clean, "HOME": str(home), "NO_COLOR": "1", **env},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_a_folder_outside_any_repository_is_refused_and_left_empty(tmp_path: Path) -> None:
    plain, repository = tmp_path / "notes", tmp_path / "shop"
    plain.mkdir()
    repository.mkdir()
    subprocess.run(["git", "init", "-q", str(repository)], check=True, timeout=60)
    assert _aletheia(tmp_path, repository, "rules", "add", "Run the tests").returncode == 0
    said = f"{plain} is not in a git repository: rules sync writes the rules into a repository's"

    for args, env in (
        ((), {}),
        (("--dry-run",), {}),
        (("--dir", str(plain)), {}),
        ((), {"ALETHEIA_CWD": str(plain)}),
    ):
        where = tmp_path if "--dir" in args or env else plain
        done = _aletheia(tmp_path, where, "rules", "sync", *args, **env)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert said in done.stderr and done.stdout == ""
        assert list(plain.iterdir()) == []

    written = _aletheia(tmp_path, repository, "rules", "sync")
    assert written.returncode == 0, written.stderr
    assert "- Always: Run the tests\n" in (repository / "AGENTS.md").read_text()
    assert "- Always: Run the tests\n" in (repository / "CLAUDE.md").read_text()
