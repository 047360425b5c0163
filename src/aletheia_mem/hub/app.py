"""The hub's HTTP app: ``/mcp`` and ``/sync/`` behind bearer tokens and a rate limit.

Order of the checks on every request: Host and Origin (421, 403: DNS rebinding, refused as such
whatever the token), the token (401 with ``WWW-Authenticate: Bearer``), the rate limit (429 with
``Retry-After``), then the HTTP server's guard (body size), then the route. The MCP handling
is the HTTP server's, with each session bound to its token.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable

from anyio import to_thread
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from aletheia_mem.hub import audit
from aletheia_mem.hub.audit_queue import AuditQueue
from aletheia_mem.hub.batches import BatchMeter
from aletheia_mem.hub.gate import make_gate, make_unrun_audit, token_app
from aletheia_mem.hub.readiness import readiness_route
from aletheia_mem.hub.refused_id import refused_request_id
from aletheia_mem.hub.sync_api import (
    HUB_STORE,
    STORE_FAILURES,
    STORE_WAIT_MS,
    SyncApi,
    store_refusal,
)
from aletheia_mem.hub.tokens import TokenCache
from aletheia_mem.hub.write_turns import WriteTurns, write_turns
from aletheia_mem.server.auth_failures import AuthFailures
from aletheia_mem.server.guard import (
    Guard,
    GuardPolicy,
    Refusal,
    check_host,
    check_origin,
    make_policy,
    send_refusal,
)
from aletheia_mem.server.http import McpEndpoint, failure_response
from aletheia_mem.server.mcp import McpSession
from aletheia_mem.server.ratelimit import Limiter
from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.storage.write_waits import waiting_at_most
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.app import hub_exception_handlers, hub_routes, refusal_pages

HUB_MAX_BODY_BYTES = 16 * 1024 * 1024
_REALM = 'Bearer realm="aletheia-sync"'
_PROTECTED = ("/mcp", "/sync/")
ANONYMOUS = "(no token)"
# MCP sessions one token may hold; its least recently used one goes past that, never another's.
SESSIONS_PER_TOKEN = 100
_INTERNAL = Refusal(500, "internal_error", "Internal error: the hub could not answer; see its log.")

logger = logging.getLogger(__name__)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value).decode("latin-1")
    return None


def _bearer(value: str | None) -> str | None:
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


async def _send_json_refusal(scope: Scope, send: Send, refusal: Refusal) -> None:
    """A refusal on ``/sync/`` in that API's dialect; elsewhere as the HTTP server sends it."""
    if not scope.get("path", "").startswith("/sync/"):
        await send_refusal(scope, send, refusal)
        return
    error = {"error": {"code": refusal.code, "message": refusal.message}}
    body = json.dumps(error, separators=(",", ":")).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *((name.encode(), value.encode()) for name, value in refusal.headers),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _send_failure(scope: Scope, receive: Receive, send: Send, error: Exception) -> None:
    """503 while the store cannot be reached (or 507, its disk full), else 500; in JSON with
    nothing of the failure in it (logged): a JSON-RPC error on ``/mcp`` (DESIGN §10), the sync
    API's error object on ``/sync/`` (``store_refusal``)."""
    if not scope.get("path", "").startswith("/sync/"):
        await failure_response(error, store_name=HUB_STORE)(scope, receive, send)
    elif isinstance(error, STORE_FAILURES):
        logger.warning("Token check failed: %s", error.message)
        await _send_json_refusal(scope, send, store_refusal(error))
    else:
        logger.error("Token check failed", exc_info=error)
        await _send_json_refusal(scope, send, _INTERNAL)


