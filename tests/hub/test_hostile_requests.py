"""Hostile MCP requests: batches past the rate limit, poisoned arguments, forged audit rows,
and one token crowding out another's sessions."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub
from tests.hub.sync_helpers import counts_at
from tests.stores import dump_at, rows_at

pytestmark = pytest.mark.e2e


def _call(n: int, name: str, **arguments: Any) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}


def _audit(db: Path | str, actor: str) -> list[tuple[str, str | None, str, str | None]]:
    sql = "SELECT tool, project, result, detail FROM audit WHERE actor = ? ORDER BY id"
    return rows_at(db, sql, actor)  # type: ignore[return-value]


def test_a_batch_counts_each_message_against_the_rate_limit(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("sync", ("shop",), "batcher")
        session = hub.initialize(token)
        batch = [_call(n, "save_memory", text=f"note {n}") for n in range(61)]
        refused = hub.post("/mcp", batch, token, session)
        small = hub.post("/mcp", batch[:50], token, session)
        over = hub.post("/mcp", batch[50:60], token, session)
    assert refused.status == 429 and 1 <= int(refused.headers["retry-after"]) <= 60
    assert "each message of a batch counts" in refused.body["error"]["message"]
    assert small.status == 200 and len(small.body) == 50
    assert over.status == 429  # 1 + 1 + 50 requests made; 10 more would pass 60
    assert counts_at(tmp_path / "hub.db")["memories"] == 50
    assert _audit(tmp_path / "hub.db", "batcher")[-1][:3] == ("rate-limit", "shop", "refused")


def test_a_batch_of_a_thousand_searches_is_refused_even_without_a_rate_limit(
    tmp_path: Path,
) -> None:
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        token = hub.token("read", ("shop",), "reader")
        session = hub.initialize(token)
        batch = [_call(n, "search", query="x") for n in range(1000)]
        reply = hub.post("/mcp", batch, token, session)
    assert reply.status == 400
    assert "at most 100 messages" in reply.body["error"]["message"]
    assert _audit(tmp_path / "hub.db", "reader") == []


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Any:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("case", "arguments", "problem"),
    [
        ("project", {"query": "x", "project": "shop\ud800"}, "lone surrogate"),
        ("extra", {"query": "x", "extra": "\ud800"}, "lone surrogate"),
        ("deep", {"query": "x", "extra": [_nested(900) for _ in range(50)]}, "nest more than"),
    ],
)
def test_poisoned_arguments_get_a_clean_error_and_an_audit_row(
    hub: Hub, case: str, arguments: dict[str, Any], problem: str
) -> None:
    name = f"poisoner-{case}"
    token = hub.token("sync", ("shop",), name)
    session = hub.initialize(token)
    reply = hub.post("/mcp", _call(1, "search", **arguments), token, session)
    assert reply.status == 200
    assert reply.body["result"]["isError"] and problem in reply.body["result"]["content"][0]["text"]
    assert _audit(hub.db, name) == [("search", None, "error", None)]


@pytest.mark.parametrize(
    ("case", "params", "tool"),
    [
        ("unknown", {"name": "drop_everything", "arguments": {}}, "drop_everything"),
        ("long", {"name": "x" * 5000}, "x" * 100 + "..."),
        ("nameless", {"arguments": {}}, ""),
        ("not-an-object", {"name": "search", "arguments": ["x"]}, "search"),
    ],
)
def test_a_call_no_tool_runs_still_gets_its_audit_row(
    hub: Hub, case: str, params: dict[str, Any], tool: str
) -> None:
    """DESIGN §11: one audit row per tools/call, those refused before a tool runs included."""
    name = f"unrun-{case}"
    token = hub.token("sync", ("shop",), name)
    session = hub.initialize(token)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}
    reply = hub.post("/mcp", body, token, session)
    assert reply.body["error"]["code"] == -32602
    assert _audit(hub.db, name) == [(tool, None, "error", None)]


def test_the_dismiss_reason_is_in_its_audit_row_redacted_and_cut_as_the_item_keeps_it(
    hub: Hub,
) -> None:
    """The reference: dismiss_memory's reason is "kept in the audit trail, cut to 300
    characters"; read back by ``aletheia audit`` and the hub's Audit page."""
    token = hub.token("sync", ("shop",), "dismisser")
    session = hub.initialize(token)
    hub.call_tool(token, session, "save_memory", text="A note to hide")
    text, _ = hub.call_tool(token, session, "search", query="hide")
    memory_id = int(text.split("#")[1].split()[0])
    reason = "zebra-quartz-4711 DB_PASSWORD=hunter2hunter2 " + "x" * 400
    hub.call_tool(token, session, "dismiss_memory", id=memory_id, reason=reason)
    kept = ("zebra-quartz-4711 DB_PASSWORD=[REDACTED] " + "x" * 400)[:300]
    assert _audit(hub.db, "dismisser")[-1] == ("dismiss_memory", "shop", "ok", kept)
    assert "hunter2" not in "\n".join(dump_at(hub.db))
    listed = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", "audit", "--hub-db", str(hub.db), "--json",
         "--token", "dismisser", "--tool", "dismiss_memory"],
        capture_output=True, text=True, timeout=WAIT_SECONDS, check=True,
    )  # fmt: skip
    assert [row["detail"] for row in json.loads(listed.stdout)] == [kept]
    admin = hub.token("admin", None, "dismiss-auditor")
    page = httpx.get(
        hub.url + "/audit?token=dismisser",
        headers={"Authorization": f"Bearer {admin}"},
        timeout=WAIT_SECONDS,
    )
    assert f'<td class="wrap" data-label="Detail">{kept}</td>' in page.text


