"""Stateless (2026-07-28) requests through the hub: the same bearer tokens, scopes, project
limits, rate limit and audit rows as sessions, with no session at all."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hub.helpers import STATELESS_META as META
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub
from tests.hub.helpers import stateless_post as post
from tests.stores import rows_at

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "8") as started:
        yield started


def call(hub: Hub, token: str, name: str, **arguments: Any) -> tuple[str, bool]:
    status, body = post(hub, token, "tools/call", name=name, arguments=arguments)
    assert status == 200, body
    return body["result"]["content"][0]["text"], body["result"]["isError"]


def audit(db: Path | str, actor: str) -> list[tuple[str, str | None, str]]:
    sql = "SELECT tool, project, result FROM audit WHERE actor = ? ORDER BY id"
    return rows_at(db, sql, actor)  # type: ignore[return-value]


def test_a_stateless_call_needs_a_token(hub: Hub) -> None:
    status, body = post(hub, None, "tools/list")
    assert status == 401
    assert body["error"]["message"].startswith("Unauthorized")


def test_a_write_token_saves_and_every_call_leaves_an_audit_row(hub: Hub) -> None:
    token = hub.token("admin", ("shop",), "modern-writer")
    assert call(hub, token, "save_memory", text="Use pnpm in the shop repo") == (
        "Saved as #1 in shop.",
        False,
    )
    text, failed = call(hub, token, "search", query="pnpm")
    assert not failed and "(shop, modern-writer)" in text
    assert audit(hub.db, "modern-writer") == [
        ("save_memory", "shop", "ok"),
        ("search", "shop", "ok"),
    ]


def test_a_read_token_is_refused_the_write_tools_and_other_projects(hub: Hub) -> None:
    token = hub.token("read", ("shop",), "modern-reader")
    assert call(hub, token, "save_memory", text="nope") == (
        "This token cannot call save_memory.",
        True,
    )
    assert call(hub, token, "work_state_read", list="todo", project="billing") == (
        'Project "billing" is not allowed for this token.',
        True,
    )
    assert [row[2] for row in audit(hub.db, "modern-reader")] == ["refused", "refused"]


def test_stateless_requests_count_against_the_rate_limit(hub: Hub) -> None:
    token = hub.token("read", ("shop",), "modern-busy")
    statuses = [post(hub, token, "tools/list")[0] for _ in range(9)]
    assert statuses == [200] * 8 + [429]
    assert audit(hub.db, "modern-busy")[-1] == ("rate-limit", "shop", "refused")


def test_a_mismatched_name_header_is_refused_before_the_tool_runs(hub: Hub) -> None:
    token = hub.token("admin", ("shop",), "modern-liar")
    headers_say_search = {"name": "search", "arguments": {"query": "x"}}
    status, body = post(hub, token, "tools/call", **headers_say_search)
    assert status == 200, body
    request = urllib.request.Request(  # noqa: S310
        hub.url + "/mcp",
        data=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "save_memory", "arguments": {"text": "x"}, "_meta": META},
            }
        ).encode(),
        headers={
            "Content-Type": "application/json",
            "Authorization": f"Bearer {token}",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": "search",
        },
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=WAIT_SECONDS)  # noqa: S310
    assert refused.value.code == 400
    assert json.loads(refused.value.read())["error"]["code"] == -32020
    # Refused before it ran, the call still leaves its row (DESIGN §11), under the body's name.
    assert audit(hub.db, "modern-liar") == [
        ("search", "shop", "ok"),
        ("save_memory", None, "refused"),
    ]
