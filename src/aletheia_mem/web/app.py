"""The UI's routes: each page or action runs in a worker thread behind the sign-in and CSRF
checks, and answers with a page carrying the security headers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from anyio import to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from aletheia_mem.config import load_settings
from aletheia_mem.errors import AletheiaError, InvalidInputError
from aletheia_mem.projects import project_root
from aletheia_mem.server import api
from aletheia_mem.server.api import check_utf8_address, query_names, refuse_repeated, status_of
from aletheia_mem.server.auth_failures import AuthFailures
from aletheia_mem.server.guard import Refusal, RefusalPage, key_wait
from aletheia_mem.server.sessions import SessionStore
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web import hub_pages, knowledge_pages, memory_pages, work_pages
from aletheia_mem.web.base import (
    STORE_FAILURES,
    Handler,
    Ui,
    client_address,
    credential_refusal,
    error_page,
    redirect,
    safe_next,
    store_failure_page,
    wait_page,
)
from aletheia_mem.web.knowledge_pages import LIST_PARAMETERS
from aletheia_mem.web.render import STATIC, page, secure
from aletheia_mem.web.security import (
    WEB_SESSIONS_PER_KEY,
    bearer_of,
    clear_session,
    csrf_problem,
    form_is_utf8,
    key_gate,
    parse_form,
    remember_csrf,
    set_session,
)

# Paths a program asks: an unknown address there answers in JSON, as the API's errors do.
PROGRAM_PATHS = ("/api/", "/mcp", "/static/")
HUB_PROGRAM_PATHS = ("/mcp", "/sync/", "/static/", "/healthz")
NO_PAGE = "No page at this address. Check the address, or start from Memories."
HUB_NO_PAGE = "No page at this address. Check the address, or start from Tokens."
NOT_UTF8_FORM = "The form's text is not UTF-8, so nothing was saved. Reload the page and try again."
ExceptionHandler = Callable[[Request, Exception], Awaitable[Response]]

PAGES = (*memory_pages.PAGES, *knowledge_pages.PAGES, *work_pages.PAGES)
STATIC_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
FAVICON = "favicon.svg"  # also at /favicon.ico, which browsers ask for on their own


def _guarded(
    ui: Ui, handler: Handler, request: Request, form: dict[str, str], writes: bool
) -> Response:
    """Sign-in, then for a write the CSRF check, then the handler (in a worker thread)."""
    if not ui.gate.admits(request):
        presented = bearer_of(request) or request.cookies.get(ui.gate.cookie)
        refusal = credential_refusal(ui, request, "no admin token (web UI)") if presented else None
        if refusal is not None:
            return refusal
        if writes:
            return error_page(request, 401, "Sign in first.")
        query = request.url.query
        back = request.url.path + ("?" + query if query else "")
        return redirect("/sign-in?" + urlencode({"next": back}))
    if writes:
        problem = csrf_problem(request, form)
        if problem is not None:
            return error_page(request, 403, problem)
    request.scope["aletheia_signed_in"] = ui.gate.needed  # the pages then offer Sign out
    try:
        return handler(ui, request, form)
    except STORE_FAILURES:
        raise  # told by _store_failures_told
    except AletheiaError as error:
        return error_page(request, status_of(error), error.message)


Endpoint = Callable[[Request], Awaitable[Response]]


def _store_failures_told(ui: Ui, endpoint: Endpoint) -> Endpoint:
    """``endpoint``, answering 503 (one line in the log) when the store fails under it, from
    the sign-in check to the page itself, rather than 500 with a traceback."""

    async def told(request: Request) -> Response:
        try:
            return await endpoint(request)
        except STORE_FAILURES as error:
            return store_failure_page(ui, request, error)

    return told


def _address_problem(request: Request, lists: frozenset[str] = frozenset()) -> str | None:
    """Why a page refuses its address, as ``/api/`` refuses one: %-escapes that are not UTF-8
    (read as U+FFFD, it would search what nobody typed), or a query parameter given twice
    (``project=a&project=b`` showed b, where a proxy or a log reads a) other than ``lists``."""
    try:
        check_utf8_address(request)
        refuse_repeated("this page", [name for name in query_names(request) if name not in lists])
    except InvalidInputError as error:
        return error.message
    return None


def _wrap(ui: Ui, handler: Handler, writes: bool, lists: frozenset[str]) -> Endpoint:
    async def endpoint(request: Request) -> Response:
        request.scope["aletheia_hub"] = ui.hub
        problem = _address_problem(request, lists)
        if problem is not None:
            return error_page(request, 400, problem)
        raw = await request.body() if writes else b""
        if not form_is_utf8(raw):
            return error_page(request, 400, NOT_UTF8_FORM)
        form = parse_form(raw) if writes else {}
        return await to_thread.run_sync(_guarded, ui, handler, request, form, writes)

    return _store_failures_told(ui, endpoint)


def _static() -> dict[str, tuple[bytes, str]]:
    found = {}
    for item in STATIC.iterdir():
        suffix = "." + item.name.rsplit(".", 1)[-1]
        if suffix in STATIC_TYPES:
            found[item.name] = (item.read_bytes(), STATIC_TYPES[suffix])
    return found


def _static_routes() -> list[BaseRoute]:
    files = _static()

    async def static(request: Request) -> Response:
        found = files.get(request.path_params["name"])
        if found is None:
            return secure(Response("Not found", 404, media_type="text/plain"))
        response = Response(found[0], media_type=found[1])
        # Pages link the files by a hash of their content (asset_url): safe to keep a year.
        response.headers["cache-control"] = "public, max-age=31536000, immutable"
        return secure(response)

    async def favicon(request: Request) -> Response:
        body, media_type = files[FAVICON]
        response = Response(body, media_type=media_type)
        response.headers["cache-control"] = "public, max-age=86400"
        return secure(response)

    return [
        Route("/static/{name}", static, methods=["GET"]),
        Route("/favicon.ico", favicon, methods=["GET"]),
    ]


def _wants_page(request: Request, program_paths: tuple[str, ...]) -> bool:
    """A browser opening an address (not a program calling the API, MCP or sync)."""
    path = request.url.path
    if request.method not in ("GET", "HEAD") or path == "/api" or path.startswith(program_paths):
        return False
    return "text/html" in request.headers.get("accept", "")


def _form_page(request: Request) -> str:
    """The page a form-only address's form is on: the nearest address above it that a page
    answers (``/memories/5/dismiss``: ``/memories/5``; ``/rules/r_1/confirm``, ``/rules/add``:
    ``/rules``; ``/tokens/create``: ``/tokens``; ``/sign-out``: ``/``)."""
    routes = request.app.router.routes
    parts = request.url.path.rstrip("/").split("/")
    while len(parts) > 1:
        parts.pop()
        above = "/".join(parts) or "/"
        scope = {"type": "http", "path": above, "method": "GET", "root_path": ""}
        if any(route.matches(scope)[0] == Match.FULL for route in routes):
            return above
    return "/"


def _pages_for_browsers(
    otherwise: ExceptionHandler, hub: bool, program_paths: tuple[str, ...]
) -> ExceptionHandler:
    """``otherwise``, but for a browser the UI's 404 page at an unknown address, and at a
    form's address (a form's result or error page leaves it in the address bar, where Enter or
    the history opens it) a redirect (303) to the page the form is on."""

    async def handle(request: Request, error: Exception) -> Response:
        if isinstance(error, HTTPException) and _wants_page(request, program_paths):
            request.scope["aletheia_hub"] = hub
            if error.status_code == 404:
                return error_page(request, 404, HUB_NO_PAGE if hub else NO_PAGE)
            if error.status_code == 405:
                return redirect(_form_page(request))
        return await otherwise(request, error)

    return handle


def refusal_pages(hub: bool = False) -> RefusalPage:
    """The UI's error page for a request the front door refuses at a UI address (a form posted
    from ``Origin: null``, a form over the size cap, an unknown Host), where a browser would
    otherwise show a JSON-RPC body; programs' paths keep their JSON."""
    program_paths = HUB_PROGRAM_PATHS if hub else PROGRAM_PATHS

    def answer(scope: Scope, refusal: Refusal) -> Response | None:
        path = scope.get("path", "")
        if path == "/api" or path.startswith(program_paths):
            return None
        request = Request(scope)
        request.scope["aletheia_hub"] = hub
        response = error_page(request, refusal.status, refusal.message)
        for name, value in refusal.headers:
            response.headers[name] = value
        return response

    return answer


