"""CLI fixtures: an isolated HOME with a project folder as the working directory."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from aletheia_mem.cli.main import cli


@dataclass
class Workspace:
    home: Path
    project: Path
    data_dir: Path


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    """HOME, XDG folders and the store in tmp_path; the cwd is a git repo named ``shop``."""
    home = tmp_path / "home"
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True)
    for name in list(os.environ):
        if name.startswith("ALETHEIA_") or name in ("CODEX_HOME", "XDG_CONFIG_HOME"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.chdir(project)
    return Workspace(home=home, project=project, data_dir=home / ".aletheia")


Invoke = Callable[..., Result]


@pytest.fixture
def run(workspace: Workspace) -> Invoke:
    """``run("search", "pnpm")``: the real CLI in process, exceptions not swallowed."""

    def invoke(*args: str, input: str | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)

    return invoke


def json_of(result: Result) -> Any:
    return json.loads(result.stdout)
