"""The reference's ``aletheia mcp-link create --projects shop`` needs no ``--hub-db``: it and
``aletheia-sync`` / ``aletheia hub`` share a default hub store. ``ALETHEIA_HUB_DB`` moves the hub
side and, as DESIGN §3 says ("a store file used instead"), the store of the CLI, the hooks and
``aletheia-mcp`` too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia_mem.storage.sqlite import SqliteStore
from tests.hub.helpers import running_hub

BIN = Path(sys.executable).parent


def aletheia(*args: str, env: dict[str, str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "aletheia"), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / "code" / "shop" / ".git").mkdir(parents=True)
    base = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    return {**base, "HOME": str(home), "ALETHEIA_DATA_DIR": str(home / "data"), "NO_COLOR": "1"}


def _secret(output: str) -> str:
    return next(word for word in output.split() if word.startswith("alt_"))


@pytest.mark.parametrize("hub_command", [["aletheia-sync"], ["aletheia", "hub"]])
def test_the_reference_command_makes_a_token_the_default_hub_accepts(
    env: dict[str, str], hub_command: list[str]
) -> None:
    created = aletheia("mcp-link", "create", "--projects", "shop", env=env)
    assert created.returncode == 0, created.stderr
    hub_db = Path(env["ALETHEIA_DATA_DIR"]) / "hub" / "hub.db"
    assert hub_db.is_file()
    command = [str(BIN / hub_command[0]), *hub_command[1:]]
    with running_hub(hub_db, command=command, env=env) as hub:
        secret = _secret(created.stdout)
        text, is_error = hub.call_tool(secret, hub.initialize(secret), "list_rules")
        assert is_error is False, text
    listed = json.loads(aletheia("mcp-link", "list", "--json", env=env).stdout)
    assert [token["last_used_at"] is not None for token in listed] == [True]
    audit = aletheia("audit", env=env)
    assert audit.returncode == 0 and "list_rules" in audit.stdout


def test_aletheia_hub_db_is_the_store_of_the_hub_side_and_of_every_other_command(
    env: dict[str, str], tmp_path: Path
) -> None:
    hub_db = tmp_path / "team" / "hub.db"
    env = {**env, "ALETHEIA_HUB_DB": str(hub_db)}
    assert (
        aletheia("mcp-link", "create", "--projects", "shop", "--name", "a", env=env).returncode == 0
    )
    assert hub_db.is_file()
    assert aletheia("save", "a saved memory", "-p", "shop", env=env).returncode == 0
    payload = json.dumps({"session_id": "s", "cwd": str(Path(env["HOME"]) / "code" / "shop")})
    hook = subprocess.run(
        [str(BIN / "aletheia-hook"), "user-prompt"],
        input=json.dumps({**json.loads(payload), "prompt": "a prompt"}),
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert hook.returncode == 0
    handshake = "".join(
        json.dumps(message) + "\n"
        for message in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "save_memory",
                        "arguments": {"text": "from mcp", "project": "shop"}}},
        )
    )  # fmt: skip
    served = subprocess.run(
        [str(BIN / "aletheia-mcp")], input=handshake, env=env, capture_output=True, text=True,
        timeout=30, check=False,
    )  # fmt: skip
    assert served.returncode == 0 and '"id":2' in served.stdout
    assert not (Path(env["ALETHEIA_DATA_DIR"]) / "aletheia.db").exists()
    hub = SqliteStore(hub_db)
    try:
        assert sorted(m.text for m in hub.get_memories([1, 2])) == ["a saved memory", "from mcp"]
        assert [r.text for r in hub.recent_requests("shop", 5)] == ["a prompt"]
        assert [t.name for t in hub.list_tokens()] == ["a"]
    finally:
        hub.close()


def test_reading_a_hub_store_that_is_not_there_is_an_error_that_creates_nothing(
    env: dict[str, str],
) -> None:
    for command in (["mcp-link", "list"], ["mcp-link", "revoke", "x"], ["audit"]):
        result = aletheia(*command, env=env)
        assert result.returncode == 7, command
        hub_db = Path(env["ALETHEIA_DATA_DIR"]) / "hub" / "hub.db"
        assert result.stderr == (
            f"Error: No store at {hub_db}: check --hub-db or ALETHEIA_HUB_DB; aletheia"
            " mcp-link create starts the hub's store.\n"
        )
    assert not Path(env["ALETHEIA_DATA_DIR"]).exists()


def test_audit_local_reads_this_machines_dismissals(env: dict[str, str]) -> None:
    aletheia("save", "to dismiss", "-p", "shop", env=env)
    aletheia("dismiss", "1", "--reason", "duplicate", env=env)
    rows = json.loads(aletheia("audit", "--local", "--json", env=env).stdout)
    assert [(row["tool"], row["project"]) for row in rows] == [("dismiss_memory", "shop")]
