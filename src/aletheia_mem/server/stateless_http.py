"""Stateless (2026-07-28) requests over HTTP: which POSTs they are, and their checks and statuses.

A POST is stateless when its ``MCP-Protocol-Version`` header names 2026-07-28 (or, without a
session, any version the handshake era lacks), or when it has no session and its body carries
the ``_meta`` envelope. It needs no ``initialize`` and no ``Mcp-Session-Id``: any worker of any
process can answer it. Its routing headers must match its body (``HeaderMismatch``, -32020).
"""

from __future__ import annotations

from typing import Any

from starlette.datastructures import Headers
from starlette.responses import Response

from aletheia_mem.server import modern
from aletheia_mem.server.handshake import SUPPORTED_VERSIONS
from aletheia_mem.server.mcp import INVALID_REQUEST, METHOD_NOT_FOUND, Message
from aletheia_mem.server.stdio import encode

JSON_TYPE = "application/json"
SESSION_HEADER = "mcp-session-id"
_ROUTING_HEADERS = (modern.VERSION_HEADER, modern.METHOD_HEADER, modern.NAME_HEADER)


def by_headers(headers: Headers) -> bool:
    """Whether the version header alone makes this POST stateless."""
    version = headers.get(modern.VERSION_HEADER)
    if version is None:
        return False
    version = version.strip()
    if version in modern.MODERN_VERSIONS:
        return True
    return version not in SUPPORTED_VERSIONS and SESSION_HEADER not in headers


def by_body(headers: Headers, payload: Any) -> bool:
    """Whether a POST without a session carries a stateless request's ``_meta`` envelope."""
    return (
        SESSION_HEADER not in headers
        and isinstance(payload, dict)
        and payload.get("method") != "initialize"
        and modern.is_modern(payload.get("params"))
    )


def _error(request_id: Any, rejection: modern.Rejection) -> Response:
    body = {"jsonrpc": "2.0", "id": request_id, "error": rejection.error()}
    return reply(body)


def _request_id(payload: dict[str, Any]) -> Any:
    value = payload.get("id")
    valid = isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
    return value if valid else None


def refusal(headers: Headers, payload: Any) -> Response | None:
    """The error answer for a stateless POST that cannot be served as sent, else None."""
    if not isinstance(payload, dict) or not isinstance(payload.get("method"), str):
        return _error(
            None,
            modern.Rejection(
                INVALID_REQUEST,
                "Invalid request: the body must be one JSON-RPC request or notification.",
            ),
        )
    if "id" not in payload:  # a notification: only its version is checked
        version = (headers.get(modern.VERSION_HEADER) or "").strip()
        if version in modern.MODERN_VERSIONS:
            return None
        return _error(None, modern.unsupported(version, SUPPORTED_VERSIONS))
    return _request_refusal(headers, payload, _request_id(payload))


def _request_refusal(headers: Headers, payload: dict[str, Any], request_id: Any) -> Response | None:
    for name in _ROUTING_HEADERS:
        if len(headers.getlist(name)) > 1:
            problem = modern.Rejection(
                modern.HEADER_MISMATCH, f"Header mismatch: {name} was sent more than once."
            )
            return _error(request_id, problem)
    params = payload.get("params")
    envelope = modern.read_envelope(params if isinstance(params, dict) else {}, SUPPORTED_VERSIONS)
    unsupported = modern.UNSUPPORTED_PROTOCOL_VERSION
    if isinstance(envelope, modern.Rejection) and envelope.code != unsupported:
        return _error(request_id, envelope)
    mismatch = modern.header_problem(payload, headers)
    if mismatch is not None:
        return _error(request_id, mismatch)
    if isinstance(envelope, modern.Rejection):
        return _error(request_id, envelope)
    if payload["method"] == "initialize":
        problem = modern.Rejection(
            METHOD_NOT_FOUND, "Method not found: initialize (2026-07-28 has no handshake)."
        )
        return _error(request_id, problem)
    return None


def reply(message: Message | list[Message] | None) -> Response:
    """The HTTP answer to a stateless request: its result, or its error with the spec's status."""
    if message is None:
        return Response(status_code=202)
    status = 200
    if isinstance(message, dict) and "error" in message:
        status = modern.ERROR_STATUS.get(message["error"].get("code"), 200)
    return Response(encode(message).rstrip(b"\n"), status, media_type=JSON_TYPE)
