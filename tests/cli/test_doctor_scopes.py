"""doctor reports the entry each host would use: Claude Code's local scope (``projects[<project
folder>]`` of ``~/.claude.json``) before the project's and the user's, entries the host does not
start (disabled, or shadowed by another scope's), the store an entry's server uses (never made by
doctor), and a project file that is the user file once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem import __version__
from aletheia_mem.tools.registry import TOOLS
from tests.cli.conftest import Invoke, Workspace, json_of

ANSWERS = f"Aletheia {__version__} answers (13 tools)"


def _checks(run: Invoke, host: str) -> tuple[int, list[dict[str, Any]]]:
    result = run("doctor", "--json")
    return result.exit_code, [c for c in json_of(result)["hosts"] if c["host"] == host]


def _claude_json(workspace: Workspace) -> dict[str, Any]:
    return json.loads((workspace.home / ".claude.json").read_text(encoding="utf-8"))


def _write_claude_json(workspace: Workspace, document: dict[str, Any]) -> None:
    (workspace.home / ".claude.json").write_text(json.dumps(document), encoding="utf-8")


def test_a_broken_local_entry_shadowing_a_working_user_one_is_what_claude_code_uses(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--write")
    document = _claude_json(workspace)
    broken = {"type": "stdio", "command": str(workspace.home / "gone" / "aletheia-mcp")}
    document["projects"] = {str(workspace.project): {"mcpServers": {"aletheia": broken}}}
    _write_claude_json(workspace, document)
    code, checks = _checks(run, "claude-code")
    assert code == 1
    found = {c["scope"]: (c["status"], c["detail"]) for c in checks}
    assert found == {
        "user": (
            "shadowed",
            "not used: Claude Code starts the local-scope entry, which comes first",
        ),
        "local": (
            "broken",
            f"{broken['command']} does not exist; fix the entry, or run"
            f" `claude mcp remove aletheia -s local` in {workspace.project}",
        ),
    }
    line = next(text for text in run("doctor").stdout.splitlines() if " local " in text)
    assert line.split()[:3] == ["claude-code", "local", "BROKEN"]


def test_a_working_local_only_entry_is_checked_not_called_missing(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--write")
    document = _claude_json(workspace)
    entry = document.pop("mcpServers")["aletheia"]
    document["projects"] = {str(workspace.project): {"mcpServers": {"aletheia": entry}}}
    _write_claude_json(workspace, document)
    code, checks = _checks(run, "claude-code")
    found = {c["scope"]: (c["status"], c["detail"]) for c in checks}
    assert found == {"user": ("not-configured", "no aletheia entry"), "local": ("ok", ANSWERS)}
    assert code == 0


def test_an_entry_disabled_in_claude_code_s_project_settings_is_disabled(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    run("install", "claude-code", "--write")
    document = _claude_json(workspace)
    document["projects"] = {str(workspace.project): {"disabledMcpServers": ["aletheia"]}}
    _write_claude_json(workspace, document)
    _, [check] = _checks(run, "claude-code")
    assert check["status"] == "disabled"
    assert check["detail"].startswith("disabled in this project (disabledMcpServers")


@pytest.mark.parametrize("host", ["opencode", "codex"])
def test_an_entry_switched_off_is_disabled_not_ok(
    run: Invoke, workspace: Workspace, host: str
) -> None:
    run("save", "a first memory")
    run("install", host, "--write")
    if host == "opencode":
        path = workspace.home / ".config" / "opencode" / "opencode.json"
        document = json.loads(path.read_text(encoding="utf-8"))
        document["mcp"]["aletheia"]["enabled"] = False
        path.write_text(json.dumps(document), encoding="utf-8")
        title = "OpenCode"
    else:
        path = workspace.home / ".codex" / "config.toml"
        text = path.read_text(encoding="utf-8")
        path.write_text(
            text.replace("[mcp_servers.aletheia]\n", "[mcp_servers.aletheia]\nenabled = false\n"),
            encoding="utf-8",
        )
        title = "Codex"
    code, [check] = _checks(run, host)
    assert (check["status"], check["detail"]) == (
        "disabled",
        f"disabled: its enabled is false, so {title} does not start it",
    )
    assert code == 0


def _cursor_data_dir(workspace: Workspace, folder: Path) -> None:
    path = workspace.home / ".cursor" / "mcp.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["mcpServers"]["aletheia"]["env"]["ALETHEIA_DATA_DIR"] = str(folder)
    path.write_text(json.dumps(document), encoding="utf-8")


def test_an_entry_whose_store_does_not_exist_is_not_started_and_no_store_is_made(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    run("save", "a first memory")
    run("install", "cursor", "--write")
    elsewhere = tmp_path / "nowhere"
    _cursor_data_dir(workspace, elsewhere)
    code, [check] = _checks(run, "cursor")
    store = elsewhere / "aletheia.db"
    assert (check["status"], check["store"]) == ("warning", str(store))
    assert check["detail"] == (
        f"not started: its store {store} does not exist and is not the CLI's"
        f" ({workspace.data_dir / 'aletheia.db'}); the server would make a new, empty store"
        " there, and the tool would not see the CLI's memories"
    )
    assert code == 0
    assert not elsewhere.exists()


def test_an_entry_before_the_first_save_is_started_on_a_throwaway_store(
    run: Invoke, workspace: Workspace
) -> None:
    """Right after install, before any save, the entry is checked all the same (it reported a
    warning, not started) and no store is made where the first save will make it."""
    run("install", "cursor", "--write")
    code, [check] = _checks(run, "cursor")
    store = workspace.data_dir / "aletheia.db"
    assert (code, check["status"], check["store"]) == (0, "ok", str(store))
    assert check["detail"] == (
        f"Aletheia {__version__} answers ({len(TOOLS)} tools) (on a throwaway store: {store} is"
        " made at the first save)"
    )
    assert not workspace.data_dir.exists()


def test_an_entry_using_another_store_than_the_cli_says_so(
    run: Invoke, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(other))
    run("save", "a memory in another store")
    monkeypatch.delenv("ALETHEIA_DATA_DIR")
    run("save", "a first memory")
    run("install", "cursor", "--write")
    _cursor_data_dir(workspace, other)
    code, [check] = _checks(run, "cursor")
    assert (check["status"], check["store"]) == ("warning", str(other / "aletheia.db"))
    assert check["detail"] == (
        f"{ANSWERS}, but it uses the store {other / 'aletheia.db'}, not the CLI's"
        f" ({workspace.data_dir / 'aletheia.db'}): the tool and the CLI see different memories"
    )
    assert code == 0


def test_run_from_home_a_project_file_that_is_the_user_file_is_one_row(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    monkeypatch.chdir(workspace.home)
    for host in ("codex", "cursor", "gemini-cli"):
        run("install", host, "--write")
    data = json_of(run("doctor", "--json"))
    rows = [(c["host"], c["scope"]) for c in data["hosts"]]
    for host in ("codex", "cursor", "gemini-cli"):
        assert rows.count((host, "user")) == 1 and (host, "project") not in rows
