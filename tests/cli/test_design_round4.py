"""DESIGN sections 3 and 7, round 4, from outside: the real ``aletheia`` script in a subprocess,
with a fresh HOME and data folder, on a real SQLite store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from aletheia_mem.domain.rule_sync import BLOCK_START

BIN = Path(sys.executable).parent


def aletheia(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "aletheia"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def fresh_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(HOME=str(tmp_path / "home"), ALETHEIA_DATA_DIR=str(tmp_path / "data"))
    env.update(NO_COLOR="1", **extra)
    return env


def test_rules_sync_writes_into_the_repository_aletheia_cwd_names(tmp_path: Path) -> None:
    """DESIGN 3: ALETHEIA_CWD (default: the process working directory) picks the default
    project; DESIGN 7: `aletheia rules sync` writes that project's rules into its tools'
    instruction files, as the web UI's Rules page (which reads ALETHEIA_CWD) does."""
    shop = tmp_path / "code" / "shop"
    (shop / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = fresh_env(tmp_path, ALETHEIA_CWD=str(shop))
    added = aletheia(
        "rules", "add", "Use pnpm", "--scope-tier", "project", "--scope-name", "shop",
        cwd=elsewhere, env=env,
    )  # fmt: skip
    assert added.returncode == 0, added.stderr

    synced = aletheia("rules", "sync", "--tool", "claude-code", cwd=elsewhere, env=env)

    assert synced.returncode == 0, synced.stderr
    assert synced.stdout == f"{shop / 'CLAUDE.md'}: rules written.\n"
    text = (shop / "CLAUDE.md").read_text(encoding="utf-8")
    assert BLOCK_START in text and "- Always: Use pnpm\n" in text
    assert not list(elsewhere.iterdir())


def test_rules_sync_without_aletheia_cwd_still_writes_into_the_working_directory(
    tmp_path: Path,
) -> None:
    shop = tmp_path / "code" / "shop"
    (shop / ".git").mkdir(parents=True)
    (shop / "src").mkdir()
    env = fresh_env(tmp_path)
    assert aletheia("rules", "add", "Run the tests", cwd=shop, env=env).returncode == 0

    synced = aletheia("rules", "sync", "--tool", "codex", cwd=shop / "src", env=env)

    assert synced.stdout == f"{shop / 'AGENTS.md'}: rules written.\n", synced.stderr


def test_recording_a_dismissed_fact_again_says_it_stays_dismissed(tmp_path: Path) -> None:
    """DESIGN 6: the same object again changes nothing and returns the existing id; when that
    fact is dismissed the answer says so, as `aletheia save` does for a dismissed memory."""
    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    env = fresh_env(tmp_path)
    assert aletheia("facts", "add", "db", "version", "15", cwd=shop, env=env).returncode == 0
    assert aletheia("dismiss", "1", "--type", "fact", cwd=shop, env=env).returncode == 0

    again = aletheia("facts", "add", "db", "version", "15", cwd=shop, env=env)

    assert again.stdout == (
        "Already recorded as fact #1. It is dismissed: hidden from search and context;"
        " aletheia restore 1 --type fact brings it back.\n"
    ), again.stderr
    assert aletheia("restore", "1", "--type", "fact", cwd=shop, env=env).returncode == 0
    assert aletheia("facts", "add", "db", "version", "15", cwd=shop, env=env).stdout == (
        "Already recorded as fact #1.\n"
    )


def test_a_rule_added_on_the_command_line_records_aletheia_tool_as_its_source(
    tmp_path: Path,
) -> None:
    """DESIGN 3: ALETHEIA_TOOL is the caller's name; saved memories record it as their tool,
    new rules as their source. Unset, a rule added by hand is the owner's (`source: you`)."""
    shop = tmp_path / "shop"
    (shop / ".git").mkdir(parents=True)
    env = fresh_env(tmp_path)
    assert aletheia("rules", "add", "By hand", cwd=shop, env=env).returncode == 0
    as_codex = fresh_env(tmp_path, ALETHEIA_TOOL="codex")
    assert aletheia("rules", "add", "From codex", cwd=shop, env=as_codex).returncode == 0
    assert aletheia("save", "Saved by codex", cwd=shop, env=as_codex).returncode == 0

    listed = json.loads(aletheia("rules", "list", "--json", cwd=shop, env=env).stdout)
    shown = json.loads(aletheia("show", "1", "--json", cwd=shop, env=env).stdout)

    assert {rule["then"]: rule["source"] for rule in listed} == {
        "By hand": "you",
        "From codex": "codex",
    }
    assert shown[0]["tool"] == "codex"


def test_rules_sync_refuses_an_aletheia_cwd_that_is_not_a_folder(tmp_path: Path) -> None:
    """As `--dir` does for a folder that does not exist: nothing is created or written."""
    missing = tmp_path / "nowhere" / "shop"
    env = fresh_env(tmp_path, ALETHEIA_CWD=str(missing))
    assert aletheia("rules", "add", "Run the tests", cwd=tmp_path, env=env).returncode == 0

    synced = aletheia("rules", "sync", cwd=tmp_path, env=env)

    assert synced.returncode == 2
    assert synced.stderr == f"Error: ALETHEIA_CWD names {missing}, which is not a folder.\n"
    assert not (tmp_path / "nowhere").exists()
