"""``aletheia install opencode --hooks``: OpenCode runs no command hooks, so its capture is a
plugin, ``aletheia.js``, in the ``plugins`` folder OpenCode 1.18 loads (``~/.config/opencode``;
a project's ``.opencode``); the MCP entry and the plugin are written both or neither, and a
plugin of the user's is never replaced."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli.conftest import Invoke, Workspace, json_of

HOOK_SCRIPT = Path(sys.executable).parent / "aletheia-hook"
MARK = "// aletheia-hook plugin: written by `aletheia install opencode --hooks`"


def _config(workspace: Workspace) -> Path:
    return workspace.home / ".config" / "opencode"


def _plugin(workspace: Workspace) -> Path:
    return _config(workspace) / "plugins" / "aletheia.js"


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_the_plugin_goes_into_the_plugin_folder_beside_opencode_json(
    run: Invoke, workspace: Workspace
) -> None:
    folder = _config(workspace)
    (folder / "plugins").mkdir(parents=True)
    users = "export default async () => ({})\n"
    (folder / "plugins" / "mine.js").write_text(users, encoding="utf-8")
    result = run("install", "opencode", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry in {folder / 'opencode.json'}." in result.stdout
    assert f"Added the capture plugin in {_plugin(workspace)}." in result.stdout
    config = json.loads((folder / "opencode.json").read_text(encoding="utf-8"))
    assert config["mcp"]["aletheia"]["environment"]["ALETHEIA_TOOL"] == "opencode"
    text = _plugin(workspace).read_text(encoding="utf-8")
    assert text.startswith(MARK)
    assert f"const PROGRAM = {json.dumps([str(HOOK_SCRIPT)])};" in text
    env = {"ALETHEIA_DATA_DIR": str(workspace.data_dir), "ALETHEIA_TOOL": "opencode"}
    assert f"const ENV = {json.dumps(env)};" in text
    assert 'const FILE_TOOLS = ["write", "edit", "apply_patch"];' in text
    for hook in ('"chat.message"', '"tool.execute.after"', '"experimental.chat.system.transform"'):
        assert hook in text
    assert (folder / "plugins" / "mine.js").read_text(encoding="utf-8") == users
    assert sorted(path.name for path in (folder / "plugins").iterdir()) == [
        "aletheia.js",
        "mine.js",
    ]


def test_a_second_install_changes_nothing(run: Invoke, workspace: Workspace) -> None:
    run("install", "opencode", "--hooks", "--write")
    before = _plugin(workspace).read_text(encoding="utf-8")
    again = run("install", "opencode", "--hooks", "--write")
    assert again.exit_code == 0, again.stderr
    assert f"{_plugin(workspace)} already has the capture plugin; nothing to change." in (
        again.stdout
    )
    assert _plugin(workspace).read_text(encoding="utf-8") == before
    assert _backups(_plugin(workspace)) == []


def test_an_earlier_plugin_of_ours_is_replaced_with_a_backup(
    run: Invoke, workspace: Workspace
) -> None:
    _plugin(workspace).parent.mkdir(parents=True)
    older = f"{MARK}; a later install replaces this file.\nconst PROGRAM = ['old'];\n"
    _plugin(workspace).write_text(older, encoding="utf-8")
    result = run("install", "opencode", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Replaced the capture plugin in {_plugin(workspace)}." in result.stdout
    assert str(HOOK_SCRIPT) in _plugin(workspace).read_text(encoding="utf-8")
    [backup] = _backups(_plugin(workspace))
    assert backup.read_text(encoding="utf-8") == older


def test_a_users_own_aletheia_js_is_refused_and_neither_file_is_written(
    run: Invoke, workspace: Workspace
) -> None:
    _plugin(workspace).parent.mkdir(parents=True)
    users = "export default async () => ({ event: async () => {} })\n"
    _plugin(workspace).write_text(users, encoding="utf-8")
    result = run("install", "opencode", "--hooks", "--write")
    assert result.exit_code == 4  # a conflict, as uninstall refuses the same file
    assert f"{_plugin(workspace)} is not Aletheia's plugin" in result.stderr
    assert _plugin(workspace).read_text(encoding="utf-8") == users
    assert not (_config(workspace) / "opencode.json").exists()
    as_json = run("install", "opencode", "--hooks", "--json")
    assert as_json.exit_code == 4
    assert json_of(as_json)["error"]["code"] == "conflict"
    assert run("uninstall", "opencode", "--hooks", "--write").exit_code == 4


def test_the_dry_run_shows_the_plugin_and_writes_nothing(run: Invoke, workspace: Workspace) -> None:
    result = run("install", "opencode", "--hooks")
    assert result.exit_code == 0, result.stderr
    assert f"Would add the capture plugin in {_plugin(workspace)}:" in result.stdout
    assert f"+{MARK}" in result.stdout
    assert "Run again with --write" in result.stdout
    assert not _config(workspace).exists()


def test_project_scope_puts_the_plugin_in_the_projects_opencode_folder(
    run: Invoke, workspace: Workspace
) -> None:
    data = json_of(run("install", "opencode", "--hooks", "--scope", "project", "--write", "--json"))
    plugin = workspace.project / ".opencode" / "plugins" / "aletheia.js"
    assert [(c["path"], c["what"], c["action"]) for c in data["changes"]] == [
        (str(workspace.project / "opencode.json"), "the aletheia entry", "add"),
        (str(plugin), "the capture plugin", "add"),
    ]
    assert plugin.read_text(encoding="utf-8").startswith(MARK)
    assert not _config(workspace).exists()


def test_a_different_aletheia_server_stops_the_plugin_too(
    run: Invoke, workspace: Workspace
) -> None:
    _config(workspace).mkdir(parents=True)
    original = json.dumps({"mcp": {"aletheia": {"type": "local", "command": ["other"]}}})
    (_config(workspace) / "opencode.json").write_text(original, encoding="utf-8")
    result = run("install", "opencode", "--hooks", "--write")
    assert result.exit_code == 4
    assert 'already has a different server named "aletheia"' in result.stderr
    assert not _plugin(workspace).exists()


def test_doctor_finds_the_opencode_plugin(run: Invoke, workspace: Workspace) -> None:
    run("install", "opencode", "--hooks", "--write", "--scope", "project")
    data = json_of(run("doctor", "--json"))
    assert data["hooks"]["opencode"] == {"user": False, "project": True}
    line = next(line for line in run("doctor").stdout.splitlines() if line.startswith("Hooks"))
    assert line.endswith("; opencode: project scope; cursor: not installed")


def test_an_opencode_jsonc_file_is_used_when_it_is_the_one_there(
    run: Invoke, workspace: Workspace
) -> None:
    config = _config(workspace)
    config.mkdir(parents=True)
    original = (
        '{\n  // my settings\n  "theme": "tokyonight",\n  "mcp": {\n'
        '    "docs": {"type": "local", "command": ["docs"]},\n  },\n}\n'
    )
    (config / "opencode.jsonc").write_text(original, encoding="utf-8")
    result = run("install", "opencode", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Added the aletheia entry in {config / 'opencode.jsonc'}." in result.stdout
    assert not (config / "opencode.json").exists()
    text = (config / "opencode.jsonc").read_text(encoding="utf-8")
    assert text.startswith(original.split("  },\n}")[0])  # comment and trailing comma kept
    assert '"ALETHEIA_TOOL": "opencode"' in text
    assert _plugin(workspace).exists()
    assert "nothing to change" in run("install", "opencode", "--hooks", "--write").stdout
    assert run("uninstall", "opencode", "--hooks", "--write").exit_code == 0
    assert (config / "opencode.jsonc").read_text(encoding="utf-8") == original


def test_a_project_opencode_jsonc_is_used_too(run: Invoke, workspace: Workspace) -> None:
    (workspace.project / "opencode.jsonc").write_text("{\n  // team\n}\n", encoding="utf-8")
    assert run("install", "opencode", "--scope", "project", "--write").exit_code == 0
    assert not (workspace.project / "opencode.json").exists()
    text = (workspace.project / "opencode.jsonc").read_text(encoding="utf-8")
    assert text.startswith("{\n  // team\n") and '"aletheia"' in text
