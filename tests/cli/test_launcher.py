"""From uvx's or pipx run's cache, connect and install write ``uvx aletheia-mem mcp`` (or
pipx's) instead of paths that the next cache clean deletes; a stable install keeps paths."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aletheia_mem
from aletheia_mem.cli.launcher import Launcher, temporary_launcher

SOURCE = Path(aletheia_mem.__file__).parents[1]
HOME = Path("/home/ada")


@pytest.mark.parametrize(
    ("prefix", "env", "kind"),
    [
        (HOME / ".cache/uv/archive-v0/Xy12ab", {}, "uvx"),
        (HOME / ".cache/uv/environments-v2/aletheia-mem-4f0c", {}, "uvx"),
        (Path("/srv/tools/archive-v0/Xy12ab"), {"UV_CACHE_DIR": "/srv/tools"}, "uvx"),
        (Path("/srv/tools/archive-v0/Xy12ab"), {}, None),
        (Path("/srv/cache/archive-v0/Xy12ab"), {}, "uvx"),
        (HOME / "xdg/uv/abc", {"XDG_CACHE_HOME": str(HOME / "xdg")}, "uvx"),
        (HOME / ".local/pipx/.cache/5b1f0f7e", {}, "pipx"),
        (HOME / ".cache/pipx/5b1f0f7e", {}, "pipx"),
        (Path("/opt/px/.cache/5b1f0f7e"), {"PIPX_HOME": "/opt/px"}, "pipx"),
        (HOME / ".local/share/uv/tools/aletheia-mem", {}, None),
        (HOME / ".local/pipx/venvs/aletheia-mem", {}, None),
        (HOME / "code/aletheia/.venv", {}, None),
        (HOME / "code/archive-v0/.venv", {}, None),
    ],
)  # fmt: skip
def test_run_once_caches_are_told_from_stable_installs(
    prefix: Path, env: dict[str, str], kind: str | None
) -> None:
    found = temporary_launcher(prefix, {"HOME": str(HOME), "PATH": "", **env})
    assert (found.kind if found else None) == kind


def test_the_launchers_start_the_package_by_name() -> None:
    assert Launcher("uvx", "uvx").command("mcp") == ["uvx", "aletheia-mem", "mcp"]
    assert Launcher("pipx", "/usr/bin/pipx").command("hook", "stop") == [
        "/usr/bin/pipx", "run", "--spec", "aletheia-mem", "aletheia-mem", "hook", "stop",
    ]  # fmt: skip


def make_environment(prefix: Path) -> Path:
    """A real Python environment at ``prefix`` that runs this checkout's Aletheia."""
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=60
    )
    site = next(prefix.glob("lib/python3*/site-packages"))
    paths = [str(SOURCE), *(p for p in sys.path if p.endswith("site-packages"))]
    (site / "aletheia-test.pth").write_text("\n".join(paths) + "\n", encoding="utf-8")
    return prefix / "bin" / "python"


def aletheia_from(python: Path, home: Path, *args: str, **env: str) -> Any:
    project = home / "code" / "shop"
    (project / ".git").mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [str(python), "-m", "aletheia_mem", *args],
        capture_output=True,
        text=True,
        cwd=project,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "ALETHEIA_DATA_DIR": str(home / "d"),
             **env},
        timeout=60,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_connect_from_uvx_cache_writes_uvx_aletheia_mem_mcp(tmp_path: Path) -> None:
    home = tmp_path / "home"
    python = make_environment(home / ".cache" / "uv" / "archive-v0" / "Xy12ab")
    shown = aletheia_from(python, home, "connect", "claude-code", "--json")
    assert shown["entry"] == {
        "type": "stdio",
        "command": "uvx",
        "args": ["aletheia-mem", "mcp"],
        "env": {"ALETHEIA_DATA_DIR": str(home / "d"), "ALETHEIA_TOOL": "claude-code"},
    }
    assert shown["command"].endswith("-- uvx aletheia-mem mcp")
    assert "uvx's cache" in shown["note"]


def test_install_from_pipx_run_writes_pipx_and_hooks_that_outlive_the_cache(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    python = make_environment(home / ".local" / "pipx" / ".cache" / "5b1f0f7e")
    aletheia_from(python, home, "install", "claude-code", "--hooks", "--write", "--json")
    entry = json.loads((home / ".claude.json").read_text(encoding="utf-8"))["mcpServers"]
    assert [entry["aletheia"]["command"], *entry["aletheia"]["args"]] == [
        "pipx", "run", "--spec", "aletheia-mem", "aletheia-mem", "mcp",
    ]  # fmt: skip
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    assert command.endswith("pipx run --spec aletheia-mem aletheia-mem hook session-start")
    again = aletheia_from(python, home, "install", "claude-code", "--hooks", "--json")
    assert [change["action"] for change in again["changes"]] == ["unchanged", "unchanged"]


def test_a_stable_install_keeps_absolute_paths(tmp_path: Path) -> None:
    home = tmp_path / "home"
    prefix = home / ".local" / "share" / "uv" / "tools" / "aletheia-mem"
    python = make_environment(prefix)
    shown = aletheia_from(python, home, "connect", "claude-code", "--json")
    assert shown["entry"]["command"] == str(python)
    assert shown["note"] is None
