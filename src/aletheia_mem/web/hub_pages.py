"""The hub's pages for an admin token: Tokens (create, shown once; revoke) and Audit.

An admin token limited to projects acts on the pages only within them, as it does over MCP: it
sees and revokes only tokens whose projects are all its own, creates only such tokens (never one
for every project), and sees only audit rows of its projects. An every-project admin sees all.

Creating or revoking a token also needs the admin token itself (typed again, or sent as the
bearer): browsers send a host's cookies to every port of it, so another service on the hub's
host name may hold a copy of the sign-in cookie, and that copy alone must mint no token.
"""

from __future__ import annotations

from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.blank import is_blank
from aletheia_mem.domain.echoes import echoed
from aletheia_mem.errors import AletheiaError, InvalidInputError, NotFoundError
from aletheia_mem.hub.tokens import (
    SCOPES,
    RevokeBy,
    check_revoke_name,
    checked_name,
    create_token,
    live_matches,
    one_to_revoke,
    parse_projects,
    verify_token,
)
from aletheia_mem.number_text import ascii_whole
from aletheia_mem.projects import normalize_project
from aletheia_mem.server.sessions import SessionState, SessionStore
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.entries import AuditQuery
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.base import (
    Handler,
    PageBound,
    Ui,
    credential_refusal,
    done_redirect,
    page_bound,
    pager,
    redirect,
    signed_done,
)
from aletheia_mem.web.render import page
from aletheia_mem.web.security import Gate, bearer_of

HUB_COOKIE = "aletheia_hub"
# A sign-in session's owner: never a token's id alone, as an MCP session's is, so that neither
# kind of session serves the other.
WEB_OWNER = "web:"
WEB_SESSION = "hub-web"
WEB_SESSIONS_PER_TOKEN = 100
AUDIT_ROWS = 200  # to a page of the Audit page
UPTO_DIGITS = 18  # an audit row's id, as an address carries it
ODD_AUDIT_OLDER = "This link's older= is not a number of rows: the newest rows are shown."
ODD_AUDIT_UPTO = "This link's upto= is not an audit row's id: the rows are shown as they are now."
RESULTS = ("ok", "error", "refused")
MAX_FILTER = 200
# Where the gate leaves the signed-in admin token for the handler of the same request.
ADMIN_KEY = "aletheia_hub_admin"
_REVOKE_BY: dict[str, RevokeBy] = {"name": "name", "prefix": "prefix"}
CONFIRM_FIELD = "admin_token"  # the admin token typed again to create or revoke


def admin_gate(hub: AppContext) -> Gate:
    """Only a live admin token, as a bearer or through a sign-in session, sees the pages.

    Signing in starts a session kept in the store (the MCP sessions' table, hashed, shared by
    every hub process) and the cookie holds ``<token id>:<session id>``, never the token: a
    cookie sent to another service on the hub's host name is no bearer for ``/mcp`` or sync.
    Revoking the token, or a day unused, signs the browser out. The admitted token is left on
    the request for the page (``signed_in_admin``), read afresh on every request."""
    store = hub_store(hub)
    sessions = SessionStore(store.sessions(), hub.clock, max_sessions=WEB_SESSIONS_PER_TOKEN)

    def admin(secret: str | None) -> HubToken | None:
        if not secret:
            return None
        token = verify_token(store, secret)
        return token if token is not None and token.scope == "admin" else None

    def signed_in(cookie: str) -> HubToken | None:
        token_id, _, session_id = cookie.partition(":")
        number = ascii_whole(token_id, 18)
        if number is None or not session_id:
            return None
        if sessions.get(session_id, WEB_OWNER + token_id) is None:
            return None
        live = (t for t in store.list_tokens() if t.id == number and t.revoked_at is None)
        return next((token for token in live if token.scope == "admin"), None)

    def admits(request: Request) -> bool:
        bearer = bearer_of(request)
        if bearer is not None:
            token = admin(bearer)
        else:
            token = signed_in(request.cookies.get(HUB_COOKIE, ""))
        request.scope[ADMIN_KEY] = token
        return token is not None

    def session_for(given: str) -> str | None:
        token = admin(given.strip())
        if token is None:
            return None
        state = SessionState(protocol_version=WEB_SESSION, client_name=None)
        return f"{token.id}:{sessions.add(WEB_OWNER + str(token.id), state)}"

    def sign_out(request: Request) -> None:
        token_id, _, session_id = request.cookies.get(HUB_COOKIE, "").partition(":")
        if token_id and session_id:
            sessions.end(session_id, WEB_OWNER + token_id)

    return Gate(HUB_COOKIE, True, admits, session_for, sign_out)


