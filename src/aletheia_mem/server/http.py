"""MCP over Streamable HTTP at ``/mcp`` (JSON replies only), and the app of ``aletheia-server``.

The JSON-RPC behaviour is the stdio server's: the same parser, the same ``handle_payload``. This
module only adds what HTTP needs: sessions in the ``Mcp-Session-Id`` header, status codes, and
the header checks of the transport (version, Accept, Content-Type).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from aletheia_mem.domain.echoes import echoed
from aletheia_mem.errors import (
    StoreBrokenError,
    StoreBusyError,
    StoreFullError,
    StoreReadOnlyError,
    StoreTooNewError,
    StoreUnavailableError,
)
from aletheia_mem.server import api, stateless_http
from aletheia_mem.server.auth_failures import AuthFailures
from aletheia_mem.server.guard import Guard, GuardPolicy
from aletheia_mem.server.handshake import LATEST_VERSION, SUPPORTED_VERSIONS
from aletheia_mem.server.mcp import (
    INITIALIZE_IN_BATCH,
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    McpSession,
    Message,
    error_response,
    handle_payload,
    only_reads,
)
from aletheia_mem.server.modern import MODERN_VERSIONS
from aletheia_mem.server.sessions import SessionState, SessionStore
from aletheia_mem.server.stdio import gives_twice, parse_line
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.app import exception_handlers as web_exception_handlers
from aletheia_mem.web.app import refusal_pages
from aletheia_mem.web.app import routes as web_routes

logger = logging.getLogger(__name__)

JSON_TYPE = "application/json"
SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
_ACCEPTS_JSON = ("application/json", "application/*", "*/*")


def encode_json(value: Any) -> bytes:
    """Compact UTF-8 JSON, as stdio writes it (lone surrogates stay ``\\uXXXX`` escapes)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "backslashreplace")


def rpc_error(
    status: int,
    message: str,
    *,
    code: int = INVALID_REQUEST,
    request_id: Any = None,
    **headers: str,
) -> Response:
    """An HTTP error whose body is a JSON-RPC error, as MCP clients expect."""
    body = encode_json(error_response(request_id, code, message))
    return Response(body, status, headers=headers or None, media_type=JSON_TYPE)


def request_id_of(payload: Any) -> Any:
    """The id of a single request, to echo in a transport error; None otherwise (an id given
    twice as well: the first to a proxy or a log)."""
    if isinstance(payload, dict) and not gives_twice(payload, "id"):
        value = payload.get("id")
        if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
            return value
    return None


UNAVAILABLE = api.UNAVAILABLE


def failure_response(
    error: Exception, request_id: Any = None, store_name: str | None = None
) -> Response:
    """What a client gets when the store failed under its request, as a JSON-RPC error, logged
    here: 507 when its disk is full and 503 while another process keeps it busy (each in its one
    line, as a tool call tells it), 503 while it cannot be reached (a passing state) or once a
    newer version migrated it (told as such: restart this server), 503 when it is read-only or
    damaged (its line, as a tool tells it), else 500. ``store_name``: how the store is named in
    the full and busy lines (None: by its path, as the error names it; a hub names no file to
    its clients, which are told it cannot be reached)."""
    if isinstance(error, StoreTooNewError):
        logger.warning("MCP request refused: %s", error.message)
        return rpc_error(503, error.message, code=INTERNAL_ERROR, request_id=request_id)
    if isinstance(error, StoreReadOnlyError | StoreBrokenError):
        logger.warning("MCP request failed: %s", error.message)
        said = error.message if store_name is None else UNAVAILABLE
        return rpc_error(503, said, code=INTERNAL_ERROR, request_id=request_id)
    if isinstance(error, StoreUnavailableError):
        logger.warning("MCP request failed: %s", error.message)
        headers = {"retry-after": str(api.RETRY_AFTER_S)}
        message = UNAVAILABLE
        if isinstance(error, StoreFullError | StoreBusyError):
            told = error if store_name is None else type(error)(store_name)
            message = told.message
        status = api.status_of(error)  # 507 for a full disk, as /api/ answers it
        return rpc_error(status, message, code=INTERNAL_ERROR, request_id=request_id, **headers)
    logger.error("MCP request failed", exc_info=error)
    return internal_error(request_id)


