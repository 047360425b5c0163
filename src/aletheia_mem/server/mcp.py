"""The one module that speaks MCP: JSON-RPC 2.0 dispatch, version negotiation and tools.

Transports (stdio, HTTP) hand it parsed JSON and send back what it returns; they never see
tools, and tools never see them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from aletheia_mem.domain.echoes import echoed
from aletheia_mem.domain.limits import shape_problem
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.server import modern
from aletheia_mem.server.handshake import (
    INSTRUCTIONS,
    SUPPORTED_VERSIONS,
    client_name,
    greeting,
    negotiate_version,
    reported_name,
    valid_id,
)
from aletheia_mem.server.stdio import RepeatedKeyMessage, gives_twice
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS, TOOLS_BY_NAME, ToolResult, ToolSpec, call_tool

logger = logging.getLogger(__name__)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700,
    -32600,
    -32601,
    -32602,
    -32603,
)
# The versions whose tools declare an outputSchema and return structuredContent.
STRUCTURED_VERSIONS = frozenset({"2025-06-18", "2025-11-25", *modern.MODERN_VERSIONS})
_TOOL_LISTS = {flag: [tool.definition(flag) for tool in TOOLS] for flag in (False, True)}
MAX_ARGUMENT_DEPTH = 32
# Messages a JSON-RPC batch may hold, on every transport (the hub refuses longer ones before
# they reach here). No MCP client sends batches at all; 100 is room for any scripted one, and
# bounds the work and the reply of one line or POST to 100 calls'.
MAX_BATCH = 100
# Characters a batch's answers may hold before its later requests are turned away unrun: two of
# the largest answers (get_observations of 100 memories of 20,000 characters, text and
# structured, holds about 4 million), and far more than 100 searches (4 million at most).
MAX_BATCH_ANSWER = 8_000_000
# JSON-RPC's implementation-defined server error: a request of a batch whose answers are full.
BATCH_FULL = -32000
Message = dict[str, Any]
# Decides, per tools/call, whether the caller may run this tool here (None: yes).
ToolGate = Callable[[ToolSpec, dict[str, Any]], ToolResult | None]
# Told of a tools/call refused before any tool ran (no such tool, arguments not an object), with
# the name it asked for: a hub audits every call.
UnrunCall = Callable[[str], None]


@dataclass
class McpSession:
    """State of one MCP connection: the negotiated version and who the client is."""

    app: AppContext
    fixed_caller: str | None = None
    gate: ToolGate | None = None
    unrun: UnrunCall | None = None
    protocol_version: str | None = None
    client_name: str | None = None
    initialized: bool = field(default=False)
    # Which era this connection is held to: "legacy" after initialize, "modern" after a
    # stateless request other than server/discover (a probe alone decides nothing).
    era: str | None = None
    # ``app`` as the caller sees it, and the ``app`` it was made from: made once per caller.
    caller_app: tuple[AppContext, AppContext] | None = field(default=None, init=False, repr=False)


def error_response(request_id: Any, code: int, message: str) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _rejected(request_id: Any, rejection: modern.Rejection) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "error": rejection.error()}


def _result(request_id: Any, result: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def handle_payload(session: McpSession, payload: Any) -> Message | list[Message] | None:
    """Answer one parsed message or batch; None when nothing is to be sent back."""
    if isinstance(payload, list):
        if not payload:
            return error_response(None, INVALID_REQUEST, "Invalid request: empty batch.")
        if len(payload) > MAX_BATCH:
            return error_response(None, INVALID_REQUEST, batch_too_long(len(payload)))
        replies = _batch_replies(session, payload)
        answered = [reply for reply in replies if reply is not None]
        return answered or None
    return handle_message(session, payload)


def _batch_replies(session: McpSession, batch: list[Any]) -> list[Message | None]:
    """The reply to each message of a batch, in order; once the answers hold more than
    ``MAX_BATCH_ANSWER`` characters, the requests after them run nothing and get ``BATCH_FULL``."""
    replies: list[Message | None] = []
    held = 0
    for item in batch:
        if held > MAX_BATCH_ANSWER:
            replies.append(_not_run(session, item))
            continue
        reply = handle_message(session, item, in_batch=True)
        held += _characters(reply)
        replies.append(reply)
    return replies


def _not_run(session: McpSession, message: Any) -> Message | None:
    """The answer to a message of a batch whose answers are full: a request gets ``BATCH_FULL``,
    anything else what it would get (nothing runs for it either way)."""
    if not (isinstance(message, dict) and isinstance(message.get("method"), str)):
        return handle_message(session, message, in_batch=True)
    request_id = message.get("id")
    if "id" not in message or not valid_id(request_id) or message.get("jsonrpc") != "2.0":
        return handle_message(session, message, in_batch=True)  # refused unrun all the same
    _tell_unrun(session, message)
    return error_response(
        request_id,
        BATCH_FULL,
        f"Server error: this batch's answers passed {MAX_BATCH_ANSWER:,} characters, so this"
        " request did not run; send it again in a later batch or on its own.",
    )


def _characters(value: Any) -> int:
    """About how many characters ``value`` (a reply) takes as JSON: those of its strings and
    one for each other value (walked without recursion: stored lists nest)."""
    count, pending = 0, [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            count += len(item)
        elif isinstance(item, dict):
            count += sum(len(key) for key in item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        else:
            count += 1
    return count


def batch_too_long(size: int) -> str:
    """Why a batch of ``size`` messages, more than ``MAX_BATCH``, is refused with nothing run."""
    return f"Invalid request: a batch holds at most {MAX_BATCH} messages; this one has {size}."


def only_reads(payload: Any) -> bool:
    """Whether answering ``payload`` reads the store and never writes it: notifications, pings,
    tool lists and calls of read-only tools, or a batch of nothing else. Anything other counts
    as a write, to be safe."""
    messages = payload if isinstance(payload, list) else [payload]
    return bool(messages) and all(_only_reads(message) for message in messages)


def _only_reads(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    method = message.get("method")
    if method in _READ_METHODS or ("id" not in message and isinstance(method, str)):
        return True
    params = message.get("params")
    name = params.get("name") if method == "tools/call" and isinstance(params, dict) else None
    spec = TOOLS_BY_NAME.get(name) if isinstance(name, str) else None
    return spec is not None and spec.read_only


_READ_METHODS = frozenset({"ping", "tools/list", "server/discover"})


def handle_message(session: McpSession, message: Any, *, in_batch: bool = False) -> Message | None:
    """Answer one JSON-RPC message; notifications and client responses get None."""
    if not isinstance(message, dict):
        return error_response(None, INVALID_REQUEST, "Invalid request: not a JSON-RPC object.")
    if isinstance(message, RepeatedKeyMessage):
        return _repeated_keys(session, message)
    has_id = "id" in message
    request_id = message.get("id")
    if not has_id or "method" not in message:
        if has_id and ("result" in message or "error" in message):
            return None  # a response to a request we never send; nothing to answer
        if not has_id and isinstance(message.get("method"), str):
            _tell_unrun(session, message)
            return None
        return error_response(
            request_id if valid_id(request_id) else None,
            INVALID_REQUEST,
            "Invalid request: a method is required.",
        )
    if message.get("jsonrpc") != "2.0" or not valid_id(request_id):
        _tell_unrun(session, message)
        return error_response(
            request_id if valid_id(request_id) else None,
            INVALID_REQUEST,
            'Invalid request: needs "jsonrpc": "2.0", a string or integer id and a method.',
        )
    method, params = message["method"], message.get("params")
    if not isinstance(method, str):
        return error_response(request_id, INVALID_REQUEST, "Invalid request: method must be text.")
    if params is not None and not isinstance(params, dict):
        return error_response(
            request_id, INVALID_PARAMS, "Invalid params: params must be an object."
        )
    # After initialize the connection is legacy: an envelope then is ignored like any _meta.
    if method != "initialize" and session.era != "legacy" and modern.is_modern(params):
        return _dispatch_modern(session, request_id, method, params or {})
    return _dispatch(session, request_id, method, params or {}, in_batch)


def _repeated_keys(session: McpSession, message: RepeatedKeyMessage) -> Message | None:
    """The refusal of a message holding an object that gives a key twice: the last value to
    this server, maybe the first to a proxy or a log, so nothing runs (as ``/api/`` and
    ``/sync/`` refuse such a body). A notification gets nothing; one whose id is repeated is
    answered with ``id: null``."""
    request_id = message.get("id")
    if "method" not in message and ("result" in message or "error" in message):
        return None  # a response, which nothing answers
    unrun: Message = message
    if gives_twice(message.get("params"), "name"):  # the tool it names is not sure
        unrun = {**message, "params": {}}
    _tell_unrun(session, unrun)
    if "id" not in message:
        return None
    replied = request_id if valid_id(request_id) and not gives_twice(message, "id") else None
    names = ", ".join(f'"{echoed(name)}"' for name in message.names[:5])
    if message.in_params:
        return error_response(
            replied, INVALID_PARAMS, f"Invalid params: an object gives {names} twice."
        )
    return error_response(
        replied, INVALID_REQUEST, f"Invalid request: the message gives {names} twice."
    )


def _tell_unrun(session: McpSession, message: Message) -> None:
    """Tell ``session.unrun`` of a ``tools/call`` no tool will run: one sent as a notification
    (nothing may answer it) or without a valid request id."""
    if session.unrun is None or message.get("method") != "tools/call":
        return
    params = message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    session.unrun(echoed(name) if isinstance(name, str) else "")


def _dispatch_modern(
    session: McpSession, request_id: Any, method: str, params: dict[str, Any]
) -> Message:
    """Answer one stateless (2026-07-28) request; it runs as the client its envelope names."""
    envelope = modern.read_envelope(params, SUPPORTED_VERSIONS)
    if isinstance(envelope, modern.Rejection):
        return _rejected(request_id, envelope)
    if method == "server/discover":
        return _result(request_id, modern.discover(SUPPORTED_VERSIONS, INSTRUCTIONS))
    if method not in ("tools/list", "tools/call"):
        return error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {echoed(method)}")
    session.era = "modern"
    request = replace(
        session,
        protocol_version=envelope.protocol_version,
        client_name=stored_name(client_name(envelope.client_name)),
    )
    reply = _dispatch(request, request_id, method, params, False)
    if "result" in reply:
        modern.complete(reply["result"], cacheable=method == "tools/list")
    return reply


INITIALIZE_IN_BATCH = "Invalid request: initialize must not be in a batch."


def _dispatch(
    session: McpSession, request_id: Any, method: str, params: dict[str, Any], in_batch: bool
) -> Message:
    if method == "initialize":
        if in_batch:
            return error_response(request_id, INVALID_REQUEST, INITIALIZE_IN_BATCH)
        if session.era == "modern":  # not -32022: that would mark the server modern only
            return error_response(
                request_id,
                INVALID_REQUEST,
                "Invalid request: this connection already speaks 2026-07-28 (stateless);"
                " initialize is not accepted on it.",
            )
        return _result(request_id, initialize(session, params))
    if method == "ping":
        return _result(request_id, {})
    if method == "tools/list":
        if params.get("cursor") is not None:
            return error_response(request_id, INVALID_PARAMS, "Invalid params: unknown cursor.")
        structured = session.protocol_version in STRUCTURED_VERSIONS
        return _result(request_id, {"tools": _TOOL_LISTS[structured]})
    if method == "tools/call":
        return _tools_call(session, request_id, params)
    return error_response(request_id, METHOD_NOT_FOUND, f"Method not found: {echoed(method)}")


def initialize(session: McpSession, params: dict[str, Any]) -> dict[str, Any]:
    """Negotiate the version and learn the client's name (the caller, unless fixed)."""
    session.protocol_version = negotiate_version(params.get("protocolVersion"))
    session.client_name = stored_name(reported_name(params)) or session.client_name
    session.initialized = True
    session.era = "legacy"
    return greeting(session.protocol_version)


