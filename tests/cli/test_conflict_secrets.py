"""A conflict names the other server's entry without its secrets: the values of its headers and
its environment are masked (their names kept), and a token elsewhere in it (its args, its URL)
is redacted, on stderr and in --json alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace

TOKEN = "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
PASSWORD = "hunter2-Very-Secret"


def _cursor(workspace: Workspace, entry: dict[str, object]) -> Path:
    path = workspace.home / ".cursor" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_remote_entrys_bearer_token_is_not_shown(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}", "X-Team": "shop"}
    path = _cursor(workspace, {"url": f"https://bob:{PASSWORD}@x/mcp", "headers": headers})
    for extra in ([], ["--json"]):
        result = run(command, "cursor", "--write", *extra)
        assert result.exit_code == 4
        said = result.stdout + result.stderr
        assert TOKEN not in said and PASSWORD not in said and "shop" not in said
        assert '"headers": {"Authorization": "***", "X-Team": "***"}' in (
            json.loads(result.stdout)["error"]["message"] if extra else result.stderr
        )
    assert TOKEN in path.read_text(encoding="utf-8")  # left alone


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_stdio_entrys_environment_and_args_keep_their_secrets(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    entry = {"command": "notes-mcp", "args": ["--token", TOKEN], "env": {"API_KEY": PASSWORD}}
    _cursor(workspace, entry)
    result = run(command, "cursor", "--write")
    assert result.exit_code == 4
    assert TOKEN not in result.stderr and PASSWORD not in result.stderr
    assert '"env": {"API_KEY": "***"}' in result.stderr
    assert '"command": "notes-mcp"' in result.stderr


SECRET_ARGS = {
    "--token": "Tok3nValueLongEnough123",
    "--password": "Pa55wordLongEnough123",
    "--secret": "S3cretValueLongEnough1",
    "--client-secret": "CliSecLongEnough12345",
    "--auth-token": "AuthTokLongEnough1234",
    "--access-token": "AccTokLongEnough12345",
    "--api-token": "ApiTokLongEnough12345",
    "--github-token": "GhTokLongEnough123456",
    "-p": "ShortPw99x",
    "--api-key": "K123456789012345",
}


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_the_value_after_a_secret_option_in_args_is_masked(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    args = [part for option, value in SECRET_ARGS.items() for part in (option, value)]
    args += ["--db-password=Eq5ecretLongEnough99", "--verbose", "plain-value"]
    _cursor(workspace, {"command": "npx", "args": args})
    for extra in ([], ["--json"]):
        result = run(command, "cursor", "--write", *extra)
        assert result.exit_code == 4
        said = result.stdout + result.stderr
        for value in [*SECRET_ARGS.values(), "Eq5ecretLongEnough99"]:
            assert value not in said, value
        assert '"--token", "***"' in said and '"-p", "***"' in said
        assert '"--db-password=***", "--verbose", "plain-value"' in said


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_a_codex_entrys_token_in_args_is_masked(
    run: Invoke, workspace: Workspace, command: str
) -> None:
    path = workspace.home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        '[mcp_servers.aletheia]\ncommand = "npx"\nargs = ["--token","tomlTOKEN12345"]\n',
        encoding="utf-8",
    )
    for extra in ([], ["--json"]):
        result = run(command, "codex", "--write", *extra)
        assert result.exit_code == 4
        said = result.stdout + result.stderr
        assert "tomlTOKEN12345" not in said and '"--token", "***"' in said
    assert "tomlTOKEN12345" in path.read_text(encoding="utf-8")  # left alone