def test_every_audit_row_names_the_project_the_call_acted_on(hub: Hub) -> None:
    store_token = hub.token("sync", ("shop",), "named-rows")
    session = hub.initialize(store_token)
    hub.call_tool(store_token, session, "session_start_context")
    hub.call_tool(store_token, session, "add_rule", then="Use pnpm", scopeTier="project")
    hub.call_tool(store_token, session, "save_memory", text="x", project="billing")
    other = hub.token("sync", None, "named-rows-admin")
    other_session = hub.initialize(other)
    hub.call_tool(other, other_session, "save_memory", text="A billing note", project="billing")
    text, _ = hub.call_tool(other, other_session, "search", query="billing", project="billing")
    billing_id = int(text.split("#")[1].split()[0])
    hub.call_tool(store_token, session, "dismiss_memory", id=billing_id)
    hub.call_tool(other, other_session, "add_rule", then="Be kind")
    assert _audit(hub.db, "named-rows") == [
        ("session_start_context", "shop", "ok", None),
        ("add_rule", "shop", "ok", None),
        ("save_memory", "billing", "refused", None),
        ("dismiss_memory", "billing", "refused", None),
    ]
    assert _audit(hub.db, "named-rows-admin")[-1] == ("add_rule", "*", "ok", None)


def test_a_read_across_projects_and_a_missing_item_are_audited_as_docs_say(hub: Hub) -> None:
    wide = hub.token("admin", None, "wide-reader")
    session = hub.initialize(wide)
    hub.call_tool(wide, session, "fact_history", subject="payments-api")
    hub.call_tool(wide, session, "list_rules")
    hub.call_tool(wide, session, "dismiss_memory", id=999999)
    narrow = hub.token("sync", ("shop", "billing"), "two-projects")
    narrow_session = hub.initialize(narrow)
    hub.call_tool(narrow, narrow_session, "search", query="anything")
    hub.call_tool(narrow, narrow_session, "fact_history", subject="payments-api")
    # fact_history without a project reads every project the token has: "*", not the hub's
    # working folder; a missing item has no project; a search reads the token's first project.
    assert _audit(hub.db, "wide-reader") == [
        ("fact_history", "*", "ok", None),
        ("list_rules", "*", "ok", None),
        ("dismiss_memory", None, "error", None),
    ]
    assert _audit(hub.db, "two-projects") == [
        ("search", "shop", "ok", None),
        ("fact_history", "shop,billing", "ok", None),
    ]


def test_aletheia_audit_prints_a_forged_newline_as_an_escape(hub: Hub, tmp_path: Path) -> None:
    token = hub.token("sync", None, "forger")
    session = hub.initialize(token)
    forged = "shop\n2026-01-01 00:00:00  admin  save_memory  billing  ok\x1b[2J"
    hub.call_tool(token, session, "work_state_read", list="x", project=forged)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ALETHEIA_")}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "aletheia_mem",
            "audit",
            "--hub-db",
            str(hub.db),
            "--token",
            "forger",
        ],
        env={**env, "HOME": str(tmp_path), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2  # the header and the one row
    assert "shop\\n2026-01-01" in lines[1] and "\\x1b[2j" in lines[1] and "\x1b" not in done.stdout


def test_one_token_opening_many_sessions_never_ends_another_tokens_session(hub: Hub) -> None:
    calm = hub.token("read", ("shop",), "calm")
    calm_session = hub.initialize(calm)
    greedy = hub.token("read", ("shop",), "greedy")
    first = hub.initialize(greedy)
    for _ in range(110):  # past the cap of 100 sessions per token
        hub.initialize(greedy)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert hub.post("/mcp", ping, calm, calm_session).status == 200
    assert hub.post("/mcp", ping, greedy, first).status == 404  # its own oldest went


def test_two_hub_processes_on_one_store_share_each_tokens_limit(tmp_path: Path) -> None:
    db = tmp_path / "hub.db"
    with running_hub(db) as first, running_hub(db) as second:
        token = first.token("sync", ("shop",), "shared")
        session = first.initialize(token)  # 1 request
        batch = [_call(n, "save_memory", text=f"note {n}") for n in range(60)]
        on_first = first.post("/mcp", batch[:55], token, session)  # 56 in the minute
        on_second = second.post("/mcp", batch[55:], token, session)  # 5 more would be 61
    assert on_first.status == 200 and len(on_first.body) == 55
    assert on_second.status == 429 and 1 <= int(on_second.headers["retry-after"]) <= 60
    assert counts_at(db)["memories"] == 55