def internal_error(request_id: Any = None) -> Response:
    """500 with a JSON-RPC internal error: what a client gets when the store failed under it."""
    return rpc_error(
        500,
        "Internal error: the server could not answer; see its log.",
        code=INTERNAL_ERROR,
        request_id=request_id,
    )


def is_initialize(payload: Any) -> bool:
    return isinstance(payload, dict) and payload.get("method") == "initialize" and "id" in payload


def check_headers(
    request: Request, *, stateless: bool = False, request_id: Any = None
) -> Response | None:
    """Refuse an unsupported protocol version, a reply type without JSON, a body not typed JSON.

    A stateless (2026-07-28) request has its version checked against its body instead. The
    error carries ``request_id``: the id of the request refused, when its body could be read.
    """
    version = request.headers.get(VERSION_HEADER)
    if not stateless and version is not None and version.strip() not in SUPPORTED_VERSIONS:
        return rpc_error(
            400,
            f"Bad Request: unsupported MCP-Protocol-Version {echoed(version.strip())!r}; this"
            f" server speaks {', '.join((*MODERN_VERSIONS, *SUPPORTED_VERSIONS))}.",
            request_id=request_id,
        )
    accept = request.headers.get("accept")
    if accept is not None and not any(kind in accept.lower() for kind in _ACCEPTS_JSON):
        return rpc_error(
            406, "Not Acceptable: the client must accept application/json.", request_id=request_id
        )
    # A body without a type is refused too: a web page can send one cross-origin with no
    # preflight (a "simple" request), and so open sessions that push out the agents' own.
    content_type = request.headers.get("content-type") or ""
    if content_type.split(";")[0].strip().lower() != JSON_TYPE:
        return rpc_error(
            415,
            "Unsupported Media Type: the body must be application/json.",
            request_id=request_id,
        )
    return None


def called_tools(payload: Any) -> list[str]:
    """The tool names of the ``tools/call`` messages in a body (one message or a batch), as an
    error or an audit row quotes them (at most ``MAX_ECHO`` characters; ``""`` for none)."""
    messages = payload if isinstance(payload, list) else [payload]
    names = []
    for message in messages:
        if isinstance(message, dict) and message.get("method") == "tools/call":
            params = message.get("params")
            name = params.get("name") if isinstance(params, dict) else None
            names.append(echoed(name) if isinstance(name, str) else "")
    return names


def json_reply(
    reply: Message | list[Message] | None, headers: dict[str, str] | None = None
) -> Response:
    if reply is None:
        return Response(status_code=202, headers=headers)
    # A message that could not be read at all (id null) is refused; answers to requests are 200.
    status = 400 if isinstance(reply, dict) and "error" in reply and reply["id"] is None else 200
    return Response(encode_json(reply), status, headers=headers, media_type=JSON_TYPE)


SessionFactory = Callable[[Request], McpSession]
OwnerOf = Callable[[Request], str]
# Told, from a worker thread, of the tools/calls in a POST refused before any of them ran (a
# session unknown or another owner's, a header refused), with the tool names and the HTTP
# status: a hub audits every call.
RefusedCalls = Callable[[Request, list[str], int], None]


def _nobody(request: Request) -> str:
    return ""


class _NoSession:
    """What a request gets when its session is unknown, ended or someone else's."""


_NO_SESSION = _NoSession()
_Answer = Message | list[Message] | _NoSession | None


class _InAThread:
    """What the event loop gets when an answer must be worked out in a thread."""


_IN_A_THREAD = _InAThread()


