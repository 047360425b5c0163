"""The id of a JSON-RPC request the hub refuses before its body was read (over its token's rate
limit), so that the error reply names the request it answers, as every other error reply does.

Cheap: only a POST to ``/mcp`` whose body is at most ``MAX_ID_BODY_BYTES`` (declared and read)
is read, and only one JSON object is parsed; a batch, a larger or unreadable body gets null.
"""

from __future__ import annotations

from starlette.types import Receive, Scope

from aletheia_mem.server.http import request_id_of
from aletheia_mem.server.stdio import parse_line

MAX_ID_BODY_BYTES = 256 * 1024  # a save of the longest text, escaped, fits


def _declared_over(scope: Scope, most: int) -> bool:
    """Whether the request's Content-Length says more than ``most`` bytes (or is not a number)."""
    for key, value in scope["headers"]:
        if key == b"content-length":
            digits = bytes(value).strip().lstrip(b"0") or b"0"
            return not digits.isdigit() or len(digits) > len(str(most)) or int(digits) > most
    return False


async def _body(receive: Receive, most: int) -> bytes | None:
    """The whole body, or None past ``most`` bytes or when the client went away."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > most:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def refused_request_id(scope: Scope, receive: Receive) -> str | int | None:
    """The id of the single JSON-RPC request a refused POST to ``/mcp`` carries, else None."""
    if scope.get("method") != "POST" or scope.get("path") != "/mcp":
        return None
    if _declared_over(scope, MAX_ID_BODY_BYTES):
        return None
    body = await _body(receive, MAX_ID_BODY_BYTES)
    if body is None or body.lstrip()[:1] != b"{":
        return None
    payload, _ = parse_line(body)  # read as ``/mcp`` reads it (an id given twice names none)
    found: str | int | None = request_id_of(payload)
    return found
