"""JSON-RPC and MCP lifecycle rules of the in-process dispatcher (mcp-protocol.md 1.1-1.5,
1.7 and 1.11).

Every test drives ``handle_payload`` with parsed JSON, the way both transports do, on a real
SQLite store.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import replace
from typing import Any

import pytest

from aletheia_mem import __version__
from aletheia_mem.server.mcp import (
    MAX_BATCH,
    MAX_BATCH_ANSWER,
    McpSession,
    handle_payload,
    only_reads,
)
from aletheia_mem.server.stdio_session import serve
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext

TOOL_NAMES = {
    "search",
    "timeline",
    "get_observations",
    "session_start_context",
    "fact_history",
    "list_rules",
    "work_state_read",
    "save_memory",
    "add_rule",
    "confirm_rule",
    "dismiss_memory",
    "restore_memory",
    "work_state_write",
}
SUPPORTED = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")


@pytest.fixture
def session(app: AppContext) -> McpSession:
    return McpSession(app=app)


def request(method: str, params: Any = None, request_id: Any = 1) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


def initialize_params(
    version: str | None = "2025-11-25", name: str | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"capabilities": {}}
    if version is not None:
        params["protocolVersion"] = version
    if name is not None:
        params["clientInfo"] = {"name": name, "version": "1.0"}
    return params


def single(session: McpSession, payload: Any) -> dict[str, Any]:
    reply = handle_payload(session, payload)
    assert isinstance(reply, dict), reply
    return reply


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    assert "result" not in reply
    assert set(reply) == {"jsonrpc", "id", "error"}
    assert reply["jsonrpc"] == "2.0"
    assert isinstance(reply["error"]["message"], str)
    assert reply["error"]["message"]
    return reply["id"], reply["error"]["code"]


def call_tool(session: McpSession, name: str, arguments: Any, request_id: Any = 1) -> Any:
    return handle_payload(
        session, request("tools/call", {"name": name, "arguments": arguments}, request_id)
    )


def saved_id(reply: dict[str, Any]) -> int:
    text = reply["result"]["content"][0]["text"]
    match = re.fullmatch(r"Saved as #(\d+) in shop\.", text)
    assert match, text
    return int(match.group(1))


# -- initialize ------------------------------------------------------------------------------


@pytest.mark.parametrize("version", SUPPORTED)
def test_initialize_echoes_each_supported_protocol_version(session, version):
    reply = single(session, request("initialize", initialize_params(version)))
    assert reply["id"] == 1
    assert reply["result"]["protocolVersion"] == version
    assert session.protocol_version == version


@pytest.mark.parametrize("version", ["2099-01-01", None, "", 20251125, ["2025-06-18"]])
def test_initialize_counters_an_unknown_or_missing_version_with_the_latest(session, version):
    reply = single(session, request("initialize", initialize_params(version)))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_without_params_still_answers_with_the_latest_version(session):
    reply = single(session, request("initialize"))
    assert reply["result"]["protocolVersion"] == "2025-11-25"


def test_initialize_reports_server_info_and_only_the_tools_capability(session):
    result = single(session, request("initialize", initialize_params(name="x")))["result"]
    assert result["serverInfo"] == {"name": "aletheia", "version": __version__}
    assert result["capabilities"] == {"tools": {"listChanged": False}}
    assert "resources" not in result["capabilities"]
    assert "prompts" not in result["capabilities"]
    assert isinstance(result["instructions"], str)
    assert "session_start_context" in result["instructions"]


def test_initialize_ignores_unknown_meta_and_client_capabilities(session):
    params = initialize_params(name="inspector")
    params["capabilities"] = {"roots": {}, "elicitation": {}, "extensions": {"x/y": {}}}
    params["_meta"] = {"io.modelcontextprotocol/clientInfo": {"name": "ignored"}}
    reply = single(session, request("initialize", params))
    assert reply["result"]["protocolVersion"] == "2025-11-25"
    assert session.client_name == "inspector"


def test_initialize_inside_a_batch_is_refused_and_does_not_initialize(session):
    reply = handle_payload(session, [request("initialize", initialize_params("2025-03-26"))])
    assert isinstance(reply, list)
    assert len(reply) == 1
    assert error_of(reply[0]) == (1, -32600)
    assert session.protocol_version is None
    assert not session.initialized


# -- envelope errors -------------------------------------------------------------------------


@pytest.mark.parametrize("bad_id", [None, True, False, 1.5, 2.0, [1], {"a": 1}])
def test_request_with_null_bool_float_or_structured_id_is_invalid_with_null_id(session, bad_id):
    reply = single(session, request("ping", request_id=bad_id))
    assert error_of(reply) == (None, -32600)


def test_request_without_jsonrpc_member_is_invalid_and_keeps_its_id(session):
    reply = single(session, {"id": 7, "method": "ping"})
    assert error_of(reply) == (7, -32600)


@pytest.mark.parametrize("version", ["1.0", 2.0, None])
def test_request_with_wrong_jsonrpc_version_is_invalid(session, version):
    reply = single(session, {"jsonrpc": version, "id": "a", "method": "ping"})
    assert error_of(reply) == ("a", -32600)


@pytest.mark.parametrize("payload", [42, "ping", None, True, 3.5])
def test_a_message_that_is_not_an_object_is_invalid_with_null_id(session, payload):
    assert error_of(single(session, payload)) == (None, -32600)


def test_request_with_id_but_no_method_is_invalid(session):
    assert error_of(single(session, {"jsonrpc": "2.0", "id": 3})) == (3, -32600)


@pytest.mark.parametrize("method", [5, None, ["ping"], {"name": "ping"}])
def test_request_whose_method_is_not_text_is_invalid(session, method):
    reply = single(session, {"jsonrpc": "2.0", "id": 4, "method": method})
    assert error_of(reply) == (4, -32600)


@pytest.mark.parametrize("params", [[], [1, 2], "x", 3, True])
def test_params_that_are_not_an_object_are_invalid_params(session, params):
    reply = single(session, request("ping", params, request_id=9))
    assert error_of(reply) == (9, -32602)
    assert reply["error"]["message"] == "Invalid params: params must be an object."


@pytest.mark.parametrize(
    "method", ["server/discover", "resources/list", "prompts/list", "logging/setLevel", "x"]
)
def test_unknown_method_is_method_not_found(session, method):
    reply = single(session, request(method, {}, request_id="m"))
    assert error_of(reply) == ("m", -32601)
    assert reply["error"]["message"] == f"Method not found: {method}"


# -- notifications and client responses ------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        notification("notifications/initialized"),
        notification("notifications/cancelled", {"requestId": 1, "reason": "user"}),
        notification("notifications/roots/list_changed"),
        notification("notifications/unknown/thing", {"a": [1]}),
        notification("ping"),
        notification("initialize", initialize_params("2025-06-18")),
        notification("tools/list", "not an object"),
        {"method": "notifications/initialized"},
    ],
)
def test_notifications_are_never_answered(session, message):
    assert handle_payload(session, message) is None


def test_a_tools_call_sent_as_notification_is_not_answered_nor_run(session, app):
    params = {"name": "save_memory", "arguments": {"text": "sent without an id"}}
    assert handle_payload(session, notification("tools/call", params)) is None
    assert app.store.count_memories(None) == 0


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 7, "result": {}},
        {"jsonrpc": "2.0", "id": "x", "result": {"roots": []}},
        {"jsonrpc": "2.0", "id": 8, "error": {"code": -32601, "message": "no"}},
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse"}},
    ],
)
def test_responses_from_the_client_are_ignored(session, message):
    assert handle_payload(session, message) is None


# -- ping, discover, tools/list --------------------------------------------------------------


def test_ping_answers_an_empty_object_before_and_after_initialize(session):
    assert single(session, request("ping", request_id=1)) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {},
    }
    single(session, request("initialize", initialize_params()))
    assert single(session, request("ping", {}, request_id=2))["result"] == {}


def test_server_discover_before_initialize_is_answered_and_initialize_still_works(session):
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "claude-code", "version": "2.1.332"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    probe = request("server/discover", {"_meta": meta}, request_id="server-discover-probe-1")
    reply = single(session, probe)
    assert reply["id"] == "server-discover-probe-1"
    assert reply["result"]["supportedVersions"][:2] == ["2026-07-28", "2025-11-25"]
    assert reply["result"]["resultType"] == "complete"
    # A dual-era client may still choose the handshake after the probe (Claude Code does).
    result = single(session, request("initialize", initialize_params(name="claude-code"), 2))
    assert result["id"] == 2
    assert result["result"]["protocolVersion"] == "2025-11-25"
    assert session.initialized


def test_a_discover_probe_without_client_capabilities_is_invalid_params_never_32022(session):
    probe = request(
        "server/discover",
        {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
        request_id="server-discover-probe-1",
    )
    reply = single(session, probe)
    assert error_of(reply) == ("server-discover-probe-1", -32602)
    assert "data" not in reply["error"]
    result = single(session, request("initialize", initialize_params(name="claude-code"), 2))
    assert result["result"]["protocolVersion"] == "2025-11-25"


def test_tools_list_returns_the_13_tools_in_one_page(session):
    result = single(session, request("tools/list"))["result"]
    assert {tool["name"] for tool in result["tools"]} == TOOL_NAMES
    assert len(result["tools"]) == 13
    assert "nextCursor" not in result
    for tool in result["tools"]:
        assert tool["inputSchema"]["type"] == "object"
        assert re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", tool["name"])


def test_tools_list_is_stable_between_calls(session):
    first = single(session, request("tools/list", request_id=1))["result"]
    second = single(session, request("tools/list", {"cursor": None}, request_id=2))["result"]
    assert first == second


@pytest.mark.parametrize("cursor", ["abc", "", "1", 2])
def test_tools_list_with_an_unknown_cursor_is_invalid_params(session, cursor):
    reply = single(session, request("tools/list", {"cursor": cursor}, request_id=5))
    assert error_of(reply) == (5, -32602)
    assert reply["error"]["message"] == "Invalid params: unknown cursor."


# -- ids -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_id", [0, -1, 2**53 + 1, 10**30, "server-discover-probe-1", "", "ü 1", "0"]
)
def test_request_ids_are_echoed_exactly(session, request_id):
    for message in (request("ping", request_id=request_id), request("nope", None, request_id)):
        reply = single(session, message)
        assert reply["id"] == request_id
        assert type(reply["id"]) is type(request_id)


# -- batches ---------------------------------------------------------------------------------


def test_empty_batch_is_one_invalid_request_error_with_null_id(session):
    reply = handle_payload(session, [])
    assert isinstance(reply, dict)
    assert error_of(reply) == (None, -32600)


def test_batch_gets_one_reply_per_request_and_none_for_notifications(session):
    single(session, request("initialize", initialize_params()))
    batch = [
        request("ping", request_id=1),
        notification("notifications/initialized"),
        request("tools/list", request_id="two"),
        notification("notifications/cancelled", {"requestId": 1}),
        request("nope", request_id=0),
        {"jsonrpc": "2.0", "id": 99, "result": {}},
        request("tools/call", {"name": "search", "arguments": {}}, request_id=3),
    ]
    reply = handle_payload(session, batch)
    assert isinstance(reply, list)
    by_id = {item["id"]: item for item in reply}
    assert len(reply) == 4
    assert set(by_id) == {1, "two", 0, 3}
    assert by_id[1]["result"] == {}
    assert len(by_id["two"]["result"]["tools"]) == 13
    assert error_of(by_id[0]) == (0, -32601)
    assert by_id[3]["result"]["isError"] is True


def test_batch_of_only_notifications_and_responses_gets_no_reply(session):
    batch = [
        notification("notifications/initialized"),
        notification("notifications/cancelled", {"requestId": 4}),
        {"jsonrpc": "2.0", "id": 5, "result": {}},
    ]
    assert handle_payload(session, batch) is None


def test_invalid_members_of_a_batch_get_invalid_request_errors(session):
    reply = handle_payload(session, [1, [], request("ping", request_id=7), {"id": None}])
    assert isinstance(reply, list)
    assert [error_of(item) for item in reply if "error" in item] == [
        (None, -32600),
        (None, -32600),
        (None, -32600),
    ]
    assert [item["result"] for item in reply if "result" in item] == [{}]


def save_call(request_id: int) -> dict[str, Any]:
    arguments = {"text": f"batched note number {request_id}"}
    return request("tools/call", {"name": "save_memory", "arguments": arguments}, request_id)


def test_a_batch_past_the_bound_is_one_invalid_request_error_and_runs_nothing(session):
    single(session, request("initialize", initialize_params()))
    refused = single(session, [save_call(n) for n in range(MAX_BATCH + 1)])
    assert refused == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Invalid request: a batch holds at most 100 messages; this one has 101.",
        },
    }
    answered = handle_payload(session, [save_call(n) for n in range(MAX_BATCH)])
    assert isinstance(answered, list)
    saved = sorted(item["result"]["content"][0]["text"] for item in answered)
    # Ids start at 1: the refused batch saved nothing.
    assert saved == sorted(f"Saved as #{n} in shop." for n in range(1, MAX_BATCH + 1))


def observe_all(request_id: int) -> dict[str, Any]:
    arguments = {"ids": list(range(1, 101))}
    return request("tools/call", {"name": "get_observations", "arguments": arguments}, request_id)


def test_once_a_batchs_answers_are_full_its_later_requests_run_nothing(session):
    single(session, request("initialize", initialize_params()))
    words = " ".join(f"w{n:06d}" for n in range(2_400))  # 19,199 characters
    saves = [
        request("tools/call", {"name": "save_memory", "arguments": {"text": f"{n} {words}"}}, n)
        for n in range(100)
    ]
    assert all("result" in item for item in handle_payload(session, saves))

    batch = [observe_all(n) for n in range(6)] + [notification("notifications/x"), save_call(6)]
    reply = handle_payload(session, batch)

    assert [item["id"] for item in reply] == [0, 1, 2, 3, 4, 5, 6]  # one answer per request
    ran = [item for item in reply if "result" in item]
    assert ran == reply[: len(ran)] and 1 <= len(ran) < 6
    assert len(json.dumps(ran[:-1])) <= MAX_BATCH_ANSWER  # the last answer made them full
    for item in reply[len(ran) :]:
        assert item["error"] == {
            "code": -32000,
            "message": "Server error: this batch's answers passed 8,000,000 characters, so this"
            " request did not run; send it again in a later batch or on its own.",
        }
    # The save turned away did not run: the next one gets the next id.
    assert single(session, save_call(7))["result"]["content"][0]["text"] == (
        "Saved as #101 in shop."
    )


def test_batch_of_one_request_is_answered_with_an_array(session):
    reply = handle_payload(session, [request("ping", request_id=1)])
    assert reply == [{"jsonrpc": "2.0", "id": 1, "result": {}}]


@pytest.mark.parametrize(
    "message",
    [
        request("ping"),
        request("tools/list"),
        request("nope"),
        {"jsonrpc": "2.0", "id": None, "method": "ping"},
        request("tools/call", {"name": "list_rules"}),
    ],
)
def test_a_single_request_is_never_answered_with_an_array(session, message):
    assert isinstance(handle_payload(session, message), dict)


# -- tools/call ------------------------------------------------------------------------------


@pytest.mark.parametrize("params", [{}, {"name": ""}, {"name": None}, {"name": 3}, {"name": []}])
def test_tools_call_without_a_tool_name_is_invalid_params(session, params):
    reply = single(session, request("tools/call", params, request_id=2))
    assert error_of(reply) == (2, -32602)
    assert reply["error"]["message"] == "Invalid params: a tool name is required."


def test_tools_call_with_an_unknown_tool_is_invalid_params(session):
    reply = single(session, request("tools/call", {"name": "drop_tables"}, request_id=2))
    assert error_of(reply) == (2, -32602)
    assert reply["error"]["message"] == "Unknown tool: drop_tables"


def test_an_error_repeats_at_most_100_characters_of_a_long_method_or_tool_name(session):
    tool = single(session, request("tools/call", {"name": "t" * 100_000}))
    method = single(session, request("m" * 100_000))

    assert tool["error"]["message"] == "Unknown tool: " + "t" * 100 + "..."
    assert method["error"]["message"] == "Method not found: " + "m" * 100 + "..."


@pytest.mark.parametrize("arguments", [[], ["text"], "text=x", 5, True])
def test_tools_call_arguments_that_are_not_an_object_are_invalid_params(session, app, arguments):
    reply = call_tool(session, "save_memory", arguments, request_id=6)
    assert error_of(reply) == (6, -32602)
    assert reply["error"]["message"] == "Invalid params: arguments must be an object."
    assert app.store.count_memories(None) == 0


def test_tools_call_without_arguments_runs_the_tool_with_none(session):
    reply = single(session, request("tools/call", {"name": "list_rules"}))
    assert reply["result"] == {
        "content": [{"type": "text", "text": "No rules yet. add_rule adds one."}],
        "isError": False,
    }


def test_tool_failure_is_a_result_with_is_error_true(session):
    reply = call_tool(session, "search", {}, request_id=4)
    assert reply == {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {"content": [{"type": "text", "text": "query is required."}], "isError": True},
    }


def test_tool_input_validation_failure_is_a_result_not_a_protocol_error(session):
    reply = call_tool(session, "search", {"query": "x", "limit": 0})
    assert "error" not in reply
    assert reply["result"]["isError"] is True
    assert reply["result"]["content"] == [{"type": "text", "text": "limit must be from 1 to 100."}]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        (
            "get_observations",
            {"ids": [2**64]},
            "each of ids must be at most 9223372036854775807.",
        ),
        ("dismiss_memory", {"id": 10**40}, "id must be at most 9223372036854775807."),
        ("timeline", {"anchor": "1e30"}, "anchor must be at most 9223372036854775807."),
    ],
)
def test_whole_number_beyond_sqlite_range_is_a_tool_error(session, tool, arguments, message):
    reply = call_tool(session, tool, arguments)
    assert reply["result"] == {"content": [{"type": "text", "text": message}], "isError": True}


@pytest.mark.parametrize(
    "arguments",
    [
        {"text": "half an emoji \ud83d"},
        {"text": "ok", "facts": [{"subject": "\udc00", "predicate": "p", "object": "o"}]},
        {"text": "ok", "\ud800": 1},
    ],
)
def test_lone_surrogates_in_arguments_are_a_tool_error(session, app, arguments):
    reply = call_tool(session, "save_memory", arguments)
    assert reply["result"] == {
        "content": [
            {"type": "text", "text": "arguments must not contain lone surrogate characters."}
        ],
        "isError": True,
    }
    assert app.store.count_memories(None) == 0


def nested_lists(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


def test_arguments_nested_deeper_than_32_levels_are_a_tool_error(session):
    # arguments (1) > items (2) > item object (3) > lists from level 4 on
    too_deep = {"list": "todo", "items": [{"deep": nested_lists(30)}]}
    reply = call_tool(session, "work_state_write", too_deep)
    assert reply["result"] == {
        "content": [{"type": "text", "text": "arguments must not nest more than 32 levels deep."}],
        "isError": True,
    }
    deepest = {"list": "todo", "items": [{"deep": nested_lists(29)}]}
    reply = call_tool(session, "work_state_write", deepest)
    assert reply["result"] == {
        "content": [{"type": "text", "text": 'Saved list "todo" with 1 item(s) as #1.'}],
        "isError": False,
    }


def test_tools_call_ignores_meta_in_params(session):
    params = {"name": "list_rules", "arguments": {}, "_meta": {"progressToken": 1}}
    reply = single(session, request("tools/call", params))
    assert reply["result"]["isError"] is False


# -- the caller ------------------------------------------------------------------------------


def test_fixed_caller_wins_over_client_info_name(app):
    session = McpSession(app=app, fixed_caller="codex")
    single(session, request("initialize", initialize_params(name="claude-code")))
    memory_id = saved_id(call_tool(session, "save_memory", {"text": "fixed caller wins"}))
    assert app.store.get_memory(memory_id).tool == "codex"


def test_client_info_name_is_the_caller_when_no_tool_is_fixed(session, app):
    single(session, request("initialize", initialize_params(name="claude-code")))
    memory_id = saved_id(call_tool(session, "save_memory", {"text": "named by clientInfo"}))
    assert app.store.get_memory(memory_id).tool == "claude-code"


def test_client_info_name_is_the_source_of_new_rules(session, app):
    single(session, request("initialize", initialize_params(name="gemini-cli")))
    reply = call_tool(session, "add_rule", {"then": "Run the tests before you commit"})
    text = reply["result"]["content"][0]["text"]
    match = re.fullmatch(
        r"Rule saved \((r_[0-9a-f]+)\)\. The owner syncs rules to tools from the Rules page\.",
        text,
    )
    assert match, text
    assert app.store.get_rule(match.group(1)).source == "gemini-cli"


def test_a_secret_in_a_client_name_is_redacted_before_its_writes_record_it(session, app):
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    single(session, request("initialize", initialize_params(name=f"bot {token}")))
    first = saved_id(call_tool(session, "save_memory", {"text": "saved by a leaky name"}))
    reply = call_tool(session, "add_rule", {"then": "Name clients without secrets"})
    rule_id = re.search(r"r_[0-9a-f]{10}", reply["result"]["content"][0]["text"])
    assert rule_id is not None, reply
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": f"stateless {token}", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    stateless = McpSession(app=app)
    params = {"name": "save_memory", "arguments": {"text": "saved statelessly"}, "_meta": meta}
    second = saved_id(single(stateless, request("tools/call", params)))
    assert [app.store.get_memory(i).tool for i in (first, second)] == [
        "bot [REDACTED]",
        "stateless [REDACTED]",
    ]
    assert app.store.get_rule(rule_id.group(0)).source == "bot [REDACTED]"
    assert session.client_name == "bot [REDACTED]"  # as an HTTP session would keep it


@pytest.mark.parametrize(
    ("name", "caller"),
    [("claude\x00code", "claudecode"), ("\ud800codex", "codex"), ("\u202egemini\x07", "gemini")],
)
def test_a_client_name_keeps_only_printable_characters_so_its_writes_store_and_export(
    session, app, name, caller
):
    single(session, request("initialize", initialize_params(name=name)))
    saved = call_tool(session, "save_memory", {"text": "saved under an odd name"})
    rule = call_tool(session, "add_rule", {"then": "Name clients plainly"})

    assert saved["result"]["isError"] is False, saved
    assert rule["result"]["isError"] is False, rule
    assert app.store.get_memory(saved_id(saved)).tool == caller


@pytest.mark.parametrize(
    "params",
    [
        None,
        initialize_params(),
        initialize_params(name="   "),
        {"clientInfo": "claude"},
        {"clientInfo": {"name": 5}},
    ],
)
def test_caller_falls_back_to_mcp_without_a_usable_client_name(session, app, params):
    if params is not None:
        single(session, request("initialize", params))
    memory_id = saved_id(call_tool(session, "save_memory", {"text": "nobody named"}))
    assert app.store.get_memory(memory_id).tool == "mcp"


def test_a_later_initialize_names_the_caller_of_later_writes(session, app):
    single(session, request("initialize", initialize_params(name="claude-code")))
    first = saved_id(call_tool(session, "save_memory", {"text": "saved by the first name"}))
    single(session, request("initialize", initialize_params(name="codex"), request_id=2))
    second = saved_id(call_tool(session, "save_memory", {"text": "saved by the second name"}))
    assert [app.store.get_memory(i).tool for i in (first, second)] == ["claude-code", "codex"]


def test_a_session_whose_app_is_replaced_calls_tools_with_the_new_app(session, app, tmp_path):
    call_tool(session, "save_memory", {"text": "in the first store"})
    other = SqliteStore(tmp_path / "other.db")
    try:
        session.app = replace(app, store=other)
        memory_id = saved_id(call_tool(session, "save_memory", {"text": "in the other store"}))
        assert other.get_memory(memory_id).text == "in the other store"
    finally:
        other.close()


def test_caller_ignores_the_app_context_caller(app):
    session = McpSession(app=app)
    assert app.caller == "cli"
    memory_id = saved_id(call_tool(session, "save_memory", {"text": "not the cli"}))
    assert app.store.get_memory(memory_id).tool == "mcp"


# -- the stdio line loop in process ----------------------------------------------------------


def run_lines(session: McpSession, lines: list[bytes]) -> list[Any]:
    writer = io.BytesIO()
    serve(session, io.BytesIO(b"".join(lines)), writer)
    out = writer.getvalue()
    assert out == b"" or out.endswith(b"\n")
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize(
    "bad_line",
    [
        b"not json\n",
        b'{"jsonrpc":"2.0","id":1,\n',
        b'{"jsonrpc":"2.0","id":NaN,"method":"ping"}\n',
        b"\xff\xfe\xfa\n",
        b"[" * 100_000 + b"\n",
    ],
)
def test_bad_json_line_is_a_parse_error_and_the_loop_goes_on(session, bad_line):
    replies = run_lines(session, [bad_line, b"\n", b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'])
    assert replies[-1] == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert [error_of(reply) for reply in replies[:-1]] == [(None, -32700)] * (len(replies) - 1)
    assert len(replies) >= 2


def test_a_lone_surrogate_id_is_echoed_and_a_method_named_by_one_is_shown_escaped(session):
    line = b'{"jsonrpc":"2.0","id":"\\ud800","method":"\\udfff"}\n'
    replies = run_lines(session, [line, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'])
    assert error_of(replies[0]) == ("\ud800", -32601)
    assert replies[0]["error"]["message"] == "Method not found: \\udfff"  # shown, not sent raw
    assert replies[1]["result"] == {}


def test_a_deeply_nested_tool_call_line_is_a_tool_error_and_the_loop_goes_on(session):
    items = "[" * 900 + "]" * 900
    line = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"work_state_write",'
        f'"arguments":{{"list":"todo","items":[{{"a":{items}}}]}}}}}}\n'
    ).encode()
    replies = run_lines(session, [line, b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n'])
    assert replies[0]["result"] == {
        "content": [{"type": "text", "text": "arguments must not nest more than 32 levels deep."}],
        "isError": True,
    }
    assert replies[1]["result"] == {}


def _call(name: Any, request_id: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name}}


@pytest.mark.parametrize(
    "payload",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        _call("search"),
        _call("session_start_context"),
        [_call("search", 1), _call("get_observations", 2), {"jsonrpc": "2.0", "method": "x"}],
    ],
)
def test_pings_lists_and_read_only_tool_calls_only_read(payload: Any) -> None:
    assert only_reads(payload)


@pytest.mark.parametrize(
    "payload",
    [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        _call("save_memory"),
        _call("work_state_write"),
        [_call("search", 1), _call("dismiss", 2)],
        _call("no_such_tool"),
        _call(["search"]),
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["search"]},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/list"},
        [],
        "ping",
        None,
    ],
)
def test_writes_and_anything_unknown_count_as_writes(payload: Any) -> None:
    assert not only_reads(payload)
