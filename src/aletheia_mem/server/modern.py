"""MCP 2026-07-28, the stateless era: every request carries its version and client in ``_meta``.

There is no ``initialize`` and no session. A request opts into this era with the
``io.modelcontextprotocol/*`` keys in ``params._meta``; this module reads and checks that
envelope, the HTTP headers that mirror it, and shapes the results the era adds fields to. The
dispatch itself stays in ``mcp.py``, shared with the handshake era.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.domain.echoes import redacted_echo

MODERN_VERSIONS = ("2026-07-28",)
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_INFO_KEY = "io.modelcontextprotocol/clientInfo"
CLIENT_CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
HEADER_MISMATCH, UNSUPPORTED_PROTOCOL_VERSION = -32020, -32022
VERSION_HEADER, METHOD_HEADER, NAME_HEADER = "mcp-protocol-version", "mcp-method", "mcp-name"
# The methods whose subject the Mcp-Name header mirrors, and which params field holds it.
NAME_BEARING = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
# How long a client may reuse a tool list or a discover answer: they change only on upgrade.
CACHE_TTL_MS = 3_600_000
SERVER_INFO = {"name": "aletheia", "version": __version__}
# The HTTP status a stateless request's error goes out with (anything else: 200).
ERROR_STATUS = {-32700: 400, -32600: 400, -32601: 404, -32602: 400, -32020: 400, -32022: 400}
_B64_SENTINEL = re.compile(r"=\?base64\?(.*)\?=")


@dataclass(frozen=True)
class Envelope:
    """What a stateless request says about itself."""

    protocol_version: str
    client_name: str | None


@dataclass(frozen=True)
class Rejection:
    """Why a stateless request is refused, as a JSON-RPC error."""

    code: int
    message: str
    data: dict[str, Any] | None = None

    def error(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error


def is_modern(params: Any) -> bool:
    """Whether a request's params carry the 2026-07-28 envelope: its protocol version names it.
    Other ``io.modelcontextprotocol/`` keys alone are ``_meta`` a legacy request may carry, and
    are ignored."""
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and PROTOCOL_VERSION_KEY in meta


def unsupported(requested: str, legacy_versions: tuple[str, ...]) -> Rejection:
    """The UnsupportedProtocolVersion error, naming every version this server speaks and the
    one requested (cut, a secret in it redacted: ``redacted_echo``)."""
    shown = redacted_echo(requested)
    return Rejection(
        UNSUPPORTED_PROTOCOL_VERSION,
        f"Unsupported protocol version: {shown!r}.",
        {"supported": [*MODERN_VERSIONS, *legacy_versions], "requested": shown},
    )


def read_envelope(params: dict[str, Any], legacy_versions: tuple[str, ...]) -> Envelope | Rejection:
    """The envelope of a stateless request, or why it is malformed or unsupported."""
    meta = params.get("_meta")
    if not isinstance(meta, dict):
        return Rejection(-32602, "Invalid params: params._meta must be an object.")
    missing = [key for key in (PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY) if key not in meta]
    if missing:
        return Rejection(
            -32602, f"Invalid params: params._meta is missing {' and '.join(missing)}."
        )
    version = meta[PROTOCOL_VERSION_KEY]
    if not isinstance(version, str):
        return Rejection(-32602, f"Invalid params: {PROTOCOL_VERSION_KEY} must be a string.")
    if not isinstance(meta[CLIENT_CAPABILITIES_KEY], dict):
        return Rejection(-32602, f"Invalid params: {CLIENT_CAPABILITIES_KEY} must be an object.")
    if version not in MODERN_VERSIONS:
        return unsupported(version, legacy_versions)
    info = meta.get(CLIENT_INFO_KEY)
    name = info.get("name") if isinstance(info, dict) else None
    return Envelope(version, name if isinstance(name, str) else None)


def decode_header(value: str) -> str | None:
    """A header value as sent, or the text inside a ``=?base64?...?=`` sentinel (None if bad)."""
    found = _B64_SENTINEL.fullmatch(value)
    if found is None:
        return value
    try:
        raw = base64.b64decode(found.group(1), validate=True)
        return raw.decode("utf-8") if base64.b64encode(raw).decode() == found.group(1) else None
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_problem(message: dict[str, Any], headers: Mapping[str, str]) -> Rejection | None:
    """Why the routing headers of a stateless HTTP request do not match its body, else None.

    ``headers`` is keyed by lower-case name (the caller refuses a routing header sent twice).
    """
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None
    method = message.get("method")
    if headers.get(VERSION_HEADER) != version:
        return Rejection(
            HEADER_MISMATCH,
            "Header mismatch: MCP-Protocol-Version must be sent and equal"
            f" params._meta[{PROTOCOL_VERSION_KEY!r}].",
        )
    if headers.get(METHOD_HEADER) != method:
        return Rejection(
            HEADER_MISMATCH, "Header mismatch: Mcp-Method must be sent and equal the method."
        )
    field = NAME_BEARING.get(method) if isinstance(method, str) else None
    subject = params.get(field) if field is not None and isinstance(params, dict) else None
    if subject is not None:
        sent = headers.get(NAME_HEADER)
        if sent is None or decode_header(sent) != subject:
            return Rejection(
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Name must be sent and equal params.{field}.",
            )
    return None


def complete(result: dict[str, Any], *, cacheable: bool = False) -> dict[str, Any]:
    """A result as this era sends it: typed ``complete`` and signed with the server's name."""
    result["resultType"] = "complete"
    if cacheable:
        result["ttlMs"] = CACHE_TTL_MS
        result["cacheScope"] = "private"
    result["_meta"] = {SERVER_INFO_KEY: SERVER_INFO}
    return result


def discover(legacy_versions: tuple[str, ...], instructions: str) -> dict[str, Any]:
    """The answer to ``server/discover``: versions, capabilities and what the server is for."""
    return complete(
        {
            "supportedVersions": [*MODERN_VERSIONS, *legacy_versions],
            "capabilities": {"tools": {"listChanged": False}},
            "instructions": instructions,
        },
        cacheable=True,
    )
