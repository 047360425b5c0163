"""The hub's pages for an admin token: Tokens (create, shown once; revoke) and Audit."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.hub.tokens import SCOPES, create_token, parse_projects, verify_token
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.base import Handler, Ui, redirect
from aletheia_mem.web.render import page
from aletheia_mem.web.security import Gate, bearer_of

HUB_COOKIE = "aletheia_hub"
AUDIT_ROWS = 200
RESULTS = ("ok", "error", "refused")
MAX_FILTER = 200


def admin_gate(hub: AppContext) -> Gate:
    """Only a live admin token, as a bearer or kept in the sign-in cookie, sees the pages.
    The cookie holds the token itself, so revoking the token signs the browser out."""

    def admin(secret: str | None) -> HubToken | None:
        if not secret:
            return None
        token = verify_token(hub_store(hub), secret)
        return token if token is not None and token.scope == "admin" else None

    def admits(request: Request) -> bool:
        return admin(bearer_of(request) or request.cookies.get(HUB_COOKIE)) is not None

    def session_for(given: str) -> str | None:
        return given.strip() if admin(given.strip()) is not None else None

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
