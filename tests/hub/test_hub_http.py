"""The hub over real HTTP: scopes, project limits, the rate limit, 401s and the audit trail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aletheia_mem.hub.audit import LIMITED_AUDITED_PER_MINUTE
from aletheia_mem.hub.refused_id import MAX_ID_BODY_BYTES
from aletheia_mem.tools.registry import TOOLS, WRITE_TOOLS
from tests.hub.helpers import Hub, running_hub
from tests.stores import dump_at, open_target, rows_at

pytestmark = pytest.mark.e2e

ARGUMENTS = {
    "session_start_context": {},
    "search": {"query": "pnpm"},
    "timeline": {"query": "pnpm"},
    "get_observations": {"ids": [1]},
    "fact_history": {"subject": "shop"},
    "list_rules": {},
    "work_state_read": {"list": "todo"},
    "save_memory": {"text": "Use pnpm in the shop repo"},
    "add_rule": {"then": "Run the tests before you commit", "scopeTier": "project"},
    "confirm_rule": {"id": "r_0000000000"},
    "dismiss_memory": {"id": 999999},
    "restore_memory": {"id": 999999},
    "work_state_write": {"list": "todo", "items": ["ship docs"]},
}


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db) as started:
        yield started


def _audit(db: Path | str, actor: str) -> list[tuple[str, str | None, str, str | None]]:
    sql = "SELECT tool, project, result, detail FROM audit WHERE actor = ? ORDER BY id"
    return rows_at(db, sql, actor)  # type: ignore[return-value]


def test_arguments_cover_every_tool() -> None:
    assert set(ARGUMENTS) == {tool.name for tool in TOOLS}


@pytest.mark.parametrize("scope", ["mcp", "read", "sync", "admin"])
def test_each_scope_calls_exactly_the_tools_it_may(hub: Hub, scope: str) -> None:
    token = hub.token(scope, ("shop",), f"scope-{scope}")
    session = hub.initialize(token)
    for name, arguments in ARGUMENTS.items():
        text, is_error = hub.call_tool(token, session, name, **arguments)
        if name in WRITE_TOOLS and scope in ("mcp", "read"):
            assert (text, is_error) == (f"This token cannot call {name}.", True)
        else:
            assert not text.startswith("This token cannot call"), (name, text)
    rows = _audit(hub.db, f"scope-{scope}")
    assert [row[0] for row in rows] == list(ARGUMENTS)
    refused = {row[0] for row in rows if row[2] == "refused"}
    assert refused == (set(WRITE_TOOLS) if scope in ("mcp", "read") else set())


def test_work_state_write_is_refused_to_an_mcp_token(hub: Hub) -> None:
    token = hub.token("mcp", ("shop",), "mcp-worklist")
    session = hub.initialize(token)
    text, is_error = hub.call_tool(token, session, "work_state_write", list="todo", items=["x"])
    assert (text, is_error) == ("This token cannot call work_state_write.", True)
    assert hub.call_tool(token, session, "work_state_read", list="never-written") == (
        'No list named "never-written".',
        False,
    )


def test_project_limited_token_is_refused_every_other_project(hub: Hub) -> None:
    token = hub.token("sync", ("shop", "web"), "limited")
    session = hub.initialize(token)
    refusal = ('Project "billing" is not allowed for this token.', True)
    for name in ("save_memory", "search", "session_start_context", "work_state_write"):
        arguments = {**ARGUMENTS[name], "project": "billing"}
        assert hub.call_tool(token, session, name, **arguments) == refusal, name
    assert hub.call_tool(token, session, "search", query="x", project="Billing") == refusal
    rows = _audit(hub.db, "limited")
    assert {(row[1], row[2]) for row in rows} == {("billing", "refused")}


def test_limited_token_defaults_to_its_first_project_and_searches_only_its_own(hub: Hub) -> None:
    admin = hub.token("admin", None, "admin-all")
    admin_session = hub.initialize(admin)
    hub.call_tool(admin, admin_session, "save_memory", text="Billing uses gizmo", project="billing")
    hub.call_tool(admin, admin_session, "save_memory", text="Web uses gizmo", project="web")
    token = hub.token("sync", ("web", "shop"), "web-first")
    session = hub.initialize(token)
    text, is_error = hub.call_tool(token, session, "session_start_context")
    assert not is_error and "# Memory for web" in text
    found, _ = hub.call_tool(token, session, "search", query="gizmo")
    assert "Web uses gizmo" in found and "Billing" not in found
    everywhere, _ = hub.call_tool(admin, admin_session, "search", query="gizmo", project="*")
    assert "Billing uses gizmo" in everywhere
    saved, _ = hub.call_tool(token, session, "save_memory", text="Default project note")
    assert saved.endswith(" in web.")


def test_missing_unknown_or_revoked_token_gets_401_with_a_bearer_challenge(hub: Hub) -> None:
    body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
    for token in (None, "alt_not-a-real-token-at-all-000000", "not even prefixed"):
        reply = hub.post("/mcp", body, token)
        assert reply.status == 401
        assert reply.headers["www-authenticate"].startswith('Bearer realm="aletheia-sync"')
    revoked = hub.token("admin", None, "soon-revoked")
    assert hub.post("/mcp", body, revoked).status == 200
    store = open_target(hub.db)  # revoked by another process, as `mcp-link revoke` does
    try:
        assert store.revoke_token("soon-revoked", 1) is not None
    finally:
        store.close()
    # At once on SQLite; within half a second on PostgreSQL, whose processes remember a token
    # that long (test_hub_processes: within a second across processes).
    statuses, seconds = hub.statuses_until_refused(body, revoked)
    assert statuses[-1] == 401 and seconds < 1.0, (statuses, seconds)
    if isinstance(hub.db, Path):
        assert statuses == [401]
    assert hub.post("/mcp", body, revoked).status == 401
    assert hub.post("/sync/hello", {"store_id": "x"}, None).status == 401
    rows = _audit(hub.db, "(no token)")
    assert len(rows) >= 4 and {row[2] for row in rows} == {"refused"}
    assert ("auth", "*", "refused", "revoked token") in _audit(hub.db, "soon-revoked")


def test_a_revoked_tokens_later_requests_are_audited_under_its_name(
    hub_db: Path | str,
) -> None:
    """An operator reading the audit sees a revoked token still in use, by name: before, each
    of its requests read "(no token) auth refused unknown token", as a made-up token's does.
    The client is told no more than before; the token itself is in no row."""
    with running_hub(hub_db) as hub:
        token = hub.token("sync", ("shop",), "gina")
        body = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {}}
        assert hub.post("/mcp", body, token).status == 200
        store = open_target(hub.db)
        try:
            assert store.revoke_token("gina", 1) is not None
        finally:
            store.close()
        assert hub.statuses_until_refused(body, token)[0][-1] == 401
        refused = hub.post("/sync/hello", {"store_id": "x"}, token)
        assert refused.status == 401
        assert refused.body["error"]["message"] == "Unauthorized: the token is unknown or revoked."
        assert hub.post("/mcp", body, "alt_not-a-real-token-at-all-000000").status == 401
    assert _audit(hub.db, "gina")[-2:] == [("auth", "shop", "refused", "revoked token")] * 2
    assert _audit(hub.db, "(no token)") == [("auth", None, "refused", "unknown token")]
    assert token not in "\n".join(dump_at(hub.db))


def test_a_session_belongs_to_the_token_that_opened_it(hub: Hub) -> None:
    owner, other = hub.token("admin", None, "owner"), hub.token("admin", None, "intruder")
    session = hub.initialize(owner)
    reply = hub.post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, other, session)
    assert reply.status == 404


def test_read_tokens_may_not_use_the_sync_api(hub: Hub) -> None:
    token = hub.token("read", None, "reader")
    reply = hub.post("/sync/hello", {"store_id": "abc"}, token)
    assert reply.status == 403
    assert reply.body["error"]["code"] == "forbidden"
    assert _audit(hub.db, "reader") == [("sync-hello", "*", "refused", "forbidden")]


def test_audit_rows_never_hold_the_arguments(hub: Hub) -> None:
    token = hub.token("admin", ("shop",), "auditor")
    session = hub.initialize(token)
    secret_words = "zebra-quartz-unique-4711"
    hub.call_tool(token, session, "save_memory", text=f"Remember {secret_words}", title="t1")
    hub.call_tool(token, session, "search", query=secret_words)
    hub.call_tool(token, session, "work_state_write", list=secret_words, items=[secret_words])
    hub.call_tool(token, session, "dismiss_memory", id=999999, reason=secret_words)
    rows = _audit(hub.db, "auditor")
    assert rows == [
        ("save_memory", "shop", "ok", None),
        ("search", "shop", "ok", None),
        ("work_state_write", "shop", "ok", None),
        ("dismiss_memory", None, "error", None),
    ]
    audit_lines = [line for line in dump_at(hub.db) if line.startswith('INSERT INTO "audit"')]
    assert audit_lines and not any(secret_words in line for line in audit_lines)


def test_the_sixty_first_request_in_a_minute_gets_429_with_retry_after(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db") as hub:
        token = hub.token("read", ("shop",), "busy")
        session = hub.initialize(token)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        statuses = [hub.post("/mcp", ping, token, session).status for _ in range(59)]
        assert statuses == [200] * 59
        refused = hub.post("/mcp", ping, token, session)
        assert refused.status == 429
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert "60 requests per minute" in refused.body["error"]["message"]
        other = hub.token("read", ("shop",), "calm")
        assert hub.post("/mcp", ping, other, hub.initialize(other)).status == 200
        assert _audit(hub.db, "busy")[-1][:3] == ("rate-limit", "shop", "refused")


def test_a_request_over_the_rate_limit_gets_its_own_id_back(tmp_path: Path) -> None:
    """A JSON-RPC client matches an error to its request by id: the 429 names the refused one
    (a string id too); a batch, a body that is no request or one too large to read for its id
    gets null as before."""
    with running_hub(tmp_path / "hub.db", "--rate-limit", "2") as hub:
        token = hub.token("read", ("shop",), "busy")
        session = hub.initialize(token)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        assert hub.post("/mcp", ping, token, session).status == 200
        call = {"jsonrpc": "2.0", "id": 61, "method": "tools/call", "params": {"name": "search"}}
        refused = hub.post("/mcp", call, token, session)
        named = hub.post("/mcp", {"jsonrpc": "2.0", "id": "sixty-two", "method": "ping"}, token)
        batch = hub.post("/mcp", [{"jsonrpc": "2.0", "id": 63, "method": "ping"}], token)
        not_json = hub.post("/mcp", "not a request", token)
        padding = "x" * MAX_ID_BODY_BYTES  # a body past what is read for its id
        large = hub.post("/mcp", {"jsonrpc": "2.0", "id": 64, "method": padding}, token)

    assert refused.status == 429
    assert refused.body == {
        "jsonrpc": "2.0",
        "id": 61,
        "error": {"code": -32600, "message": refused.body["error"]["message"]},
    }
    assert refused.body["error"]["message"].startswith("Too many requests: this token may make 2")
    assert (named.status, named.body["id"]) == (429, "sixty-two")
    assert (batch.status, batch.body["id"]) == (429, None)
    assert (not_json.status, not_json.body["id"]) == (429, None)
    assert (large.status, large.body["id"]) == (429, None)


def test_a_client_that_ignores_retry_after_leaves_few_rate_limit_rows(tmp_path: Path) -> None:
    """Every refused request used to add an audit row (and a write): hundreds a second from one
    client retrying in a loop. The rows are capped per token a minute; the 429s are not."""
    with running_hub(tmp_path / "hub.db", "--rate-limit", "5") as hub:
        token = hub.token("read", ("shop",), "looping")
        session = hub.initialize(token)
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        statuses = [hub.post("/mcp", ping, token, session).status for _ in range(150)]
        rows = [row for row in _audit(hub.db, "looping") if row[0] == "rate-limit"]
    assert statuses.count(200) == 4 and statuses.count(429) == 146
    assert 1 <= len(rows) <= LIMITED_AUDITED_PER_MINUTE
