"""What stands where a config file, the store or its folder should be (a FIFO, a folder, a file),
and ids past SQLite's range: one line and an exit code, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of

MAX_ID = 2**63 - 1
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def _codex_config(workspace: Workspace, text: str) -> Path:
    path = workspace.home / ".codex" / "config.toml"
    path.parent.mkdir(parents=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "text",
    ["mcp_servers = {}\n", 'mcp_servers = { other = { command = "x" } }\nmodel = "o3"\n'],
    ids=["empty", "with-another-server"],
)
def test_install_codex_merges_into_an_inline_mcp_servers_table(
    run: Invoke, workspace: Workspace, text: str
) -> None:
    path = _codex_config(workspace, text)
    dry = run("install", "codex")
    assert dry.exit_code == 0
    assert path.read_text(encoding="utf-8") == text
    result = run("install", "codex", "--write")
    assert result.exit_code == 0
    before, after = tomllib.loads(text), tomllib.loads(path.read_text(encoding="utf-8"))
    assert set(after["mcp_servers"]) == {*before["mcp_servers"], "aletheia"}
    assert after["mcp_servers"]["aletheia"]["env"]["ALETHEIA_TOOL"] == "codex"
    assert {k: v for k, v in after.items() if k != "mcp_servers"} == {
        k: v for k, v in before.items() if k != "mcp_servers"
    }
    assert before["mcp_servers"].items() <= after["mcp_servers"].items()
    assert run("install", "codex", "--write").stdout.startswith(f"{path} already has")


def test_install_codex_replaces_an_inline_entry_with_force(
    run: Invoke, workspace: Workspace
) -> None:
    path = _codex_config(workspace, 'mcp_servers = { aletheia = { command = "old" }, b = {} }\n')
    assert run("install", "codex", "--write").exit_code == 4
    assert run("install", "codex", "--write", "--force").exit_code == 0
    servers = tomllib.loads(path.read_text(encoding="utf-8"))["mcp_servers"]
    assert servers["b"] == {}
    assert servers["aletheia"]["command"] == sys.executable


def test_install_codex_refuses_an_array_of_mcp_servers_in_one_line(
    run: Invoke, workspace: Workspace
) -> None:
    text = "[[mcp_servers]]\nx = 1\n"
    path = _codex_config(workspace, text)
    result = run("install", "codex", "--write")
    assert result.exit_code == 1
    assert result.stderr == f"Error: {path}: mcp_servers is not a table\n"
    assert path.read_text(encoding="utf-8") == text


def _aletheia(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed ``aletheia`` in a fresh HOME, bounded: a blocking open would time out."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    variables.update(HOME=str(home), NO_COLOR="1", XDG_CONFIG_HOME=str(home / ".config"))
    variables.update(ALETHEIA_DATA_DIR=str(home / ".aletheia"), **env)
    return subprocess.run(
        [str(Path(sys.executable).parent / "aletheia"), *args],
        capture_output=True,
        text=True,
        env=variables,
        cwd=home,
        timeout=20,
        check=False,
    )


@pytest.mark.parametrize("write", [[], ["--write"]], ids=["dry-run", "write"])
def test_install_refuses_a_fifo_at_the_config_path_without_blocking(
    tmp_path: Path, write: list[str]
) -> None:
    fifo = tmp_path / ".claude.json"
    os.mkfifo(fifo)
    result = _aletheia(tmp_path, "install", "claude-code", *write)
    assert result.returncode == 1
    assert result.stderr == f"Error: Cannot read {fifo}: not a regular file; move it away.\n"


def test_doctor_reports_a_fifo_config_and_hooks_file_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / ".claude.json")
    (tmp_path / ".claude").mkdir()
    os.mkfifo(tmp_path / ".claude" / "settings.json")
    result = _aletheia(tmp_path, "doctor", "--json")
    assert result.returncode != 0
    [claude] = [
        host for host in json.loads(result.stdout)["hosts"] if host["host"] == "claude-code"
    ]
    assert claude["status"] == "unreadable"
    assert "not a regular file" in claude["detail"]


@pytest.mark.parametrize(
    "command",
    [["save", "x"], ["import", "-"], ["search", "x"], ["show", "1"]],
    ids=" ".join,
)
def test_a_data_dir_that_is_a_file_is_a_no_store_error(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    folder = workspace.home / "afile"
    folder.write_text("hi\n", encoding="utf-8")
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(folder))
    result = run(*command, input="")
    assert result.exit_code == 7
    assert result.stderr == (
        f"Error: No store at {folder / 'aletheia.db'}: a file stands where the folder {folder}"
        " (or one above it) should be; point ALETHEIA_DATA_DIR at a folder.\n"
    )
    assert folder.read_text(encoding="utf-8") == "hi\n"


def test_a_data_dir_that_is_a_file_gives_json_with_the_same_code(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace.home / "afile").write_text("hi\n", encoding="utf-8")
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(workspace.home / "afile" / "below"))
    result = run("save", "x", "--json")
    assert result.exit_code == 7
    assert json_of(result)["error"]["code"] == "no_store"


@pytest.mark.parametrize("command", [["save", "x"], ["import", "-"]], ids=" ".join)
def test_a_folder_at_the_store_path_is_a_broken_store(
    run: Invoke, workspace: Workspace, command: list[str]
) -> None:
    store = workspace.data_dir / "aletheia.db"
    store.mkdir(parents=True)
    result = run(*command, input="")
    assert result.exit_code == 8
    assert result.stderr.startswith(f"Error: The store {store} is not a regular file")
    assert result.stderr.count("\n") == 1
    assert store.is_dir()


@pytest.mark.parametrize("program", ["aletheia-mcp", "aletheia mcp"])
def test_the_stdio_server_with_a_data_dir_that_is_a_file_exits_in_one_line(
    tmp_path: Path, program: str
) -> None:
    folder = tmp_path / "afile"
    folder.write_text("hi\n", encoding="utf-8")
    executable, *args = program.split()
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / executable), *args],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        env={**variables, "HOME": str(tmp_path), "ALETHEIA_DATA_DIR": str(folder)},
        timeout=20,
        check=False,
    )
    assert result.returncode == 7
    assert result.stderr == (
        f"aletheia-mcp: No store at {folder / 'aletheia.db'}: a file stands where the folder"
        f" {folder} (or one above it) should be; point ALETHEIA_DATA_DIR at a folder.\n"
    )


@pytest.mark.parametrize(
    ("command", "store", "chosen_by"),
    [
        (["aletheia-server", "--port", "19731"], "aletheia.db", "ALETHEIA_DATA_DIR"),
        (["aletheia-sync", "--port", "19732"], "hub/hub.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "hub", "--port", "19733", "--hub-db", "{file}/h.db"], "h.db", "--hub-db"),
        (["aletheia", "mcp-link", "create", "--projects", "x"], "hub/hub.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "mcp-link", "list"], "hub/hub.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "mcp-link", "revoke", "1"], "hub/hub.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "audit"], "hub/hub.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "audit", "--local"], "aletheia.db", "ALETHEIA_DATA_DIR"),
        (["aletheia", "doctor", "--hub-db", "{file}/h.db"], "h.db", "--hub-db"),
    ],
    ids=lambda value: " ".join(value[:3]) if isinstance(value, list) else None,
)
def test_every_program_with_a_file_where_the_data_folder_should_be_exits_7_naming_it(
    tmp_path: Path, command: list[str], store: str, chosen_by: str
) -> None:
    """A mistyped path, as the README's exit codes say: 7 (no store), not 8 (broken store,
    whose advice is to restore an export); nothing is made and the file is left as it was."""
    folder = tmp_path / "afile"
    folder.write_text("hi\n", encoding="utf-8")
    executable, *args = [part.replace("{file}", str(folder)) for part in command]
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / executable), *args],
        capture_output=True,
        text=True,
        env={**variables, "HOME": str(tmp_path), "ALETHEIA_DATA_DIR": str(folder)},
        timeout=20,
        check=False,
    )
    path = folder / store
    place = "a folder" if chosen_by == "ALETHEIA_DATA_DIR" else "a file in a folder"
    assert result.returncode == 7, result.stderr
    assert (
        f"No store at {path}: a file stands where the folder {path.parent} (or one above it)"
        f" should be; point {chosen_by} at {place}."
    ) in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert folder.read_text(encoding="utf-8") == "hi\n"


@pytest.mark.parametrize(
    "command",
    [
        ["show", "99999999999999999999999"],
        ["show", "1", str(MAX_ID + 1)],
        ["dismiss", str(MAX_ID + 1)],
        ["restore", str(MAX_ID + 1)],
        ["timeline", str(MAX_ID + 1)],
    ],
    ids=" ".join,
)
def test_an_id_past_sqlites_range_is_bad_input(run: Invoke, command: list[str]) -> None:
    run("save", "first")
    result = run(*command)
    assert result.exit_code == 2
    assert f"is not in the range 1<=x<={MAX_ID}." in result.stderr


@pytest.mark.parametrize(
    "command", [["show"], ["dismiss"], ["restore"], ["timeline"]], ids=" ".join
)
def test_the_largest_id_is_simply_not_found(run: Invoke, command: list[str]) -> None:
    run("save", "first")
    assert run(*command, str(MAX_ID)).exit_code == 3


def test_a_rule_evidence_id_past_the_largest_is_bad_input(run: Invoke) -> None:
    result = run("rules", "add", "Run the tests", "--evidence-memory", str(2**63))
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.parametrize("variable", ["ALETHEIA_DATA_DIR", "ALETHEIA_HUB_DB"])
def test_sync_without_a_hub_in_a_mistyped_data_folder_makes_no_store_and_exits_7(
    tmp_path: Path, variable: str
) -> None:
    """As the read commands: no hub can be remembered where no store is, so the path is what
    is wrong (it used to make an empty store there and then say "No hub yet")."""
    typo = tmp_path / "typo"
    value = str(typo / "aletheia.db") if variable == "ALETHEIA_HUB_DB" else str(typo)
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "aletheia"), "sync"],
        capture_output=True,
        text=True,
        env={**variables, "HOME": str(tmp_path), variable: value},
        timeout=20,
        check=False,
    )
    assert result.returncode == 7
    assert result.stderr == (
        f'Error: No store at {typo / "aletheia.db"}: {variable} is "{value}"; check it, or save'
        " something first to start a store there.\n"
    )
    assert not typo.exists()


def test_sync_without_a_hub_or_a_store_in_the_default_folder_says_no_hub_yet_and_exits_7(
    tmp_path: Path,
) -> None:
    """No store where the default folder is: no store, exit code 7 as for the read commands
    (README's table), with the line that says how to start."""
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "aletheia"), "sync"],
        capture_output=True,
        text=True,
        env={**variables, "HOME": str(tmp_path)},
        timeout=20,
        check=False,
    )
    assert result.returncode == 7, result.stderr
    assert result.stderr == (
        "Error: No hub yet: run ALETHEIA_HUB_TOKEN=TOKEN aletheia sync --hub URL once; it is"
        " remembered.\n"
    )
    assert not (tmp_path / ".aletheia").exists()


def test_sync_and_reads_call_a_folder_at_the_store_path_a_broken_store_as_save_does(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    (data / "aletheia.db").mkdir(parents=True)
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env = {**variables, "HOME": str(tmp_path), "ALETHEIA_DATA_DIR": str(data)}
    aletheia = str(Path(sys.executable).parent / "aletheia")
    for args in (["sync"], ["search", "x"], ["save", "x"]):
        result = subprocess.run(
            [aletheia, *args], capture_output=True, text=True, env=env, timeout=20, check=False
        )
        assert result.returncode == 8, (args, result.stderr)
        assert "is not a regular file (a folder or a special file)" in result.stderr, args
