"""The hub's pages for an admin token: Tokens (create, shown once; revoke) and Audit."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.hub.tokens import SCOPES, create_token, parse_projects, verify_token
from aletheia_mem.server.sessions import SessionState, SessionStore
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.base import Handler, Ui, redirect
from aletheia_mem.web.render import page
from aletheia_mem.web.security import Gate, bearer_of

HUB_COOKIE = "aletheia_hub"
# A sign-in session's owner: never a token's id alone, as an MCP session's is, so that neither
# kind of session serves the other.
WEB_OWNER = "web:"
WEB_SESSION = "hub-web"
WEB_SESSIONS_PER_TOKEN = 100
AUDIT_ROWS = 200
RESULTS = ("ok", "error", "refused")
MAX_FILTER = 200


def admin_gate(hub: AppContext) -> Gate:
    """Only a live admin token, as a bearer or through a sign-in session, sees the pages.

    Signing in starts a session kept in the store (the MCP sessions' table, hashed, shared by
    every hub process) and the cookie holds ``<token id>:<session id>``, never the token: a
    cookie sent to another service on the hub's host name is no bearer for ``/mcp`` or sync.
    Revoking the token, or a day unused, signs the browser out."""
    store = hub_store(hub)
    sessions = SessionStore(store.sessions(), hub.clock, max_sessions=WEB_SESSIONS_PER_TOKEN)

    def admin(secret: str | None) -> HubToken | None:
        if not secret:
            return None
        token = verify_token(store, secret)
        return token if token is not None and token.scope == "admin" else None

    def signed_in(cookie: str) -> bool:
        token_id, _, session_id = cookie.partition(":")
        if not (token_id.isascii() and token_id.isdigit() and len(token_id) <= 18 and session_id):
            return False
        if sessions.get(session_id, WEB_OWNER + token_id) is None:
            return False
        live = (t for t in store.list_tokens() if t.id == int(token_id) and t.revoked_at is None)
        return any(token.scope == "admin" for token in live)

    def admits(request: Request) -> bool:
        bearer = bearer_of(request)
        if bearer is not None:
            return admin(bearer) is not None
        return signed_in(request.cookies.get(HUB_COOKIE, ""))

    def session_for(given: str) -> str | None:
        token = admin(given.strip())
        if token is None:
            return None
        state = SessionState(protocol_version=WEB_SESSION, client_name=None)
        return f"{token.id}:{sessions.add(WEB_OWNER + str(token.id), state)}"

    return Gate(HUB_COOKIE, True, admits, session_for)


def _tokens_page(ui: Ui, request: Request, created: tuple[str, HubToken] | None) -> Response:
    store = hub_store(ui.app)
    return page(
        request,
        "tokens.html",
        section="Tokens",
        tokens=store.list_tokens(),
        last_used=store.last_audit_by_actor(),
        scopes=SCOPES,
        created=created,
        notice="Token revoked." if request.query_params.get("done") == "revoked" else None,
    )


def tokens_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    return _tokens_page(ui, request, None)


def token_create(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Make a token and show its secret in this answer only (never stored, never redirected)."""
    created = create_token(
        hub_store(ui.app),
        ui.app.clock,
        scope=form.get("scope", ""),
        projects=parse_projects(form.get("projects", "") or "*"),
        name=form.get("name"),
    )
    return _tokens_page(ui, request, created)


def token_revoke(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    hub_store(ui.app).revoke_token(form.get("name", "")[:MAX_FILTER], ui.app.clock())
    return redirect("/tokens?done=revoked")


def audit_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    chosen = {
        name: request.query_params.get(name, "").strip()[:MAX_FILTER]
        for name in ("token", "tool", "project", "result")
    }
    store = hub_store(ui.app)
    rows = store.list_audit_page(
        AUDIT_ROWS,
        chosen["token"] or None,
        chosen["tool"] or None,
        chosen["project"] or None,
        chosen["result"] or None,
    )
    return page(
        request,
        "audit.html",
        section="Audit",
        rows=rows,
        chosen=chosen,
        results=RESULTS,
        token_names=[token.name for token in store.list_tokens()],
    )


def home(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    return redirect("/tokens")


PAGES: tuple[tuple[str, Handler, bool], ...] = (
    ("/", home, False),
    ("/tokens", tokens_page, False),
    ("/tokens/create", token_create, True),
    ("/tokens/revoke", token_revoke, True),
    ("/audit", audit_page, False),
)