def signed_in_admin(request: Request) -> HubToken:
    """The admin token the gate admitted for this request."""
    token = request.scope.get(ADMIN_KEY)
    if not isinstance(token, HubToken):  # the gate runs before every page: never reached
        raise AletheiaError("Sign in first.")
    return token


def _own_projects(admin: HubToken) -> frozenset[str] | None:
    """The projects an admin acts within (normalised as the tools compare them); None: all."""
    if admin.projects is None:
        return None
    return frozenset(normalize_project(name) for name in admin.projects)


def within(admin: HubToken, token: HubToken) -> bool:
    """Whether ``admin`` may see and revoke ``token``: every project of it is the admin's own."""
    own = _own_projects(admin)
    if own is None:
        return True
    return token.projects is not None and {normalize_project(p) for p in token.projects} <= own


def _tokens_page(ui: Ui, request: Request, created: tuple[str, HubToken] | None) -> Response:
    store = hub_store(ui.app)
    admin = signed_in_admin(request)
    tokens = [token for token in store.list_tokens() if within(admin, token)]
    names = {token.name for token in tokens}
    last_used = {name: at for name, at in store.last_audit_by_actor().items() if name in names}
    return page(
        request,
        "tokens.html",
        section="Tokens",
        tokens=tokens,
        last_used=last_used,
        scopes=SCOPES,
        created=created,
        notice="Token revoked." if signed_done(request) == "revoked" else None,
        # A limited admin's new token gets its projects unless told fewer.
        default_projects="*" if admin.projects is None else ",".join(admin.projects),
        confirm_field=CONFIRM_FIELD,
    )


# How an error names the Tokens form's fields (the CLI names its flags: --projects, --name).
FORM_PROJECTS = "Projects"
FORM_NAME = "Name"


def tokens_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    return _tokens_page(ui, request, None)


def _projects_for(admin: HubToken, text: str) -> tuple[str, ...] | None:
    """The projects a new token gets: those typed, which for a limited admin must be its own.

    Raises:
        InvalidInputError: no project, or one beyond the admin's own.
    """
    own = _own_projects(admin)
    text = "" if is_blank(text) else text  # only zero-width characters: left empty
    if own is None:
        return parse_projects(text or "*", FORM_PROJECTS)
    projects = parse_projects(text or ",".join(sorted(own)), FORM_PROJECTS)
    if projects is None:
        raise InvalidInputError(
            "This admin token is limited to projects: name projects of its own, not *."
        )
    beyond = [name for name in projects if name not in own]
    if beyond:
        raise InvalidInputError(
            f'This admin token may not give a token project "{beyond[0]}": it is limited to'
            f" {', '.join(sorted(own))}."
        )
    return projects


def _unconfirmed(
    ui: Ui, request: Request, form: dict[str, str], action: str, kept: tuple[str, ...]
) -> Response | None:
    """None when the request holds the signed-in admin token itself (the bearer, or typed again
    in ``CONFIRM_FIELD``); else the page asking for it, carrying the ``kept`` form fields."""
    admin = signed_in_admin(request)
    if bearer_of(request) is not None:  # the gate checked it is this very admin token
        return None
    typed = form.get(CONFIRM_FIELD, "").strip()
    if typed:
        token = verify_token(hub_store(ui.app), typed)
        if token is not None and token.id == admin.id:
            return None
        refusal = credential_refusal(ui, request, "wrong admin token (hub page confirmation)")
        if refusal is not None:
            return refusal
    return page(
        request,
        "confirm_token.html",
        401 if typed else 200,
        section="Tokens",
        action=action,
        path=request.url.path,
        fields=[(name, form.get(name, "")) for name in kept],
        confirm_field=CONFIRM_FIELD,
        failed=bool(typed),
    )