class McpEndpoint:
    """The ASGI app behind ``/mcp``: POST messages, DELETE to end a session, 405 otherwise.

    Args:
        sessions: where sessions are kept (shared by every worker process).
        new_session: makes the ``McpSession`` a request runs in (who calls, what they see).
        owner_of: who a request acts for; only that owner may use a session it began (a hub
            binds sessions to tokens; the local server has one owner).
        reads_inline: answer messages that only read (``only_reads``) on the event loop, when
            their session needs no write either. A read takes about a millisecond of CPU and
            SQLite readers never wait in WAL mode, so a thread hop would cost more than it
            saves. False when the sessions' tool calls write something of their own (the
            hub's audit rows) or may run long.
        refused_calls: told of the tools/calls of each POST refused before they ran.
        store_name: how the store is named to clients when its disk is full or another process
            keeps it busy (None: by its path, as its own lines name it).
    """

    def __init__(
        self,
        sessions: SessionStore,
        new_session: SessionFactory,
        owner_of: OwnerOf = _nobody,
        *,
        reads_inline: bool = False,
        refused_calls: RefusedCalls | None = None,
        store_name: str | None = None,
    ) -> None:
        self.sessions = sessions
        self.new_session = new_session
        self.owner_of = owner_of
        self.reads_inline = reads_inline
        self.refused_calls = refused_calls
        self.store_name = store_name

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.method == "POST":
            response = await self.post(request)
        elif request.method == "DELETE":
            response = await self.delete(request)
        else:
            response = rpc_error(
                405,
                "Method Not Allowed: POST JSON-RPC messages to /mcp; DELETE ends a session.",
                allow="POST, DELETE",
            )
        await response(scope, receive, send)

    async def post(self, request: Request) -> Response:
        # The body is read first (the guard bounded it) so that a refusal by the headers still
        # answers with the request's id, and the tools/calls it refuses are told of.
        payload, ok = parse_line(await request.body())
        try:
            return await self.answer_post(request, payload, ok)
        except Exception as error:  # the store failed (damaged, busy, gone): still JSON-RPC
            return failure_response(error, request_id_of(payload), self.store_name)

    async def answer_post(self, request: Request, payload: Any, parsed: bool) -> Response:
        """The answer to a POST whose body is read (``parsed``: as JSON)."""
        stateless = stateless_http.by_headers(request.headers)
        refused = check_headers(request, stateless=stateless, request_id=request_id_of(payload))
        if refused is not None:
            return await self.refuse(request, payload, refused)
        if not parsed:
            return rpc_error(400, "Parse error: the body is not valid JSON.", code=PARSE_ERROR)
        if stateless or stateless_http.by_body(request.headers, payload):
            return await self.post_stateless(request, payload)
        if is_initialize(payload):
            reply, session_id = await to_thread.run_sync(self._initialize, request, payload)
            return json_reply(reply, None if session_id is None else {SESSION_HEADER: session_id})
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            missing = rpc_error(
                400,
                INITIALIZE_IN_BATCH  # as stdio answers it, not "send initialize first"
                if isinstance(payload, list) and any(map(is_initialize, payload))
                else "Bad Request: the Mcp-Session-Id header is required; send initialize first.",
                request_id=request_id_of(payload),
            )
            return await self.refuse(request, payload, missing)
        answer = self._answer_inline(request, session_id, payload)
        if isinstance(answer, _InAThread):
            answer = await to_thread.run_sync(self._answer, request, session_id, payload)
        if isinstance(answer, _NoSession):
            unknown = rpc_error(
                404,
                "Session not found: it ended or expired; send initialize again.",
                request_id=request_id_of(payload),
            )
            return await self.refuse(request, payload, unknown)
        return json_reply(answer)

    async def refuse(self, request: Request, payload: Any, refusal: Response) -> Response:
        """``refusal``, once ``refused_calls`` was told of the tools/calls it refuses."""
        if self.refused_calls is not None:
            names = called_tools(payload)
            if names:
                await to_thread.run_sync(self.refused_calls, request, names, refusal.status_code)
        return refusal

    async def post_stateless(self, request: Request, payload: Any) -> Response:
        """A 2026-07-28 request: no session; it runs as the client its own envelope names."""
        refused = stateless_http.refusal(request.headers, payload)
        if refused is not None:
            return await self.refuse(request, payload, refused)
        if not isinstance(payload, dict) or "id" not in payload:
            if called_tools(payload):  # a call sent as a notification: nothing runs, but told
                await to_thread.run_sync(handle_payload, self.new_session(request), payload)
            return Response(status_code=202)  # a notification: acknowledged, nothing to do
        session = self.new_session(request)
        if self.reads_inline and only_reads(payload):
            reply = handle_payload(session, payload)
        else:
            reply = await to_thread.run_sync(handle_payload, session, payload)
        return stateless_http.reply(reply)

    def _initialize(
        self, request: Request, payload: Any
    ) -> tuple[Message | list[Message] | None, str | None]:
        """Answer initialize; a session is kept only when it succeeded."""
        session = self.new_session(request)
        reply = handle_payload(session, payload)
        if not (isinstance(reply, dict) and "result" in reply):
            return reply, None
        state = SessionState(session.protocol_version or LATEST_VERSION, session.client_name)
        return reply, self.sessions.add(self.owner_of(request), state)

    def _answer_inline(
        self, request: Request, session_id: str, payload: Any
    ) -> _Answer | _InAThread:
        """The answer when it may be given on the event loop, else ``_IN_A_THREAD``."""
        if not (self.reads_inline and only_reads(payload)):
            return _IN_A_THREAD
        found = self.sessions.peek(session_id, self.owner_of(request))
        if found.write_due:
            return _IN_A_THREAD
        return self._answer_in(found.state, request, payload)

    def _answer(self, request: Request, session_id: str, payload: Any) -> _Answer:
        state = self.sessions.get(session_id, self.owner_of(request))
        return self._answer_in(state, request, payload)

    def _answer_in(self, state: SessionState | None, request: Request, payload: Any) -> _Answer:
        if state is None:
            return _NO_SESSION
        session = self.new_session(request)
        session.protocol_version = state.protocol_version
        session.client_name = state.client_name
        session.initialized = True
        session.era = "legacy"
        return handle_payload(session, payload)

    async def delete(self, request: Request) -> Response:
        session_id = request.headers.get(SESSION_HEADER)
        if session_id is None:
            return rpc_error(400, "Bad Request: the Mcp-Session-Id header is required.")
        try:
            ended = await to_thread.run_sync(self.sessions.end, session_id, self.owner_of(request))
        except Exception as error:  # as in ``post``
            return failure_response(error, store_name=self.store_name)
        if not ended:
            return rpc_error(404, "Session not found: it ended or expired.")
        return Response(status_code=204)


