"""The JSON API under ``/api/``: memories, timeline, facts, rules, work-state lists, context.

Each route checks its inputs with the tools' own argument checker and schemas, then calls the
same domain functions and project-scope helpers as the MCP tools. ``AletheiaError``s become
``{"error": {"code", "message"}}`` with the status of their kind.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

from anyio import to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from aletheia_mem.domain.controls import json_escape_unprinted
from aletheia_mem.domain.echoes import redacted_echo
from aletheia_mem.errors import (
    AletheiaError,
    ConflictError,
    ForbiddenError,
    InvalidInputError,
    NotFoundError,
    RateLimitedError,
    StoreBrokenError,
    StoreFullError,
    StoreReadOnlyError,
    StoreTooNewError,
    StoreUnavailableError,
)
from aletheia_mem.json_objects import RepeatedKeyError, repeated_names
from aletheia_mem.server.api_routes import OPERATIONS as DECLARED
from aletheia_mem.server.guard import Refusal, refusal_body
from aletheia_mem.server.mcp import MAX_ARGUMENT_DEPTH, argument_problem
from aletheia_mem.server.openapi import (
    Handler,
    Operation,
    Reply,
    Schema,
    bounded,
    build_document,
)
from aletheia_mem.server.stdio import NotJsonNumber, json_value_once, utf8_text
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.arguments import check_arguments

JSON_TYPE = "application/json"
# The operations that can leave a live memory without a current vector (as ``EMBEDDING_WRITES``;
# pinning changes a memory's ``updated_at``): semantic recall embeds it soon after. Their served
# handler sends the notice, so ``/api/`` and the web UI (which runs it in process) both do.
_EMBEDDING_WRITES = frozenset(
    {"saveMemory", "writeWorkState", "renameWorkState", "restoreMemory", "pinMemory"}
)
RETRY_AFTER_S = 5  # what a client is told to wait when the store cannot be reached or is busy
# Told to any client of a hub, signed in or not: the cause (with the database's address) goes
# to the log.
UNAVAILABLE = "Service unavailable: the store cannot be reached; try again shortly."
_STATUS_BY_ERROR: tuple[tuple[type[AletheiaError], int], ...] = (
    (InvalidInputError, 400),
    (ForbiddenError, 403),
    (NotFoundError, 404),
    (ConflictError, 409),
    (RateLimitedError, 429),
    # The store cannot serve: the server is up, the fault is on this side, not in the request.
    (StoreBrokenError, 503),
    (StoreReadOnlyError, 503),
    (StoreTooNewError, 503),
    (StoreFullError, 507),  # Insufficient Storage: the store's disk is full
    (StoreUnavailableError, 503),  # kept busy by another process (a large import) for too long
)
_CODE_BY_STATUS = {
    400: "invalid_input",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


# Sent with every answer of ``/api/`` (as the UI's pages are): a reply holds stored memories,
# which no cache keeps, and no browser reads as anything but JSON.
API_HEADERS = {"cache-control": "no-store", "x-content-type-options": "nosniff"}
NOT_UTF8 = "The request body is not UTF-8."
OPENAPI_ROUTE = "GET /api/openapi.json"
NO_ROUTE = "No API route at this address: /api/openapi.json lists them."


def json_response(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    sent = {**API_HEADERS, **(headers or {})}
    return Response(text.encode("utf-8", "backslashreplace"), status, sent, JSON_TYPE)


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> Response:
    return json_response(status, {"error": {"code": code, "message": message}}, headers)


def status_of(error: AletheiaError) -> int:
    """The HTTP status of an expected failure (400 for any other kind)."""
    for kind, status in _STATUS_BY_ERROR:
        if isinstance(error, kind):
            return status
    return 400


def _json_body(op: Operation, raw: bytes, request: Request, required: bool) -> dict[str, Any]:
    if not raw.strip():
        if required:
            raise InvalidInputError("The request body must be a JSON object.")
        return {}
    content_type = request.headers.get("content-type", "")
    if content_type.split(";")[0].strip().lower() != JSON_TYPE:
        raise _MediaTypeError("The request body must be sent as application/json.")
    payload = _json_value(op, raw)
    if not isinstance(payload, dict):
        raise InvalidInputError("The request body must be a JSON object.")
    problem = argument_problem(payload)  # the tools' own limits: no lone surrogates, no deep nests
    if problem is not None:
        raise InvalidInputError(f"The request body is refused: {problem}")
    return payload


def _json_value(op: Operation, raw: bytes) -> Any:
    """The body's JSON value, read as UTF-8 only (a UTF-16 or UTF-32 body is refused, where
    ``json.loads`` would guess its encoding; a byte order mark before it is ignored).

    Raises:
        InvalidInputError: saying why it is none: not UTF-8, NaN or Infinity, nested too deep,
            a key given twice (``{"text": "a", "text": "b"}``: the last one to this server, the
            first maybe to a proxy or a log; ``/sync/`` refuses it too).
    """
    try:
        text = utf8_text(raw)
    except UnicodeDecodeError:
        raise InvalidInputError(NOT_UTF8) from None
    try:
        return json_value_once(text)
    except RepeatedKeyError as error:
        refuse_repeated(f"{op.method} {op.path}", error.names, "field", "the request body")
    except NotJsonNumber as error:
        raise InvalidInputError(
            f"The request body is not JSON: it holds {error.name}, and JSON has no NaN or Infinity."
        ) from None
    except RecursionError:  # nested past the parser, far past what arguments may
        raise InvalidInputError(
            "The request body is refused: arguments must not nest more than"
            f" {MAX_ARGUMENT_DEPTH} levels deep."
        ) from None
    except ValueError:
        raise InvalidInputError("The request body must be a JSON object.") from None


class _MediaTypeError(InvalidInputError):
    code = "unsupported_media_type"


async def _inputs(op: Operation, request: Request) -> dict[str, Any]:
    """Path, query and body values, checked against the operation's schemas and merged (a
    number in the address exactly: ``/api/memories/%201%20`` names no memory)."""
    args: dict[str, Any] = {}
    check_utf8_address(request)
    check_query(op, query_names(request))
    if op.query is not None:
        args.update(check_arguments(op.query, dict(request.query_params), exact=True))
    if op.body is not None:
        body = _json_body(op, await request.body(), request, op.body_required)
        check_fields(op, body)
        _check_strings(op.body, body)
        args.update(check_arguments(op.body, body))
    elif op.method != "GET":  # a write without a body: a body sent anyway holds no field
        check_fields(op, _json_body(op, await request.body(), request, False))
    if op.path_params is not None:
        args.update(check_arguments(op.path_params, dict(request.path_params), exact=True))
    return args


def check_fields(op: Operation, body: dict[str, Any]) -> None:
    """Refuse a body field the operation does not take (``scope_tier`` for ``scopeTier``):
    ignored, it would leave its default in place of what the client meant.

    Raises:
        InvalidInputError: naming the fields refused and the ones the operation takes.
    """
    route = f"{op.method} {op.path}"
    _refuse_unknown(route, _names(op.body), body, "field", "the request body", "body fields")


def check_query(op: Operation | None, params: Collection[str]) -> None:
    """Refuse a query parameter the operation (None: the OpenAPI document's route) does not
    take (``projct`` for ``project``): ignored, a search would answer for every project
    instead of the one the client meant. ``params``: every name the query string gives, each
    as often as it gives it; one given twice is refused too (``project=a&project=b``: which
    one a reader takes, the last here, the first elsewhere, would decide what is answered).

    Raises:
        InvalidInputError: naming the parameters refused and the ones the operation takes.
    """
    route = OPENAPI_ROUTE if op is None else f"{op.method} {op.path}"
    taken = [] if op is None else _names(op.query)
    _refuse_unknown(route, taken, params, "parameter", "the query string", "query parameters")
    refuse_repeated(route, params)


def query_names(request: Request) -> list[str]:
    """Every name the query string gives, each as often as it gives it."""
    return [name for name, _ in request.query_params.multi_items()]


def _names(schema: Schema | None) -> list[str]:
    return list((schema or {}).get("properties", {}))


def _refuse_unknown(
    route: str, taken: list[str], given: Iterable[str], kind: str, where: str, none: str
) -> None:
    """Raises InvalidInputError naming the names of ``given`` not ``taken`` (the first five,
    quoted as an error quotes a name) and the ones ``route`` takes."""
    unknown = list(dict.fromkeys(name for name in given if name not in taken))
    if not unknown:
        return
    kinds = kind if len(unknown) == 1 else kind + "s"
    takes = f"takes {', '.join(taken)}" if taken else f"takes no {none}"
    raise InvalidInputError(f"Unknown {kinds} {_listed(unknown)} in {where}: {route} {takes}.")


def refuse_repeated(
    route: str, given: Collection[str], kind: str = "parameter", where: str = "the query string"
) -> None:
    """Raises InvalidInputError naming the names ``given`` more than once (the first five),
    quoted as ``_refuse_unknown`` quotes them, if any is: ``route`` (an operation, or "this
    page") takes each once.

    Raises:
        InvalidInputError: ``Repeated parameter "project" in the query string: ...``.
    """
    if len(set(given)) == len(given):
        return
    repeated = repeated_names(given)
    kinds = kind if len(repeated) == 1 else kind + "s"
    raise InvalidInputError(
        f"Repeated {kinds} {_listed(repeated)} in {where}: {route} takes each {kind} once."
    )


def _listed(names: list[str]) -> str:
    """The first five of ``names``, each ``_quoted``, and how many more."""
    more = f" and {len(names) - 5} more" if len(names) > 5 else ""
    return ", ".join(_quoted(name) for name in names[:5]) + more


def _quoted(name: str) -> str:
    """A field or parameter name as a JSON string (an error repeats it: ``redacted_echo``),
    what does not print as its ``\\uXXXX`` escape: the name as it could be sent back."""
    return json_escape_unprinted(json.dumps(redacted_echo(name), ensure_ascii=False))


def _check_strings(schema: dict[str, Any], body: dict[str, Any]) -> None:
    """Refuse a JSON number (or any non-string) sent for a text field: the tools' checker
    forgives a model's ``"title": 7``, but a program's ``{"text": 1e999}`` would save "inf".

    Raises:
        InvalidInputError: naming the field.
    """
    for name, spec in schema.get("properties", {}).items():
        value = body.get(name)
        if value is None:
            continue
        if spec.get("type") == "string" and not isinstance(value, str):
            raise InvalidInputError(f"{name} must be a string.")
        texts = spec.get("type") == "array" and spec.get("items", {}).get("type") == "string"
        if texts and isinstance(value, list) and not all(isinstance(v, str) for v in value):
            raise InvalidInputError(f"each of {name} must be a string.")


def check_utf8_address(request: Request) -> None:
    """Refuse an address whose %-escapes decode to bytes that are not UTF-8 (``%ff%fe``): the
    server would read them as U+FFFD, and name a list (or look one up) with characters the
    client never sent.

    Raises:
        InvalidInputError: the path or the query string is not UTF-8 once decoded.
    """
    parts = (
        ("path", request.scope.get("raw_path") or b""),
        ("query string", (request.scope.get("query_string") or b"").replace(b"+", b" ")),
    )
    for name, raw in parts:
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raise InvalidInputError(
                f"The request's {name} is not UTF-8 once its %-escapes are decoded; names and"
                " values in the address must be UTF-8."
            ) from None


def _cross_site_write(request: Request) -> bool:
    """A write sent by a browser page of another origin (another port of 127.0.0.1 passes the
    Guard's loopback check). The API sends no CORS headers, so such a page can never read an
    answer; but a POST with no body needs no preflight, and would dismiss or pin blindly."""
    if request.method in ("GET", "HEAD"):
        return False
    site = request.headers.get("sec-fetch-site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("origin")
    host = request.headers.get("host", "").strip().lower()
    return origin is not None and urlsplit(origin.strip()).netloc.lower() != host


def _endpoint(op: Operation, app: AppContext) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        if _cross_site_write(request):
            message = "A browser page of another origin may not change anything here."
            return error_response(403, "forbidden_origin", message)
        try:
            args = await _inputs(op, request)
            status, body = await to_thread.run_sync(op.handler, app, args)
        except _MediaTypeError as error:
            return error_response(415, error.code, error.message)
        except StoreUnavailableError as error:  # a passing state: say when to try again
            headers = {"retry-after": str(RETRY_AFTER_S)}
            return error_response(status_of(error), error.code, error.message, headers)
        except AletheiaError as error:
            return error_response(status_of(error), error.code, error.message)
        return json_response(status, body)

    return endpoint


def _noticing(handler: Handler) -> Handler:
    """``handler``, then, once it succeeded, a signal to the embedding thread (never a wait)."""

    def run(app: AppContext, args: dict[str, Any]) -> Reply:
        reply = handler(app, args)
        if app.semantic is not None:
            app.semantic.notice_saved()
        return reply

    return run


def _checked(op: Operation) -> Operation:
    """The operation as served: its id fields capped (for checking and for the document alike),
    and an embedding write's handler sending the notice."""
    embeds = op.operation_id in _EMBEDDING_WRITES
    return Operation(
        op.method,
        op.path,
        op.operation_id,
        op.summary,
        _noticing(op.handler) if embeds else op.handler,
        op.response,
        op.statuses,
        bounded(op.path_params) if op.path_params else None,
        bounded(op.query) if op.query else None,
        bounded(op.body) if op.body else None,
        op.body_required,
    )


OPERATIONS: tuple[Operation, ...] = tuple(_checked(op) for op in DECLARED)


def routes(app: AppContext, *, secured: bool) -> list[Route]:
    """The API's routes, and ``/api/openapi.json`` describing them."""
    document = json_response(200, build_document(OPERATIONS, secured=secured)).body

    async def openapi(request: Request) -> Response:
        try:
            check_query(None, query_names(request))
        except InvalidInputError as error:
            return error_response(400, error.code, error.message)
        return Response(document, 200, API_HEADERS, JSON_TYPE)

    by_path: dict[str, list[Operation]] = {}
    for op in OPERATIONS:
        by_path.setdefault(op.path, []).append(op)
    found = [Route("/api/openapi.json", openapi, methods=["GET"])]
    for path, ops in by_path.items():
        endpoints = {op.method: _endpoint(op, app) for op in ops}
        # A list's name may hold "/" (``feature%2Flogin`` arrives decoded): match it whole.
        served = path.replace("{name}", "{name:path}")
        found.append(Route(served, _dispatch(endpoints), methods=list(endpoints)))
    return found


def _dispatch(
    endpoints: dict[str, Callable[[Request], Awaitable[Response]]],
) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        method = "GET" if request.method == "HEAD" else request.method
        return await endpoints[method](request)

    return endpoint


async def _http_error(request: Request, error: Exception) -> Response:
    assert isinstance(error, HTTPException)  # noqa: S101  (registered for HTTPException only)
    code = _CODE_BY_STATUS.get(error.status_code, "error")
    api = request.url.path.startswith("/api/") or request.url.path == "/api"
    message = NO_ROUTE if api and error.status_code == 404 else str(error.detail)
    return error_response(error.status_code, code, message, dict(error.headers or {}))


async def _server_error(request: Request, error: Exception) -> Response:
    """A JSON 500 in the path's dialect; Starlette re-raises, so uvicorn logs the traceback."""
    refusal = Refusal(500, "internal_error", "Internal error; see the server log.")
    body = refusal_body(request.url.path, refusal)
    return Response(body, 500, API_HEADERS, media_type=JSON_TYPE)


def exception_handlers() -> dict[Any, Callable[[Request, Exception], Awaitable[Response]]]:
    """JSON bodies for unknown routes, wrong methods and unexpected failures."""
    return {HTTPException: _http_error, Exception: _server_error}