def exception_handlers() -> dict[Any, ExceptionHandler]:
    """The API's JSON errors, but UI pages for a browser (``_pages_for_browsers``)."""
    handlers = api.exception_handlers()
    as_json = handlers[HTTPException]
    return {**handlers, HTTPException: _pages_for_browsers(as_json, False, PROGRAM_PATHS)}


def hub_exception_handlers() -> dict[Any, ExceptionHandler]:
    """Starlette's plain-text errors on the hub, but UI pages for a browser there too."""

    async def plain(request: Request, error: Exception) -> Response:
        assert isinstance(error, HTTPException)  # noqa: S101  (registered for HTTPException only)
        return PlainTextResponse(str(error.detail), error.status_code, error.headers)

    return {HTTPException: _pages_for_browsers(plain, True, HUB_PROGRAM_PATHS)}


def _sign_in_routes(ui: Ui) -> list[BaseRoute]:
    async def show(request: Request) -> Response:
        request.scope["aletheia_hub"] = ui.hub
        problem = _address_problem(request)
        if problem is not None:
            return error_page(request, 400, problem)
        target = safe_next(request.query_params.get("next"))
        return page(
            request, "sign_in.html", next=target, failed=False, hub=ui.hub, needed=ui.gate.needed
        )

    async def submit(request: Request) -> Response:
        request.scope["aletheia_hub"] = ui.hub
        form = parse_form(await request.body())
        problem = csrf_problem(request, form)
        if problem is not None:
            return error_page(request, 403, problem)
        target = safe_next(form.get("next"))
        if not ui.gate.needed:
            return redirect(target)
        wait = None if ui.credential_wait is None else ui.credential_wait(client_address(request))
        if wait is not None:
            return wait_page(request, wait)
        session = await to_thread.run_sync(ui.gate.session_for, form.get("key", ""))
        if session is None:
            detail = "no admin token (web sign-in)"
            refusal = await to_thread.run_sync(credential_refusal, ui, request, detail)
            if refusal is not None:
                return refusal
            shown = {"next": target, "hub": ui.hub, "needed": True}
            return page(request, "sign_in.html", 401, failed=True, **shown)
        response = redirect(target)
        set_session(request, response, ui.gate.cookie, session)
        remember_csrf(request, response)
        return response

    async def sign_out(request: Request) -> Response:
        """End this browser's sign-in session (kept in the store) and drop its cookie."""
        request.scope["aletheia_hub"] = ui.hub
        problem = csrf_problem(request, parse_form(await request.body()))
        if problem is not None:
            return error_page(request, 403, problem)
        await to_thread.run_sync(ui.gate.sign_out, request)
        response = redirect("/sign-in")
        clear_session(request, response, ui.gate.cookie)
        return response

    return [
        Route("/sign-in", show, methods=["GET"]),
        Route("/sign-in", _store_failures_told(ui, submit), methods=["POST"]),
        Route("/sign-out", _store_failures_told(ui, sign_out), methods=["POST"]),
    ]


