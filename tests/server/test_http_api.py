"""The JSON API under /api/ on a real ``aletheia-server``: same domain, JSON out, stable codes."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("api")) as s:
        yield s


def get(server: RunningServer, path: str, **query: Any) -> Any:
    reply = server.api("GET", f"{path}?{urlencode(query)}" if query else path)
    assert reply.status == 200, reply.body
    assert reply.header("content-type") == "application/json"
    return reply.json()


def post(server: RunningServer, path: str, body: Any = None, status: int = 200) -> Any:
    reply = server.api("POST", path, body)
    assert reply.status == status, reply.body
    return reply.json()


def error(server: RunningServer, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    reply = server.api(method, path, body)
    assert reply.header("content-type") == "application/json"
    found = reply.json()["error"]
    return reply.status, (found["code"], found["message"])


def save(server: RunningServer, text: str, **fields: Any) -> dict[str, Any]:
    saved: dict[str, Any] = post(server, "/api/memories", {"text": text, **fields}, 201)["memory"]
    return saved


def test_saved_memory_is_returned_whole_and_saving_again_returns_it(server: RunningServer) -> None:
    body = {"text": "Use pnpm, not npm, in the api repo", "type": "decision", "project": "api1"}
    first = post(server, "/api/memories", body, 201)
    memory = first["memory"]
    assert first["created"] is True
    assert memory["project"] == "api1"
    assert memory["type"] == "decision"
    assert memory["kind"] == "note"
    assert memory["tool"] == "api"
    assert memory["title"] == "Use pnpm, not npm, in the api repo"
    assert memory["created_at"].endswith("Z") and memory["dismissed_at"] is None
    again = post(server, "/api/memories", body, 200)
    assert again == {"memory": memory, "created": False}
    assert get(server, f"/api/memories/{memory['id']}") == memory


def test_secrets_are_redacted_before_the_api_stores_them(server: RunningServer) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    memory = save(server, f"deploy token {secret} lives in the vault", project="api-secret")
    assert secret not in memory["text"]


def test_search_applies_every_filter_of_the_search_tool(server: RunningServer) -> None:
    project = "api2"
    gotcha = save(server, "Staging deploys need the VPN", type="gotcha", project=project)
    note = save(server, "Deploys run from the main branch", project=project)
    found = get(server, "/api/memories", query="deploys", project=project)
    assert {m["id"] for m in found["memories"]} == {gotcha["id"], note["id"]}
    assert found["empty_reason"] is None
    only_gotchas = get(server, "/api/memories", query="deploys", project=project, type="gotcha")
    assert [m["id"] for m in only_gotchas["memories"]] == [gotcha["id"]]
    by_kind = get(server, "/api/memories", query="deploys", project=project, kind="summary")
    assert by_kind["memories"] == []
    assert by_kind["empty_reason"] == "The filters (kind) excluded every memory that matched."
    oldest = get(server, "/api/memories", query="deploys", project=project, order="date_asc")
    assert [m["id"] for m in oldest["memories"]] == [gotcha["id"], note["id"]]
    paged = get(server, "/api/memories", query="deploys", project=project, limit=1, offset=1)
    assert len(paged["memories"]) == 1
    future = get(server, "/api/memories", query="deploys", project=project, since="2999-01-01")
    assert future["memories"] == []
    past = get(server, "/api/memories", query="deploys", project=project, until="2000-01-01")
    assert past["memories"] == []
    old = get(server, "/api/memories", query="deploys", project=project, older_than_days=1)
    assert old["memories"] == []
    everywhere = get(server, "/api/memories", query="staging vpn", project="*")
    assert gotcha["id"] in [m["id"] for m in everywhere["memories"]]
    elsewhere = get(server, "/api/memories", query="staging", project="nobody-here")
    assert elsewhere["empty_reason"] == 'Project "nobody-here" has no memories yet.'


def test_search_by_file_finds_saved_paths(server: RunningServer) -> None:
    memory = save(server, "Checkout retries", files=["src/shop/checkout.py"], project="api3")
    exact = get(server, "/api/memories", file="src/shop/checkout.py", project="api3")
    assert [m["id"] for m in exact["memories"]] == [memory["id"]]
    suffix = get(server, "/api/memories", file="checkout.py", file_suffix="true", project="api3")
    assert [m["id"] for m in suffix["memories"]] == [memory["id"]]


def test_search_errors_carry_the_tool_messages(server: RunningServer) -> None:
    assert error(server, "GET", "/api/memories") == (400, ("invalid_input", "query is required."))
    status, (code, message) = error(server, "GET", "/api/memories?query=x&limit=500")
    assert (status, code, message) == (400, "invalid_input", "limit must be from 1 to 100.")
    status, (code, message) = error(server, "GET", "/api/memories?query=x&since=yesterday")
    assert message == "since must be an ISO 8601 date, date-time or epoch milliseconds."
    status, (code, message) = error(server, "GET", "/api/memories?query=x&until=10000-01-01")
    assert (status, code) == (400, "invalid_input")
    assert get(server, "/api/memories", query="x", until="9999-12-31")["memories"] == []


def test_dismissed_memory_is_hidden_from_search_until_restored(server: RunningServer) -> None:
    memory = save(server, "Flaky cache warmer in nightly job", project="api4")
    dismissed = post(server, f"/api/memories/{memory['id']}/dismiss", {"reason": "duplicate"})
    assert dismissed == {"type": "memory", "id": memory["id"], "project": "api4", "dismissed": True}
    assert get(server, "/api/memories", query="warmer", project="api4")["memories"] == []
    shown = get(server, f"/api/memories/{memory['id']}")
    assert shown["dismissed_at"] is not None and shown["dismiss_reason"] == "duplicate"
    post(server, f"/api/memories/{memory['id']}/restore")
    found = get(server, "/api/memories", query="warmer", project="api4")["memories"]
    assert [m["id"] for m in found] == [memory["id"]]


def test_pinned_memory_is_listed_under_pinned_in_the_context(server: RunningServer) -> None:
    memory = save(server, "Always run make lint first", project="api5")
    assert memory["pinned"] is False
    pinned = post(server, f"/api/memories/{memory['id']}/pin")
    assert pinned["pinned"] is True
    context = get(server, "/api/context", project="api5")
    assert context["project"] == "api5"
    assert context["markdown"].startswith("# Memory for api5\n## Pinned\n")
    assert post(server, f"/api/memories/{memory['id']}/pin", {"pinned": False})["pinned"] is False
    assert "## Pinned" not in get(server, "/api/context", project="api5")["markdown"]


def test_unknown_ids_get_404_not_found(server: RunningServer) -> None:
    assert error(server, "GET", "/api/memories/999999") == (
        404,
        ("not_found", "No memory #999999."),
    )
    assert error(server, "POST", "/api/memories/999999/dismiss")[0] == 404
    assert error(server, "POST", "/api/memories/999999/pin")[0] == 404
    assert error(server, "POST", "/api/facts/999999/restore") == (
        404,
        ("not_found", "No fact #999999."),
    )
    status, (code, _) = error(server, "GET", f"/api/memories/{2**70}")
    assert (status, code) == (400, "invalid_input")
    assert error(server, "GET", "/api/memories/abc")[0] == 400


def test_timeline_shows_neighbours_in_time_order(server: RunningServer) -> None:
    ids = [
        save(server, f"timeline step {n} of the release", project="api6")["id"] for n in range(3)
    ]
    found = get(server, "/api/timeline", anchor=ids[1], before=1, after=1)
    assert found["anchor"]["id"] == ids[1]
    assert [m["id"] for m in found["before"]] == [ids[0]]
    assert [m["id"] for m in found["after"]] == [ids[2]]
    assert error(server, "GET", "/api/timeline?anchor=999999") == (
        404,
        ("not_found", "Nothing to anchor on."),
    )
    assert error(server, "GET", "/api/timeline")[0] == 400


def test_a_new_fact_supersedes_the_old_and_history_shows_both(server: RunningServer) -> None:
    fact = {"subject": "payments-api", "predicate": "database", "project": "api7"}
    first = post(
        server, "/api/facts", {**fact, "object": "MySQL 8", "valid_from": "2026-01-01"}, 201
    )
    assert post(server, "/api/facts", {**fact, "object": "MySQL 8"}, 200)["created"] is False
    second = post(server, "/api/facts", {**fact, "object": "PostgreSQL 16"}, 201)["fact"]
    current = get(server, "/api/facts", subject="payments-api", project="api7")
    assert [f["object"] for f in current["facts"]] == ["PostgreSQL 16"]
    history = get(
        server, "/api/facts", subject="payments-api", project="api7", include_superseded="true"
    )
    assert [f["object"] for f in history["facts"]] == ["PostgreSQL 16", "MySQL 8"]
    assert history["facts"][1]["superseded_by"] == second["id"]
    assert first["fact"]["valid_from"] == "2026-01-01T00:00:00.000Z"
    back_then = get(
        server, "/api/facts", subject="payments-api", project="api7", as_of="2026-02-01"
    )
    assert [f["object"] for f in back_then["facts"]] == ["MySQL 8"]
    assert error(server, "POST", "/api/facts", {"subject": "x"}) == (
        400,
        ("invalid_input", "predicate is required."),
    )


def test_a_save_giving_one_subject_and_predicate_two_values_is_refused_whole(
    server: RunningServer,
) -> None:
    facts = [
        {"subject": "a", "predicate": "b", "object": "c"},
        {"subject": "a", "predicate": "b", "object": "z"},
    ]
    body = {"text": "atomic3 over the API", "project": "api-facts", "facts": facts}

    assert error(server, "POST", "/api/memories", body) == (
        400,
        (
            "invalid_input",
            'facts[1] gives subject "a" and predicate "b" another value than facts[0] from the'
            " same time: one call states one value for each (a later valid_from records a"
            " change).",
        ),
    )
    assert get(server, "/api/memories", query="atomic3", project="api-facts")["memories"] == []
    assert get(server, "/api/facts", subject="a", project="api-facts")["facts"] == []


def test_a_rule_with_a_scope_name_and_no_tier_is_refused(server: RunningServer) -> None:
    body = {"then": "Named but everywhere", "scopeName": "billing"}

    assert error(server, "POST", "/api/rules", body) == (
        400,
        ("invalid_input", "scopeTier project or situation is required when scopeName is given."),
    )


def test_rules_are_added_once_confirmed_and_disabled(server: RunningServer) -> None:
    memory = save(server, "We never commit .env files", project="api8")
    body = {"then": "Never commit .env files", "when": "you stage files"}
    added = post(server, "/api/rules", {**body, "evidence_memory_ids": [memory["id"]]}, 201)
    rule = added["rule"]
    assert rule["id"].startswith("r_") and rule["enabled"] is True
    assert rule["recheck_reason"] is None
    assert post(server, "/api/rules", body, 200)["created"] is False
    listed = get(server, "/api/rules")["rules"]
    assert rule["id"] in [r["id"] for r in listed]
    post(server, f"/api/memories/{memory['id']}/dismiss")
    flagged = {r["id"]: r for r in get(server, "/api/rules")["rules"]}[rule["id"]]
    assert flagged["recheck_reason"] == f"evidence memory #{memory['id']} was dismissed"
    confirmed = post(server, f"/api/rules/{rule['id']}/confirm")
    assert confirmed["id"] == rule["id"]
    disabled = post(server, f"/api/rules/{rule['id']}/disable")
    assert disabled["enabled"] is False
    assert rule["id"] not in [r["id"] for r in get(server, "/api/rules")["rules"]]
    everything = get(server, "/api/rules", include_disabled="true")["rules"]
    assert rule["id"] in [r["id"] for r in everything]
    assert error(server, "POST", "/api/rules/r_0000000000/confirm") == (
        404,
        ("not_found", 'No rule with id "r_0000000000".'),
    )
    assert error(server, "POST", "/api/rules", {"then": "x", "evidence_memory_ids": [999999]}) == (
        400,
        ("invalid_input", "Unknown evidence memory id #999999."),
    )


def test_work_state_lists_are_written_listed_and_read(server: RunningServer) -> None:
    items = ["ship docs", {"task": "test hooks", "done": False}]
    reply = server.api("PUT", "/api/work-state/todo", {"items": items, "project": "api9"})
    assert reply.status == 200
    written = reply.json()
    assert written["count"] == 2 and written["name"] == "todo"
    index = get(server, "/api/work-state", project="api9")
    assert [(entry["name"], entry["count"]) for entry in index["lists"]] == [("todo", 2)]
    read = get(server, "/api/work-state/todo", project="api9")
    assert read["items"] == items and read["id"] == written["id"]
    assert error(server, "GET", "/api/work-state/nope?project=api9") == (
        404,
        ("not_found", 'No list named "nope".'),
    )
    assert error(server, "GET", "/api/work-state/say%20%22hi%22?project=api9") == (
        404,
        ("not_found", 'No list named "say \\"hi\\"".'),
    )


def test_a_list_is_renamed_in_one_call_and_a_taken_name_refuses_it(
    server: RunningServer,
) -> None:
    project = {"project": "api-rename"}
    first = server.api("PUT", "/api/work-state/todo", {"items": ["a"], **project}).json()
    server.api("PUT", "/api/work-state/later", {"items": ["x"], **project})
    body = {"to": "later", "items": ["b"], **project}
    assert error(server, "POST", "/api/work-state/todo/rename", body) == (
        409,
        ("conflict", 'A list named "later" exists; nothing was renamed.'),
    )
    body = {"to": "plan", "items": ["b"], **project}
    assert error(server, "POST", "/api/work-state/nope/rename", body) == (
        404,
        ("not_found", 'No list named "nope".'),
    )
    reply = server.api("POST", "/api/work-state/todo/rename", body)
    assert reply.status == 200, reply.body
    renamed = reply.json()
    assert {**renamed, "id": 0} == {"project": "api-rename", "name": "plan", "id": 0, "count": 1}
    assert renamed["id"] != first["id"]  # a new list; the old one is dismissed
    assert get(server, f"/api/memories/{first['id']}")["dismiss_reason"] == "renamed to plan"
    index = get(server, "/api/work-state", **project)
    assert sorted(entry["name"] for entry in index["lists"]) == ["later", "plan"]
    assert get(server, "/api/work-state/plan", **project)["items"] == ["b"]


def test_a_list_with_a_number_json_cannot_hold_is_refused_and_nothing_is_stored(
    server: RunningServer,
) -> None:
    for number in ("1e309", "-1e309"):  # valid JSON that parses to an infinite float
        body = '{"items": ["ship", ' + number + '], "project": "api-inf"}'
        reply = server.request(
            "PUT", "/api/work-state/inf", body, {"Content-Type": "application/json"}
        )
        assert reply.status == 400, reply.body
        assert reply.json()["error"] == {
            "code": "invalid_input",
            "message": "items must hold only finite numbers.",
        }
    assert get(server, "/api/work-state", project="api-inf")["lists"] == []


def test_context_preview_is_the_session_start_block(server: RunningServer) -> None:
    empty = get(server, "/api/context", project="api-empty")["markdown"]
    assert empty.startswith("# Memory for api-empty\nNothing saved for this project yet.")
    assert "Context economics:" in empty


def test_bad_requests_get_json_errors_with_stable_codes(server: RunningServer) -> None:
    assert error(server, "GET", "/api/nowhere")[1][0] == "not_found"
    status, (code, _) = error(server, "DELETE", "/api/memories")
    assert (status, code) == (405, "method_not_allowed")
    raw = server.request("POST", "/api/memories", "{broken", {"Content-Type": "application/json"})
    assert raw.status == 400
    assert raw.json()["error"] == {
        "code": "invalid_input",
        "message": "The request body must be a JSON object.",
    }
    form = server.request("POST", "/api/memories", "text=x", {"Content-Type": "text/plain"})
    assert (form.status, form.json()["error"]["code"]) == (415, "unsupported_media_type")
    surrogate = server.request(
        "POST", "/api/memories", '{"text": "\\ud800"}', {"Content-Type": "application/json"}
    )
    assert surrogate.status == 400
    deep = '{"items": [{"a": ' + "[" * 900 + "1" + "]" * 900 + "}]}"
    nested = server.request(
        "PUT", "/api/work-state/deep", deep, {"Content-Type": "application/json"}
    )
    assert nested.status == 400
    assert nested.json()["error"]["message"] == (
        "The request body is refused: arguments must not nest more than 32 levels deep."
    )
    assert error(server, "POST", "/api/memories", {"text": "  "}) == (
        400,
        ("invalid_input", "text is required."),
    )
    assert error(server, "POST", "/api/memories", {"text": "x", "project": "*"}) == (
        400,
        ("invalid_input", 'project "*" is only for search and timeline.'),
    )


def test_openapi_document_describes_every_route(server: RunningServer) -> None:
    document = get(server, "/api/openapi.json")
    assert document["openapi"] == "3.1.0"
    paths = document["paths"]
    assert set(paths) == {
        "/api/memories",
        "/api/memories/{memory_id}",
        "/api/memories/{memory_id}/dismiss",
        "/api/memories/{memory_id}/restore",
        "/api/memories/{memory_id}/pin",
        "/api/timeline",
        "/api/facts",
        "/api/facts/{fact_id}/dismiss",
        "/api/facts/{fact_id}/restore",
        "/api/rules",
        "/api/rules/{rule_id}/confirm",
        "/api/rules/{rule_id}/disable",
        "/api/work-state",
        "/api/work-state/{name}",
        "/api/work-state/{name}/rename",
        "/api/context",
    }
    search = paths["/api/memories"]["get"]
    names = {p["name"] for p in search["parameters"]}
    assert names == {
        "query",
        "file",
        "file_suffix",
        "project",
        "type",
        "kind",
        "limit",
        "offset",
        "since",
        "until",
        "older_than_days",
        "order",
        "upto",  # the bounds that keep a listing's later pages on its first page's view
        "at",
    }
    limit = next(p for p in search["parameters"] if p["name"] == "limit")
    assert limit["schema"] == {"type": "integer", "minimum": 1, "maximum": 100, "default": 20}
    assert "security" not in search  # no ALETHEIA_API_KEY on this server


def test_a_rule_added_through_the_api_shows_source_you_and_one_over_mcp_its_tool(
    server: RunningServer,
) -> None:
    added = post(server, "/api/rules", {"then": "Pin every dependency", "when": "you add one"}, 201)
    assert added["rule"]["source"] == "you"
    session = server.initialize(client="cursor")
    over_mcp = {"then": "Write the changelog", "when": "you release", "scopeTier": "everywhere"}
    server.call_tool(session, "add_rule", over_mcp)
    listed = server.call_tool(session, "list_rules", {}, request_id=2)["content"][0]["text"]
    line = next(row for row in listed.splitlines() if "Pin every dependency" in row)
    assert "source: you" in line
    line = next(row for row in listed.splitlines() if "Write the changelog" in row)
    assert "source: cursor" in line


def test_later_pages_sent_the_first_pages_upto_keep_its_view_while_others_save(
    server: RunningServer,
) -> None:
    project = "api-pages"
    saved = [save(server, f"Pager note number {n} on the rota", project=project) for n in range(5)]
    newest_first = [memory["id"] for memory in reversed(saved)]
    query = {"query": "pager rota", "project": project, "order": "date_desc", "limit": 2}
    first = get(server, "/api/memories", **query)
    assert [m["id"] for m in first["memories"]] == newest_first[:2]
    assert first["upto"] >= newest_first[0] and isinstance(first["at"], int)
    later = [save(server, f"Pager note saved later {n} on the rota", project=project) for n in "ab"]
    bound = {"upto": first["upto"], "at": first["at"]}
    second = get(server, "/api/memories", **query, offset=2, **bound)
    third = get(server, "/api/memories", **query, offset=4, **bound)
    assert [m["id"] for m in second["memories"]] == newest_first[2:4]
    assert [m["id"] for m in third["memories"]] == newest_first[4:]
    assert second["upto"] == first["upto"] and second["at"] == first["at"]
    # Without the bound, offset pages the list as it is now, as before: the page shifted.
    unbound = get(server, "/api/memories", **query, offset=2)
    assert [m["id"] for m in unbound["memories"]] == newest_first[:2]
    assert unbound["upto"] >= later[-1]["id"]
    status, (code, message) = error(server, "GET", "/api/memories?query=pager&upto=0")
    assert (status, code) == (400, "invalid_input") and "upto" in message, message


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("PUT", "/api/work-state/%ff%fe", {"items": [], "project": "api-utf8"}),
        ("GET", "/api/work-state/%ff%fe?project=api-utf8", None),
        ("POST", "/api/work-state/%c3/rename", {"to": "x", "project": "api-utf8"}),
        ("GET", "/api/memories?query=%ff&project=api-utf8", None),
    ],
)
def test_an_address_that_is_not_utf8_once_decoded_is_refused(
    server: RunningServer, method: str, path: str, body: Any
) -> None:
    status, (code, message) = error(server, method, path, body)
    assert (status, code) == (400, "invalid_input")
    assert "is not UTF-8 once its %-escapes are decoded" in message
    assert get(server, "/api/work-state", project="api-utf8")["lists"] == []
