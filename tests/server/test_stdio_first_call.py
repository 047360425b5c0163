"""A stdio server's first search loads what a search needs and nothing of sync, the hub, saving
or the other transports: each module on that path is a cost every coding tool pays at start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# Run in a fresh Python: the real ``stdio.run`` over stdin and stdout (as ``aletheia-mcp``),
# then the names of every ``aletheia_mem`` module and of some standard ones it imported.
PROBE = """
import sys
from aletheia_mem.server import stdio
stdio.run()
sys.stdout.flush()
print(" ".join(sorted(m for m in sys.modules if m.startswith("aletheia_mem"))), file=sys.stderr)
print(" ".join(m for m in ("hashlib", "signal") if m in sys.modules), file=sys.stderr)
"""

NOT_ON_THE_FIRST_SEARCH = (
    # the sync engine and the hub
    "aletheia_mem.hub",
    "aletheia_mem.sync",
    "aletheia_mem.storage.sync_apply",
    "aletheia_mem.storage.sync_apply_context",
    "aletheia_mem.storage.sync_apply_episodes",
    "aletheia_mem.storage.sync_apply_facts",
    "aletheia_mem.storage.sync_apply_memories",
    "aletheia_mem.storage.sync_apply_pending",
    "aletheia_mem.storage.sync_apply_rules",
    "aletheia_mem.storage.sync_authors",
    "aletheia_mem.storage.sync_dialect",
    "aletheia_mem.storage.sync_export",
    "aletheia_mem.storage.sync_peers",
    "aletheia_mem.storage.sync_records",
    "aletheia_mem.storage.sqlite.sync_hooks",
    "aletheia_mem.storage.hub_rows",
    "aletheia_mem.storage.postgres",
    # the HTTP transport's tables and the protocols (typing only)
    "aletheia_mem.storage.mcp_sessions",
    "aletheia_mem.storage.sqlite.rate_windows",
    "aletheia_mem.storage.contracts",
    # saving and the rows a search does not read
    "aletheia_mem.tools.write_tools",
    "aletheia_mem.domain.memories",
    "aletheia_mem.domain.dismissals",
    "aletheia_mem.storage.entries",
    # other entry points and optional parts
    "aletheia_mem.hooks.main",
    "aletheia_mem.cli",
    "aletheia_mem.web",
    "aletheia_mem.search.semantic",
    "aletheia_mem.server.http",
    "aletheia_mem.server.api",
)


def _request(request_id: int, method: str, params: dict[str, object]) -> bytes:
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
    return json.dumps(message).encode() + b"\n"


def first_search(tmp_path: Path) -> tuple[list[dict[str, object]], set[str], set[str]]:
    """The replies to initialize and a first search, and the modules the server had loaded."""
    cwd = tmp_path / "shop"
    cwd.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(tmp_path / "data"), ALETHEIA_CWD=str(cwd))
    lines = _request(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}})
    lines += b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'
    lines += _request(1, "tools/call", {"name": "search", "arguments": {"query": "retry"}})
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        input=lines,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=True,
    )
    ours, stdlib = result.stderr.decode().removesuffix("\n").split("\n")[-2:]
    replies = [json.loads(line) for line in result.stdout.splitlines()]
    return replies, set(ours.split()), set(stdlib.split())


def test_a_first_search_over_stdio_loads_no_sync_hub_or_saving_module(tmp_path: Path) -> None:
    replies, ours, stdlib = first_search(tmp_path)
    assert [reply["id"] for reply in replies] == [0, 1]
    assert "result" in replies[1] and "No matches" in json.dumps(replies[1])
    assert "aletheia_mem.tools.memory_tools" in ours  # the probe saw the search's own path
    loaded = sorted(
        module
        for module in ours
        for banned in NOT_ON_THE_FIRST_SEARCH
        if module == banned or module.startswith(banned + ".")
    )
    assert loaded == []
    assert stdlib == set()  # hashlib (OpenSSL) is for saving; signal for the hooks