class TokenAuth:
    """ASGI middleware: a live hub token on every protected request, within its rate limit.

    Failed authentications are counted per client address: past the limit the address gets 429
    (still checked, so a valid token from the same address is served) and no more audit rows.
    """

    def __init__(
        self,
        app: ASGIApp,
        hub: AppContext,
        limiter: Limiter,
        refusals: audit.RefusalLog,
        failures: AuthFailures,
        tokens: TokenCache,
        policy: GuardPolicy | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.hub = hub
        self.tokens = tokens
        self.limiter = limiter
        self.refusals = refusals
        self.failures = failures

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or not any(
            path == prefix.rstrip("/") or path.startswith(prefix) for prefix in _PROTECTED
        ):
            await self.app(scope, receive, send)
            return
        foreign = self._foreign(scope)
        if foreign is not None:
            await _send_json_refusal(scope, send, foreign)
            return
        try:
            checked = await self._check(scope, receive)
        except Exception as error:  # the store failed under the check (gone, damaged, busy)
            await _send_failure(scope, receive, send, error)
            return
        if isinstance(checked, Refusal):
            await _send_json_refusal(scope, send, checked)
            return
        scope.setdefault("state", {})["token"] = checked
        await self.app(scope, receive, send)

    def _foreign(self, scope: Scope) -> Refusal | None:
        """A Host or browser Origin the guard would refuse: told before the token is looked at
        (a present, invalid Origin MUST get 403), and neither audited nor counted as a failure."""
        if self.policy is None:
            return None
        return check_host(self.policy, _header(scope, b"host")) or check_origin(
            self.policy, _header(scope, b"origin")
        )

    async def _check(self, scope: Scope, receive: Receive) -> HubToken | Refusal:
        """The request's live token within its rate limit, else why it is refused (reads and
        audits in the store; a request over the limit carries its JSON-RPC id back)."""
        secret = _bearer(_header(scope, b"authorization"))
        token = None if secret is None else self.tokens.remembered(secret)
        if token is None and secret is not None:
            token = await to_thread.run_sync(self.tokens.find, secret)
        if token is None or token.revoked_at is not None:
            return await self._unauthorized(scope, secret, token)
        # A limiter turned off (0) answers at once: no thread to wait for.
        limited = self.limiter.limit > 0
        wait = await to_thread.run_sync(self._hit, token.id) if limited else None
        if wait is not None:
            await self.refusals.limited(token, wait)
            message = (
                f"Too many requests: this token may make {self.limiter.limit} requests per"
                f" minute. Retry in {wait} s."
            )
            headers = (("retry-after", str(wait)),)
            request_id = await refused_request_id(scope, receive)
            return Refusal(429, "rate_limited", message, headers, request_id)
        return token

    def _hit(self, token_id: int) -> int | None:
        """The token's request counted (a write on a SQLite store): another process holding the
        store's write lock is waited for ``STORE_WAIT_MS`` at most, then the busy line."""
        with waiting_at_most(STORE_WAIT_MS):
            return self.limiter.hit(token_id)

    async def _unauthorized(
        self, scope: Scope, secret: str | None, revoked: HubToken | None
    ) -> Refusal:
        """401, or 429 once the client's address has failed too often; audited while few, a
        revoked token's by its name (an operator sees it still in use), the client told no
        more than of an unknown one."""
        client = scope.get("client")
        wait, audited = self.failures.fail(str(client[0]) if client else "?")
        if audited and revoked is not None:
            await self.refusals.refused(revoked.name, "auth", "revoked token", revoked.projects)
        elif audited:
            detail = "no token" if secret is None else "unknown token"
            await self.refusals.refused(ANONYMOUS, "auth", detail, audit.NO_TOKEN)
        if wait is not None:
            message = (
                "Too many failed authentications from this address. Retry in"
                f" {wait} s with a valid token."
            )
            return Refusal(429, "rate_limited", message, (("retry-after", str(wait)),))
        challenge = _REALM if secret is None else _REALM + ', error="invalid_token"'
        message = (
            "Unauthorized: send Authorization: Bearer <token> (aletheia mcp-link create)."
            if secret is None
            else "Unauthorized: the token is unknown or revoked."
        )
        return Refusal(401, "unauthorized", message, (("www-authenticate", challenge),))


def _token_of(request: Request) -> HubToken:
    token: HubToken = request.state.token
    return token


def hub_mcp_endpoint(
    hub: AppContext,
    writes: WriteTurns,
    remember_seconds: float = 0.0,
    audits: AuditQueue | None = None,
) -> McpEndpoint:
    """``/mcp`` for tokens: each session runs as its token and only that token may use it; a
    session's row is remembered ``remember_seconds`` between reads of the store; reads' audit
    rows go through ``audits``."""
    audits = audits or AuditQueue(hub_store(hub), writes)

    def new_session(request: Request) -> McpSession:
        token = _token_of(request)
        return McpSession(
            app=token_app(hub, token),
            fixed_caller=token.name,
            gate=make_gate(hub, token, writes, audits),
            unrun=make_unrun_audit(hub, token, writes),
        )

    def owner_of(request: Request) -> str:
        return str(_token_of(request).id)

    def refused_calls(request: Request, tools: list[str], status: int) -> None:
        """One audit row per tools/call refused before it ran (DESIGN §11)."""
        with writes:
            audit.record_refused_calls(
                hub_store(hub), at=hub.clock(), actor=_token_of(request).name, tools=tools,
                status=status,
            )  # fmt: skip

    sessions = SessionStore(
        hub_store(hub).sessions(), hub.clock, max_sessions=SESSIONS_PER_TOKEN,
        remember_s=remember_seconds,
    )  # fmt: skip
    return McpEndpoint(
        sessions, new_session, owner_of, refused_calls=refused_calls, store_name=HUB_STORE
    )


def create_hub_app(
    hub: AppContext,
    *,
    limiter: Limiter,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    failures: AuthFailures | None = None,
    writes: WriteTurns | None = None,
    remember_seconds: float = 0.0,
    audits: AuditQueue | None = None,
) -> ASGIApp:
    """The whole hub: token check, rate limit, guard, then ``/mcp`` and ``/sync/``.

    Args:
        hub: the hub's store and clock; each token sees it through its own projects.
        limiter: requests per minute per token.
        allowed_hosts: host names served besides loopback ones (a tunnel's public name).
        allowed_origins: browser origins allowed besides loopback ones.
        failures: failed authentications per client address (default: 20 per minute).
        writes: how writing threads take turns (default: one at a time, as SQLite needs).
        remember_seconds: how long a live token and an MCP session are remembered between
            reads of the store (0: every request reads them, and a revocation or a session's
            end through another process holds at once).
        audits: how the audit rows of reads are written (``AuditQueue``; its owner closes it,
            writing what is still queued).
    """
    writes = writes or write_turns(serial=True)  # see make_gate
    failures = failures or AuthFailures()
    audits = audits or AuditQueue(hub_store(hub), writes)
    endpoint = hub_mcp_endpoint(hub, writes, remember_seconds, audits)
    refusals = audit.RefusalLog(hub, writes)
    metered = BatchMeter(endpoint, limiter, refusals.limited)

    def failed_credential(client: str, detail: str) -> int | None:
        """A wrong token on the hub's pages, counted and audited as one on ``/mcp`` is."""
        wait, audited = failures.fail(client)
        if audited:
            refusals.write(ANONYMOUS, "auth", detail, audit.NO_TOKEN)
        return wait

    ui_routes = hub_routes(hub, failed_credential)
    routes = [
        Route("/mcp", endpoint=metered),
        *SyncApi(hub, writes, audits).routes(),
        readiness_route(hub),
        *ui_routes,
    ]
    policy = make_policy(None, allowed_hosts, allowed_origins, HUB_MAX_BODY_BYTES)
    starlette = Starlette(routes=routes, exception_handlers=hub_exception_handlers())
    guarded = Guard(starlette, policy, pages=refusal_pages(hub=True))
    tokens = TokenCache(hub_store(hub), remember_seconds)
    return TokenAuth(guarded, hub, limiter, refusals, failures, tokens, policy)
