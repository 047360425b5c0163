"""JSON-RPC batches on the hub: each message counts against its token's rate limit.

A batch of 1,000 calls is 1,000 requests' worth of work, so it is charged as such: the request
itself was counted on arrival, the batch's other messages are counted here, all or none. A batch
over the limit gets 429 whole, and a batch never holds more than ``MAX_BATCH`` messages (also
when the limit is off; the local server's limit, refused with its answer), so one request never
does more than its token may do in a minute.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable

from anyio import to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from aletheia_mem.server.guard import Refusal, replay_body, send_refusal
from aletheia_mem.server.mcp import MAX_BATCH, batch_too_long
from aletheia_mem.server.ratelimit import Limiter
from aletheia_mem.storage.hub_rows import HubToken

# Writes the audit row of a batch refused by the rate limit: (token, seconds to wait).
OnLimited = Callable[[HubToken, int], Awaitable[None]]


def batch_size(body: bytes) -> int:
    """How many messages a body holds: a JSON array's length, else 1 (a single message, or
    something the MCP endpoint will refuse as it is)."""
    if body.lstrip()[:1] != b"[":
        return 1
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return 1
    return len(value) if isinstance(value, list) else 1


class BatchMeter:
    """ASGI, in front of ``/mcp``: read the body once, charge its batch, then pass it on."""

    def __init__(self, app: ASGIApp, limiter: Limiter, on_limited: OnLimited) -> None:
        self.app = app
        self.limiter = limiter
        self.on_limited = on_limited

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, replay = await _buffered(receive)
        size = batch_size(body)
        # The limiter writes to the store: off the event loop.
        refusal = await to_thread.run_sync(self._refusal, scope, size) if size > 1 else None
        if refusal is not None:
            if refusal.status == 429:
                await self.on_limited(scope["state"]["token"], int(refusal.headers[0][1]))
            await send_refusal(scope, send, refusal)
            return
        await self.app(scope, replay, send)

    def _refusal(self, scope: Scope, size: int) -> Refusal | None:
        if size > MAX_BATCH:
            return Refusal(400, "batch_too_large", batch_too_long(size))
        token: HubToken = scope["state"]["token"]
        wait = self.limiter.hit(token.id, size - 1)
        if wait is None:
            return None
        return Refusal(
            429,
            "rate_limited",
            f"Too many requests: each message of a batch counts, and this token may make"
            f" {self.limiter.limit} requests per minute. Retry in {wait} s.",
            (("retry-after", str(wait)),),
        )


async def _buffered(receive: Receive) -> tuple[bytes, Receive]:
    """The whole body (the guard read it and bounded its size), and a ``receive`` replaying it."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    return body, replay_body(body, receive)
