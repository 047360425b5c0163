"""--json as a script reads it: one time format everywhere, and a change answered with the item
as its list shows it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from tests.cli.conftest import Invoke, Workspace, json_of

BIN = Path(sys.executable).parent
INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
TIME_KEYS = (
    "created_at",
    "updated_at",
    "dismissed_at",
    "valid_from",
    "valid_to",
    "recorded_at",
    "added_at",
    "last_confirmed_at",
    "last_used_at",
    "revoked_at",
    "at",
)


def _times(value: Any) -> list[Any]:
    """Every value under a time key, anywhere in ``value``."""
    if isinstance(value, list):
        return [time for item in value for time in _times(item)]
    if not isinstance(value, dict):
        return []
    found = [value[key] for key in TIME_KEYS if value.get(key) is not None]
    return found + [time for item in value.values() for time in _times(item)]


def test_every_time_in_json_is_a_utc_instant(run: Invoke, workspace: Workspace) -> None:
    hub = str(workspace.home / "hub.db")
    run("save", "Use pnpm, not npm", "--json")
    run("dismiss", "1")
    rule_id = json_of(run("rules", "add", "Run the tests", "--json"))["rule"]["id"]
    run("mcp-link", "create", "--projects", "shop", "--name", "ci", "--hub-db", hub)
    answers = [
        json_of(run("save", "Staging needs the VPN", "--json")),
        json_of(run("search", "pnpm", "-p", "*", "--json")),
        json_of(run("show", "1", "--json")),
        json_of(run("timeline", "2", "--json")),
        json_of(run("facts", "add", "api", "db", "pg", "--valid-from", "0001-01-01", "--json")),
        json_of(run("facts", "add", "api", "db", "pg 16", "--json")),
        json_of(run("facts", "history", "api", "--all", "--json")),
        json_of(run("rules", "list", "--json")),
        json_of(run("rules", "confirm", rule_id, "--json")),
        json_of(run("mcp-link", "list", "--hub-db", hub, "--json")),
        json_of(run("mcp-link", "revoke", "ci", "--hub-db", hub, "--json")),
        json_of(run("audit", "--hub-db", hub, "--json")),
        json_of(run("audit", "--local", "--json")),
    ]
    times = _times(answers)
    assert len(times) > 15
    assert [time for time in times if not (isinstance(time, str) and INSTANT.match(time))] == []
    assert "0001-01-01T00:00:00.000Z" in times


def test_rules_confirm_and_disable_answer_with_the_rule_as_rules_list_shows_it(
    run: Invoke,
) -> None:
    rule_id = json_of(run("rules", "add", "Run the tests", "--json"))["rule"]["id"]
    confirmed = json_of(run("rules", "confirm", rule_id, "--json"))
    assert confirmed == {"confirmed": True, "rule": json_of(run("rules", "list", "--json"))[0]}
    disabled = json_of(run("rules", "disable", rule_id, "--json"))
    assert disabled == {
        "disabled": True,
        "rule": json_of(run("rules", "list", "--all", "--json"))[0],
    }
    assert disabled["rule"]["enabled"] is False


def test_mcp_link_revoke_answers_with_the_token_as_mcp_link_list_shows_it(
    run: Invoke, workspace: Workspace
) -> None:
    hub = str(workspace.home / "hub.db")
    run("mcp-link", "create", "--projects", "shop", "--name", "ci", "--hub-db", hub)
    revoked = json_of(run("mcp-link", "revoke", "ci", "--hub-db", hub, "--json"))
    listed = json_of(run("mcp-link", "list", "--hub-db", hub, "--json"))
    assert revoked == {"revoked": True, "token": listed[0]}
    assert revoked["token"]["name"] == "ci"
    assert revoked["token"]["revoked_at"] is not None


def _aletheia(workspace: Workspace, *args: bytes | str) -> subprocess.CompletedProcess[bytes]:
    """The installed script, run as a shell runs it (arguments as raw bytes)."""
    env = {**os.environ, "HOME": str(workspace.home), "NO_COLOR": "1"}
    return subprocess.run(
        [str(BIN / "aletheia"), *args],
        cwd=workspace.project,
        env=env,
        capture_output=True,
        timeout=30,
        check=False,
    )


@pytest.mark.parametrize(
    "command",
    [
        [b"save", b"caf\xe9 au lait"],
        [b"save", b"a note", b"--title", b"\xff"],
        [b"facts", b"add", b"api", b"db", b"\xff"],
        [b"rules", b"add", b"\xfe run the tests"],
        [b"lists", b"write", b"todo", b"\xff"],
        [b"mcp-link", b"create", b"--projects", b"sh\xffop"],
    ],
    ids=lambda command: command[0].decode(),
)
def test_an_argument_that_is_not_utf8_is_bad_input_not_a_traceback(
    workspace: Workspace, command: list[bytes]
) -> None:
    done = _aletheia(workspace, *command, b"--json")
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    error = json.loads(done.stdout)["error"]
    assert error["code"] == "invalid_input"
    assert "is not UTF-8 text" in error["message"]
    assert done.stderr.decode().startswith("Error: ")
    assert "\\x" in done.stderr.decode()  # the bad byte shown as an escape


def test_a_file_name_that_is_not_utf8_still_works(workspace: Workspace, tmp_path: Path) -> None:
    _aletheia(workspace, "save", "Use pnpm, not npm")
    target = os.fsencode(tmp_path) + b"/b\xffckup.jsonl"
    assert _aletheia(workspace, b"export", b"-o", target).returncode == 0
    assert os.path.getsize(target) > 0


def test_dismiss_help_says_where_the_reason_is_kept(run: Invoke) -> None:
    run("save", "Use pnpm, not npm")
    run("dismiss", "1", "--reason", "a duplicate")
    assert "(dismissed " in run("show", "1").stdout
    assert "a duplicate" in run("show", "1").stdout
    assert [row["detail"] for row in json_of(run("audit", "--local", "--json"))] == ["a duplicate"]
    assert "a duplicate" in run("audit", "--local").stdout
    help_text = " ".join(run("dismiss", "--help").stdout.split())
    assert (
        "--reason TEXT Why (kept with the item, shown by show, and in the audit trail; cut to 300"
        " characters)."
    ) in help_text


def test_rules_list_with_only_disabled_rules_says_so(run: Invoke) -> None:
    rule_id = json_of(run("rules", "add", "Run the tests", "--json"))["rule"]["id"]
    run("rules", "disable", rule_id)
    assert run("rules", "list").stdout == (
        "No enabled rules (1 disabled: aletheia rules list --all shows it).\n"
    )


def test_search_help_names_every_form_since_and_until_take(run: Invoke) -> None:
    run("save", "Use pnpm, not npm")
    since = run("search", "pnpm", "--since", "1700000000000", "--until", "9999-12-31", "--json")
    assert len(json_of(since)["memories"]) == 1
    help_text = " ".join(run("search", "--help").stdout.split())
    assert "--since TEXT From this ISO 8601 date, date-time or epoch ms on." in help_text
    assert (
        "--until TEXT Up to this ISO 8601 date, date-time or epoch ms (a bare date includes"
        " that day)." in help_text
    )


@pytest.mark.parametrize(
    ("command", "message"),
    [
        (["connect", "windsurf", "--scope", "project"], "Windsurf has no project-scope config"),
        (["install", "windsurf", "--scope", "project"], "Windsurf has no project-scope config"),
        (
            ["install", "windsurf", "--hooks"],
            "Capture hooks are available for claude-code, gemini-cli, codex, opencode and cursor"
            " only.",
        ),
        (["connect", "codex", "--token-env", "T"], "--token-env needs --http URL."),
        (["install", "codex", "--http", "ftp://x"], "--http needs an http:// or https:// URL."),
        (["connect", "claude-desktop", "--http", "http://x/mcp"], "takes stdio servers only"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_connect_and_install_tell_bad_input_as_a_json_error_too(
    run: Invoke, workspace: Workspace, command: list[str], message: str
) -> None:
    result = run(*command, "--json")
    assert result.exit_code == 2
    error = json_of(result)["error"]
    assert error["code"] == "invalid_input"
    assert message in error["message"]
    assert result.stderr.startswith("Error: ") and message in result.stderr
    assert not (workspace.home / ".cursor").exists()


def test_install_refuses_a_token_variable_that_is_not_utf8(workspace: Workspace) -> None:
    done = _aletheia(
        workspace, b"install", b"cursor", b"--write", b"--http", b"http://x/mcp",
        b"--token-env", b"T\xff", b"--json",
    )  # fmt: skip
    assert done.returncode == 2
    assert b"Traceback" not in done.stderr
    assert json.loads(done.stdout)["error"]["message"] == "--token-env is not UTF-8 text: T\\xff"
    assert not (workspace.home / ".cursor" / "mcp.json").exists()


CHOICES = {
    "install": "Missing argument '{claude-code|codex|cursor|gemini-cli|windsurf|command-code"
    "|opencode|vscode|claude-desktop}'. Choose from: claude-code, codex, cursor, gemini-cli,"
    " windsurf, command-code, opencode, vscode, claude-desktop.",
    "completion": "Missing argument '{bash|zsh|fish}'. Choose from: bash, zsh, fish.",
}


@pytest.mark.parametrize("command", list(CHOICES))
def test_a_missing_choice_is_one_readable_line(workspace: Workspace, command: str) -> None:
    result = CliRunner().invoke(cli, [command], prog_name="aletheia", catch_exceptions=False)
    assert result.exit_code == 2
    assert result.stderr == f"Error: {CHOICES[command]} Try 'aletheia {command} --help'.\n"
    if command == "install":
        assert json_of(CliRunner().invoke(cli, [command, "--json"]))["error"] == {
            "code": "invalid_input",
            "message": CHOICES[command],
        }


def test_export_takes_json_like_import(run: Invoke, workspace: Workspace) -> None:
    target = workspace.home / "backup.jsonl"
    missing = run("export", "-o", str(target), "--json")
    assert missing.exit_code == 7
    assert json_of(missing)["error"]["code"] == "no_store"
    run("save", "Use pnpm, not npm")
    result = run("export", "-o", str(target), "--json")
    assert result.exit_code == 0
    assert json_of(result) == {"exported": 1, "file": str(target)}
    assert result.stderr == ""
    lines = run("export").stdout.splitlines()
    assert lines == target.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["header", "memory"]
    assert run("export", "--json").stdout.splitlines() == lines  # the export, as in 0.4.1


def test_json_shapes_and_times_are_the_same_on_postgresql(
    run: Invoke, pg_store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALETHEIA_HUB_DB", pg_store_url)
    saved = json_of(run("save", "Use pnpm, not npm", "--json"))["memory"]
    assert INSTANT.match(saved["created_at"]) and saved["dismissed_at"] is None
    fact = json_of(run("facts", "add", "api", "db", "pg", "--valid-from", "0001-01-01", "--json"))
    assert fact["fact"]["valid_from"] == "0001-01-01T00:00:00.000Z"
    rule_id = json_of(run("rules", "add", "Run the tests", "--json"))["rule"]["id"]
    confirmed = json_of(run("rules", "confirm", rule_id, "--json"))
    assert confirmed == {"confirmed": True, "rule": json_of(run("rules", "list", "--json"))[0]}
    disabled = json_of(run("rules", "disable", rule_id, "--json"))
    assert disabled["disabled"] is True and disabled["rule"]["enabled"] is False
    assert run("rules", "list").stdout == (
        "No enabled rules (1 disabled: aletheia rules list --all shows it).\n"
    )
    run("mcp-link", "create", "--projects", "shop", "--name", "ci")  # the hub: ALETHEIA_HUB_DB
    revoked = json_of(run("mcp-link", "revoke", "ci", "--json"))
    assert revoked == {"revoked": True, "token": json_of(run("mcp-link", "list", "--json"))[0]}
    assert all(INSTANT.match(row["at"]) for row in json_of(run("audit", "--json")))
    missing = run("rules", "confirm", "r_0000000000", "--json")
    assert missing.exit_code == 3 and json_of(missing)["error"]["code"] == "not_found"


@pytest.mark.parametrize(
    "command",
    [
        ["mcp-link", "create", "--projects", "shop", "--url", "hub.example:8787"],
        ["sync", "--hub", "hub.example:8787", "--token", "alt_x"],
    ],
    ids=lambda command: command[0],
)
def test_a_hub_url_without_http_is_bad_input(run: Invoke, command: list[str]) -> None:
    result = run(*command, "--json")
    assert result.exit_code == 2
    assert json_of(result)["error"] == {
        "code": "invalid_input",
        "message": "The hub URL must start with http:// or https://: hub.example:8787",
    }


def test_rules_sync_into_a_missing_folder_is_refused_and_makes_nothing(
    run: Invoke, workspace: Workspace
) -> None:
    run("rules", "add", "Run the tests")
    missing = workspace.home / "code" / "shpo"
    for dry_run in (["--dry-run"], []):
        result = run("rules", "sync", "--dir", str(missing), *dry_run, "--json")
        assert result.exit_code == 2
        assert "does not exist" in json_of(result)["error"]["message"]
    assert not missing.exists()


@pytest.mark.parametrize("offset", ["99999999999999999999", "1000001"])
def test_a_search_offset_past_the_tools_limit_is_bad_input(run: Invoke, offset: str) -> None:
    run("save", "Use pnpm, not npm")
    result = run("search", "pnpm", "--offset", offset, "--json")
    assert result.exit_code == 2
    assert json_of(result)["error"]["message"] == (
        f"Invalid value for '--offset': {offset} is not in the range 0<=x<=1000000."
    )
    assert json_of(run("search", "pnpm", "--offset", "1000000", "--json"))["memories"] == []


def test_show_names_the_ids_it_did_not_find(run: Invoke) -> None:
    run("save", "Use pnpm, not npm")
    for as_json in ([], ["--json"]):
        result = run("show", "1", "998", "999", *as_json)
        assert result.exit_code == 0
        assert result.stderr == "No memories found for ids #998 and #999.\n"
    assert [memory["id"] for memory in json_of(run("show", "999", "1", "--json"))] == [1]
    assert run("show", "1").stderr == ""