def token_create(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Make a token and show its secret in this answer only (never stored, never redirected)."""
    name = form.get("name", "").strip()
    name = "" if is_blank(name) else name  # only zero-width characters: the default name
    if name:  # refused before the confirmation shows it (a secret in it: ``checked_name``)
        checked_name(name, FORM_NAME)
    action = f'Create token "{name}"' if name else "Create a token"
    asked = _unconfirmed(ui, request, form, action, ("name", "scope", "projects"))
    if asked is not None:
        return asked
    store = hub_store(ui.app)
    created = create_token(
        store,
        store.store_clock,  # as mcp-link create: every hub process shares the store's clock
        scope=form.get("scope", ""),
        projects=_projects_for(signed_in_admin(request), form.get("projects", "").strip()),
        name=form.get("name"),
    )
    return _tokens_page(ui, request, created)


def token_revoke(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Revoke a live token by name (or shown prefix), as ``mcp-link revoke`` does; a limited
    admin is told of a token beyond its projects exactly as of one that does not exist."""
    store = hub_store(ui.app)
    admin = signed_in_admin(request)
    given = form.get("name", "")[:MAX_FILTER]
    check_revoke_name(given, FORM_NAME)  # before the confirmation page offers to revoke it
    # A row's Revoke button names its token (by=name); a form without "by" reads a name or
    # first characters, as mcp-link revoke does. Every live token ``given`` names must be
    # within the admin's reach, and be one (``one_to_revoke``).
    matches = live_matches(store.list_tokens(), given, _REVOKE_BY.get(form.get("by", "")))
    if not matches or not all(within(admin, token) for token in matches):
        raise NotFoundError(f'No live token named "{echoed(given)}".')
    chosen = one_to_revoke(matches, given)
    asked = _unconfirmed(ui, request, form, f'Revoke token "{given}"', ("name", "by"))
    if asked is not None:
        return asked
    store.revoke_token(chosen.name, store.store_clock())
    return done_redirect(request, "/tokens", [("done", "revoked")])


def _audit_query(admin: HubToken, chosen: dict[str, str], bound: PageBound) -> AuditQuery:
    """The rows ``chosen`` names from ``bound``; for a limited admin, only rows of its projects
    (never a row with no project or another's)."""
    own = _own_projects(admin)
    projects: tuple[str, ...] | None = (chosen["project"],) if chosen["project"] else None
    if own is not None:
        wanted = own if not chosen["project"] else own & {normalize_project(chosen["project"])}
        projects = tuple(sorted(wanted))
    return AuditQuery(
        AUDIT_ROWS,
        bound.offset,
        chosen["token"] or None,
        chosen["tool"] or None,
        projects,
        chosen["result"] or None,
        bound.upto,
    )


def audit_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """The newest rows matching the filters, ``AUDIT_ROWS`` to a page, saying how many match:
    a later page's link carries the filters and the first page's highest row id (``upto``), so
    rows written meanwhile push none onto it; the first page is read anew."""
    chosen = {
        name: request.query_params.get(name, "").strip()[:MAX_FILTER]
        for name in ("token", "tool", "project", "result")
    }
    store = hub_store(ui.app)
    admin = signed_in_admin(request)
    bound = page_bound(request.query_params, "older", UPTO_DIGITS)
    found = store.audit_page(_audit_query(admin, chosen, bound))
    kept = {name: value for name, value in chosen.items() if value}
    later = {"upto": str(found.newest_id)} if found.newest_id else {}
    return page(
        request,
        "audit.html",
        section="Audit",
        rows=found.rows,
        pages=pager(found.offset, AUDIT_ROWS, found.total),
        page_query=lambda older: urlencode(kept | ({"older": str(older)} | later if older else {})),
        chosen=chosen,
        results=RESULTS,
        token_names=[token.name for token in store.list_tokens() if within(admin, token)],
        notice=bound.notice(ODD_AUDIT_OLDER, ODD_AUDIT_UPTO),
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