def _build(ui: Ui, pages: tuple[tuple[str, Handler, bool], ...]) -> list[BaseRoute]:
    found: list[BaseRoute] = [*_static_routes(), *_sign_in_routes(ui)]
    for path, handler, writes in pages:
        endpoint = _wrap(ui, handler, writes, LIST_PARAMETERS.get(path, frozenset()))
        found.append(Route(path, endpoint, methods=["POST" if writes else "GET"]))
    return found


def routes(
    app: AppContext,
    api_key: str | None,
    failures: AuthFailures | None = None,
    mcp_sessions: SessionStore | None = None,
) -> list[BaseRoute]:
    """Every route of the owner's UI, to mount beside ``/mcp`` and ``/api/``.

    ``failures`` counts wrong keys per client address (shared with the bearer check of ``/mcp``
    and ``/api/``), past which an address waits; with a key, sign-ins are kept in the rows of
    ``mcp_sessions`` (the server's MCP sessions, closed with them); without a key, the
    sign-ins made under a key before end there."""
    if mcp_sessions is None:
        mcp_sessions = SessionStore(hub_store(app).sessions(), app.clock)
    sessions = mcp_sessions.sharing_rows(WEB_SESSIONS_PER_KEY)
    counted = failures

    def failed_credential(client: str, detail: str) -> int | None:
        return None if counted is None else counted.fail(client)[0]

    root = project_root(load_settings().cwd)
    gate = key_gate(api_key, sessions)
    ui = Ui(
        app,
        gate,
        root,
        Path.home(),
        failed_credential=failed_credential,
        credential_wait=None if counted is None else partial(key_wait, counted),
    )
    return _build(ui, PAGES)


def hub_routes(
    hub: AppContext, failed_credential: Callable[[str, str], int | None] | None = None
) -> list[BaseRoute]:
    """The hub's UI (Tokens, Audit) for admin tokens, to mount beside the hub's ``/mcp``;
    ``failed_credential`` counts wrong tokens as the hub's other endpoints do."""
    gate = hub_pages.admin_gate(hub)
    ui = Ui(hub, gate, Path.cwd(), Path.home(), hub=True, failed_credential=failed_credential)
    return _build(ui, hub_pages.PAGES)
