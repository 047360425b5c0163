"""``aletheia uninstall``: a dry run, then only what install wrote taken out (the files as they
were before it, byte for byte), a backup of each file, a second run with nothing to remove, and
a server named aletheia that is not Aletheia's left alone unless --force."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.conftest import Invoke, Workspace, json_of

CLAUDE_JSON = (
    '{\n  "numStartups": 3,\n  "mcpServers": {\n'
    '    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/"}\n  }\n}\n'
)
CLAUDE_SETTINGS = (
    '{\n  "model": "opus",\n  "hooks": {\n    "PostToolUse": [\n'
    '      {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}\n'
    "    ]\n  }\n}\n"
)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(path.name + ".aletheia-backup-*"))


def test_claude_code_entry_and_hooks_come_out_leaving_the_files_as_they_were(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".claude.json"
    settings = workspace.home / ".claude" / "settings.json"
    _write(config, CLAUDE_JSON)
    _write(settings, CLAUDE_SETTINGS)
    assert run("install", "claude-code", "--hooks", "--write").exit_code == 0
    installed = config.read_text(encoding="utf-8"), settings.read_text(encoding="utf-8")

    dry = run("uninstall", "claude-code")
    assert dry.exit_code == 0, dry.stderr
    assert f"Would remove the aletheia entry from {config}:" in dry.stdout
    assert '-    "aletheia": {' in dry.stdout
    assert f"Aletheia's hooks in {settings} stay; add --hooks to remove them too." in dry.stdout
    assert "Run again with --write" in dry.stdout
    assert (config.read_text(encoding="utf-8"), settings.read_text(encoding="utf-8")) == installed

    result = run("uninstall", "claude-code", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Removed the aletheia entry from {config}." in result.stdout
    assert f"Removed Aletheia's hooks from {settings}." in result.stdout
    assert config.read_text(encoding="utf-8") == CLAUDE_JSON
    assert settings.read_text(encoding="utf-8") == CLAUDE_SETTINGS
    assert _backups(config)[-1].read_text(encoding="utf-8") == installed[0]
    assert _backups(settings)[-1].read_text(encoding="utf-8") == installed[1]

    again = run("uninstall", "claude-code", "--hooks", "--write")
    assert again.exit_code == 0
    assert f"{config} has no aletheia entry; nothing to remove." in again.stdout
    assert f"{settings} has no hooks of Aletheia's; nothing to remove." in again.stdout
    assert len(_backups(config)) == 2  # the install's and the uninstall's


def test_without_hooks_only_the_entry_goes(run: Invoke, workspace: Workspace) -> None:
    assert run("install", "codex", "--hooks", "--write").exit_code == 0
    hooks = workspace.home / ".codex" / "hooks.json"
    before = hooks.read_text(encoding="utf-8")
    result = run("uninstall", "codex", "--write")
    assert result.exit_code == 0, result.stderr
    assert not (workspace.home / ".codex" / "config.toml").exists()  # install made it
    assert hooks.read_text(encoding="utf-8") == before
    assert "add --hooks to remove them too" in result.stdout


def test_a_server_named_aletheia_that_is_not_ours_needs_force(
    run: Invoke, workspace: Workspace
) -> None:
    config = workspace.home / ".cursor" / "mcp.json"
    original = '{"mcpServers": {"aletheia": {"command": "node", "args": ["notes.js"]}, "x": {}}}'
    _write(config, original)
    result = run("uninstall", "cursor", "--write")
    assert result.exit_code == 4
    assert "not Aletheia's" in result.stderr and "--force" in result.stderr
    assert config.read_text(encoding="utf-8") == original
    forced = run("uninstall", "cursor", "--write", "--force")
    assert forced.exit_code == 0, forced.stderr
    assert config.read_text(encoding="utf-8") == '{"mcpServers": {"x": {}}}'


def test_codex_toml_comes_back_byte_for_byte(run: Invoke, workspace: Workspace) -> None:
    config = workspace.home / ".codex" / "config.toml"
    original = '# mine\nmodel = "gpt-5"\n\n[mcp_servers.docs]\ncommand = "docs-mcp"  # pinned\n'
    _write(config, original)
    assert run("install", "codex", "--write").exit_code == 0
    assert run("uninstall", "codex", "--write").exit_code == 0
    assert config.read_text(encoding="utf-8") == original


def test_gemini_entry_and_hooks_go_in_one_write_keeping_the_users(
    run: Invoke, workspace: Workspace
) -> None:
    settings = workspace.home / ".gemini" / "settings.json"
    shell = {"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "audit"}]}
    original = json.dumps({"ui": {"theme": "GitHub"}, "hooks": {"AfterTool": [shell]}}, indent=2)
    _write(settings, original + "\n")
    assert run("install", "gemini-cli", "--hooks", "--write").exit_code == 0
    result = run("uninstall", "gemini-cli", "--hooks", "--write", "--json")
    assert result.exit_code == 0, result.stderr
    [change] = json_of(result)["changes"]
    assert change["action"] == "remove" and change["backup"]
    assert settings.read_text(encoding="utf-8") == original + "\n"  # mcpServers went too


def test_opencode_plugin_is_deleted_and_a_users_file_kept(
    run: Invoke, workspace: Workspace
) -> None:
    assert run("install", "opencode", "--hooks", "--write").exit_code == 0
    plugin = workspace.home / ".config" / "opencode" / "plugins" / "aletheia.js"
    dry = run("uninstall", "opencode", "--hooks")
    assert f"Would delete {plugin} (the capture plugin)." in dry.stdout
    assert plugin.exists()
    result = run("uninstall", "opencode", "--hooks", "--write")
    assert result.exit_code == 0, result.stderr
    assert f"Deleted {plugin} (the capture plugin)." in result.stdout
    assert not plugin.exists()
    [backup] = _backups(plugin)
    assert "aletheia-hook plugin" in backup.read_text(encoding="utf-8")

    _write(plugin, "export default async () => ({});\n")
    refused = run("uninstall", "opencode", "--hooks", "--write")
    assert refused.exit_code == 4
    assert plugin.exists()


def test_an_unknown_host_option_mirror_install(run: Invoke, workspace: Workspace) -> None:
    result = run("uninstall", "windsurf", "--hooks")
    assert result.exit_code == 2
    assert "no capture hooks" in result.stderr
    assert run("uninstall", "windsurf", "--scope", "project").exit_code == 2


def test_claude_code_s_local_scope_entry_is_named_with_how_to_remove_it(
    run: Invoke, workspace: Workspace
) -> None:
    path = workspace.home / ".claude.json"
    entry = {"type": "stdio", "command": "aletheia-mcp", "env": {"ALETHEIA_TOOL": "claude-code"}}
    document = {"projects": {str(workspace.project): {"mcpServers": {"aletheia": entry}}}}
    path.write_text(json.dumps(document), encoding="utf-8")
    result = run("uninstall", "claude-code", "--write")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        f"{path} has no aletheia entry; nothing to remove.",
        f"Claude Code's local scope for {workspace.project} (projects in {path}) still has an"
        " aletheia entry, which Claude Code starts first; remove it with `claude mcp remove"
        f" aletheia -s local` run in {workspace.project}.",
    ]
    assert json.loads(path.read_text(encoding="utf-8")) == document
    other = {"projects": {"/elsewhere": {"mcpServers": {"aletheia": entry}}}}
    path.write_text(json.dumps(other), encoding="utf-8")
    assert "local scope" not in run("uninstall", "claude-code", "--write").stdout