def create_app(
    app: AppContext,
    policy: GuardPolicy,
    *,
    fixed_caller: str | None = None,
    api_caller: str = "api",
    sessions: SessionStore | None = None,
) -> ASGIApp:
    """The whole HTTP server: ``/mcp`` and ``/api/``, behind the Host/Origin/key/body guard.

    Args:
        app: the store and clock every request works on.
        policy: who may come in.
        fixed_caller: ``ALETHEIA_TOOL``; else each MCP session is named by its clientInfo.
        api_caller: the name JSON API writes are recorded under.
        sessions: the MCP sessions (by default in the store's file, opened here).
    """
    if sessions is None:
        sessions = SessionStore(hub_store(app).sessions(), app.clock)
    endpoint = McpEndpoint(
        sessions,
        new_session=lambda _request: McpSession(app=app, fixed_caller=fixed_caller),
        # Semantic search embeds the query first: milliseconds that must not stall the loop.
        reads_inline=app.semantic is None,
    )
    # Wrong keys, on /mcp, /api/ and the sign-in page alike, per client address (the hub's rule).
    failures = AuthFailures() if policy.api_key is not None else None
    routes = [
        Route("/mcp", endpoint=endpoint),
        *api.routes(replace(app, caller=api_caller), secured=policy.api_key is not None),
        *web_routes(replace(app, caller="web"), policy.api_key, failures, sessions),
    ]
    starlette = Starlette(routes=routes, exception_handlers=web_exception_handlers())
    return Guard(McpFirst(endpoint, starlette), policy, failures, refusal_pages())


class McpFirst:
    """ASGI: ``/mcp`` straight to its endpoint, the rest to ``app``. The endpoint needs none of
    Starlette's routing and middleware layers, and MCP calls are the server's busiest path."""

    def __init__(self, mcp: ASGIApp, app: ASGIApp) -> None:
        self.mcp = mcp
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/mcp":
            await self.mcp(scope, receive, send)
        else:
            await self.app(scope, receive, send)