@lru_cache(maxsize=256)
def stored_name(name: str | None) -> str | None:
    """A client's self-reported name as its writes record it (and its session keeps it): any
    secret in it redacted, like every other string a client sends."""
    return None if name is None else redact_secrets(name)


def argument_problem(arguments: dict[str, Any]) -> str | None:
    """Why these arguments cannot reach a tool (SQLite and the handlers' recursion), else None."""
    return shape_problem([arguments], "arguments", MAX_ARGUMENT_DEPTH)


def caller_of(session: McpSession) -> str:
    """ALETHEIA_TOOL (or a token's name), then clientInfo.name, then ``mcp``."""
    return session.fixed_caller or session.client_name or "mcp"


def app_of(session: McpSession) -> AppContext:
    """The session's app with the caller set, remade only when the caller or the app changes."""
    caller = caller_of(session)
    if session.caller_app is not None:
        base, app = session.caller_app
        if base is session.app and app.caller == caller:
            return app
    app = replace(session.app, caller=caller)
    session.caller_app = (session.app, app)
    return app


def _tools_call(session: McpSession, request_id: Any, params: dict[str, Any]) -> Message:
    name, arguments = params.get("name"), params.get("arguments")
    if arguments is None:
        arguments = {}
    problem = None
    if not isinstance(name, str) or not name:
        problem = "Invalid params: a tool name is required."
    elif name not in TOOLS_BY_NAME:
        problem = f"Unknown tool: {echoed(name)}"
    elif not isinstance(arguments, dict):
        problem = "Invalid params: arguments must be an object."
    if problem is not None:
        if session.unrun is not None:
            session.unrun(echoed(name) if isinstance(name, str) else "")
        return error_response(request_id, INVALID_PARAMS, problem)
    spec = TOOLS_BY_NAME[str(name)]
    result = session.gate(spec, arguments) if session.gate is not None else None
    if result is None and (problem := argument_problem(arguments)) is not None:
        result = ToolResult(problem, True)
    if result is None:
        app = app_of(session)
        try:
            result = call_tool(app, spec, arguments)
        except Exception:
            logger.exception("tool %s failed", name)
            result = ToolResult(f"{name} failed with an internal error; see the server log.", True)
    answer = {"content": [{"type": "text", "text": result.text}], "isError": result.is_error}
    structured = session.protocol_version in STRUCTURED_VERSIONS
    if structured and result.structured is not None and not result.is_error:
        answer["structuredContent"] = result.structured
    return _result(request_id, answer)
