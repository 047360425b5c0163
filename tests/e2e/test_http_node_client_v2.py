"""The official MCP TypeScript client v2 (@modelcontextprotocol/client 2.4.0) over HTTP.

In ``'auto'`` mode it probes ``server/discover`` and then speaks 2026-07-28: stateless requests
with no session, every one of the 13 tools called; ``'legacy'`` mode still gets 2025-11-25.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.e2e.node_tools import NODE_DIR, node_binary, require_node_modules

pytestmark = pytest.mark.e2e

KEY = "node-v2-key"
SCRIPT = NODE_DIR / "http_client_v2.mjs"
MEMORY = "Use pnpm, not npm, in the shop repo"
FIRST_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("session_start_context", {"limit": 5}),
    (
        "save_memory",
        {
            "text": MEMORY,
            "type": "decision",
            "facts": [{"subject": "shop", "predicate": "package manager", "object": "pnpm"}],
        },
    ),
    ("search", {"query": "pnpm"}),
    ("timeline", {"anchor": 1}),
    ("get_observations", {"ids": [1]}),
    ("fact_history", {"subject": "shop"}),
    ("add_rule", {"then": "Run the tests before you commit"}),
    ("list_rules", {}),
    ("dismiss_memory", {"id": 1, "reason": "duplicate"}),
    ("restore_memory", {"id": 1}),
    ("work_state_write", {"list": "todo", "items": ["ship docs"]}),
    ("work_state_read", {"list": "todo"}),
    ("search", {}),
]


@pytest.fixture(scope="module", autouse=True)
def _node_modules() -> None:
    require_node_modules()


@pytest.fixture(scope="module")
def keyed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    env = {"ALETHEIA_API_KEY": KEY, "ALETHEIA_CWD": "/srv/shop"}
    with running_server(tmp_path_factory.mktemp("node-v2"), env=env) as server:
        yield server


def run_client(url: str, *options: str) -> dict[str, Any]:
    done = subprocess.run(
        [node_binary(), str(SCRIPT), url, "--token", KEY, *options],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    output: dict[str, Any] = json.loads(done.stdout)
    return output


def test_auto_mode_speaks_2026_07_28_without_a_session_and_calls_all_13_tools(
    keyed_server: RunningServer,
) -> None:
    out = run_client(keyed_server.mcp_url, "--mode", "auto", "--calls", json.dumps(FIRST_CALLS))
    assert out["protocolVersion"] == "2026-07-28"
    assert out["sessionId"] is None
    assert out["serverInfo"]["name"] == "aletheia"
    assert len(out["tools"]) == 13
    results = out["results"]
    assert [result["isError"] for result in results] == [False] * 12 + [True]
    assert results[1]["text"] == "Saved as #1 in shop."
    assert "(shop, node-v2-client)" in results[2]["text"]
    assert results[-1]["text"] == "query is required."
    rule_id = re.search(r"\((r_[0-9a-f]+)\)", results[6]["text"])
    assert rule_id is not None
    confirm = [("confirm_rule", {"id": rule_id.group(1)})]
    again = run_client(keyed_server.mcp_url, "--calls", json.dumps(confirm))
    assert again["results"][0]["isError"] is False
    called = {name for name, _ in FIRST_CALLS} | {"confirm_rule"}
    assert called == {tool["name"] for tool in out["tools"]}


def test_legacy_mode_still_initializes_with_2025_11_25_and_a_session(
    keyed_server: RunningServer,
) -> None:
    out = run_client(keyed_server.mcp_url, "--mode", "legacy")
    assert out["protocolVersion"] == "2025-11-25"
    assert out["sessionId"]
