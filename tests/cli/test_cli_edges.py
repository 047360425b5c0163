"""Edges a new user meets: exit codes with and without --json, read-only commands that never
create a store, shell completion, wide characters in tables, the import progress bar."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest

from aletheia_mem.cli.common import table
from aletheia_mem.cli.textwidth import cut, display_width, pad
from tests.cli.conftest import Invoke, Workspace, json_of

BIN = Path(sys.executable).parent
READ_ONLY = [
    ["search", "pnpm"],
    ["show", "1"],
    ["timeline", "1"],
    ["context"],
    ["facts", "history", "payments-api"],
    ["rules", "list"],
    ["rules", "confirm", "r_0000000000"],
    ["rules", "disable", "r_0000000000"],
    ["rules", "sync", "--dry-run"],
    ["lists", "read", "todo"],
    ["dismiss", "1"],
    ["restore", "1"],
    ["export"],
    ["audit", "--local"],
]


@pytest.mark.parametrize("command", READ_ONLY, ids=" ".join)
def test_a_mistyped_data_dir_is_a_one_line_error_and_creates_nothing(
    run: Invoke, workspace: Workspace, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    typo = workspace.home / ".aletheai"
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(typo))
    result = run(*command)
    assert result.exit_code == 7
    assert result.stderr == (
        f'Error: No store at {typo / "aletheia.db"}: ALETHEIA_DATA_DIR is "{typo}"; check it,'
        " or save something first to start a store there.\n"
    )
    assert not typo.exists()


@pytest.mark.parametrize("command", [c for c in READ_ONLY if c != ["export"]], ids=" ".join)
def test_json_output_exits_with_the_same_code_when_there_is_no_store(
    run: Invoke, workspace: Workspace, command: list[str]
) -> None:
    result = run(*command, "--json")
    assert result.exit_code == 7
    assert json_of(result)["error"]["code"] == "no_store"
    assert not workspace.data_dir.exists()


@pytest.mark.parametrize(
    "write",
    [["save", "first"], ["facts", "add", "a", "b", "c"], ["rules", "add", "Be kind"],
     ["lists", "write", "todo", "x"]],
    ids=" ".join,
)  # fmt: skip
def test_writes_still_start_a_new_store(
    run: Invoke, workspace: Workspace, write: list[str]
) -> None:
    assert run(*write).exit_code == 0
    assert (workspace.data_dir / "aletheia.db").is_file()


@pytest.mark.parametrize(
    "command",
    [["show", "999999"], ["lists", "read", "nothing"], ["dismiss", "999"],
     ["rules", "confirm", "r_0000000000"], ["search"], ["timeline"]],
    ids=" ".join,
)  # fmt: skip
def test_json_gives_the_same_exit_code_as_plain_output(run: Invoke, command: list[str]) -> None:
    run("save", "a first memory")
    plain, as_json = run(*command), run(*command, "--json")
    assert plain.exit_code == as_json.exit_code != 0
    assert "message" in json_of(as_json)["error"]


def test_show_of_an_unknown_id_exits_3_with_json_too(run: Invoke) -> None:
    run("save", "a first memory")
    result = run("show", "999999", "--json")
    assert result.exit_code == 3
    assert json_of(result) == {
        "error": {"code": "not_found", "message": "No memory found for id #999999."}
    }


def test_a_rule_added_from_the_cli_shows_source_you(run: Invoke) -> None:
    run("rules", "add", "Run the tests before you commit")
    assert [rule["source"] for rule in json_of(run("rules", "list", "--json"))] == ["you"]
    assert "  you  " in run("rules", "list").stdout


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_prints_the_shells_script(run: Invoke, shell: str) -> None:
    result = run("completion", shell)
    assert result.exit_code == 0
    assert "_ALETHEIA_COMPLETE" in result.stdout


def test_bash_completes_commands_and_subcommands(tmp_path: Path) -> None:
    script = (
        'eval "$(aletheia completion bash)"\n'
        "COMPREPLY=(); COMP_WORDS=(aletheia se); COMP_CWORD=1; _aletheia_completion aletheia\n"
        'echo "${COMPREPLY[*]}"\n'
        "COMPREPLY=(); COMP_WORDS=(aletheia rules '')\n"
        "COMP_CWORD=2; _aletheia_completion aletheia\n"
        'echo "${COMPREPLY[*]}"\n'
    )
    env = {"PATH": f"{BIN}:{os.environ['PATH']}", "HOME": str(tmp_path)}
    done = subprocess.run(
        ["bash", "--norc", "-c", script], env=env, capture_output=True, text=True, timeout=30
    )
    assert done.stdout.splitlines() == ["search serve", "add confirm disable list sync"]


def test_display_width_counts_wide_characters_twice_and_marks_not_at_all() -> None:
    assert display_width("abc") == 3
    assert display_width("日本語") == 6
    assert display_width("👍") == display_width("👍🏽") == display_width("❤️") == 2
    assert display_width("👨\u200d👩\u200d👧") == 2
    assert display_width("e\u0301") == 1
    assert pad("日本", 6) == "日本  "
    assert cut("日本語のメモ", 7) == "日本語…"
    assert cut("short", 7) == "short"


def test_tables_align_cjk_and_emoji_by_display_width() -> None:
    rows = [["日本語", "x", "end"], ["bob", "🚀 ship", "end"], ["é", "abc", "end"]]
    lines = click.unstyle(table(["NAME", "NOTE", "END"], rows)).splitlines()
    assert {display_width(line[: line.rindex("END" if i == 0 else "end")]) for i, line in
            enumerate(lines)} == {display_width("日本語  🚀 ship  ")}  # fmt: skip


def test_mcp_link_list_aligns_a_cjk_token_name(run: Invoke, workspace: Workspace) -> None:
    run("mcp-link", "create", "--projects", "shop", "--name", "日本語のトークン")
    run("mcp-link", "create", "--projects", "shop", "--name", "bob")
    lines = run("mcp-link", "list").stdout.splitlines()
    columns = {display_width(line[: line.index("mcp ")]) for line in lines[1:]}
    assert len(columns) == 1 and display_width(lines[0][: lines[0].index("SCOPE")]) in columns


def _read_until_exit(process: subprocess.Popen[bytes], fd: int) -> bytes:
    chunks, deadline = [], time.monotonic() + 5
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            chunks.append(chunk)
        elif process.poll() is not None:
            break
    return b"".join(chunks)


def test_the_import_progress_bar_ends_at_100_percent(run: Invoke, workspace: Workspace) -> None:
    for index in range(40):
        run("save", f"memory {index}: ünïcödé text so the bytes differ from the characters")
    export = workspace.home / "backup.jsonl"
    assert run("export", "-o", str(export)).exit_code == 0
    env = {**os.environ, "ALETHEIA_DATA_DIR": str(workspace.home / "new-store")}
    master, slave = pty.openpty()
    process = subprocess.Popen(
        [str(BIN / "aletheia"), "import", str(export), "--progress"],
        stdout=subprocess.DEVNULL, stderr=slave, env=env,
    )  # fmt: skip
    os.close(slave)
    try:
        output = _read_until_exit(process, master).decode("utf-8", "replace")
    finally:
        os.close(master)
        process.wait(timeout=5)
    assert process.returncode == 0
    frames = [frame for frame in output.split("\r") if "Importing" in frame]
    assert frames and frames[-1].replace("\x1b[?25h", "").rstrip().endswith("]  100%")


def test_a_token_name_taken_exits_4_as_the_exit_code_tables_say(run: Invoke) -> None:
    run("mcp-link", "create", "--projects", "shop", "--name", "eve")
    again = run("mcp-link", "create", "--projects", "shop", "--name", "eve")
    assert (again.exit_code, again.stderr) == (4, 'Error: A token named "eve" already exists.\n')
    root = Path(__file__).parents[2]
    for page in ("README.md", "docs/troubleshooting.md"):
        text = (root / page).read_text(encoding="utf-8")
        [conflict] = [line for line in text.splitlines() if line.startswith("| 4 |")]
        assert "`mcp-link create --name` of a token name that exists" in conflict
