"""What every page handler works with: the UI's context, redirects and error pages."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from aletheia_mem.errors import StoreTooNewError, StoreUnavailableError
from aletheia_mem.number_text import ascii_whole
from aletheia_mem.server.api import RETRY_AFTER_S, UNAVAILABLE
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.render import page, secure
from aletheia_mem.web.security import Gate, browser_signature, browser_signed
from aletheia_mem.web.visible import visible

STORED_SUFFIX = ".stored"
SIGNED = "signed"  # the field of a redirect's address that signs the rest of it
# The store failing under a page: told as a page of its own (503), not as the page's error.
STORE_FAILURES = (StoreUnavailableError, StoreTooNewError)
MAX_OFFSET = 1_000_000  # as far as the search tool's offset goes

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Ui:
    """What every page works on: the store as the UI's caller, who may see it, and
    where Write to tools writes (the server's repository and the user's home folder)."""

    app: AppContext
    gate: Gate
    root: Path
    home: Path
    hub: bool = False  # the hub's pages (Tokens, Audit) instead of the owner's
    # A failed credential from a client address (``detail`` says which kind), counted and
    # audited as the hub's other endpoints do: the seconds the address must wait, or None.
    failed_credential: Callable[[str, str], int | None] | None = None
    # aletheia-server's: the seconds an address that failed too often still waits, during
    # which its sign-ins are refused unread, the right key too (a hub's clients may share one
    # address, so the hub serves the right token whatever others sent).
    credential_wait: Callable[[str], int | None] | None = None


def client_address(request: Request) -> str:
    return request.client.host if request.client else "?"


def credential_refusal(ui: Ui, request: Request, detail: str) -> Response | None:
    """Count a wrong key, token or cookie from the request's address (in a worker thread);
    past the limit the answer is 429, else None (answer as usual)."""
    if ui.failed_credential is None:
        return None
    wait = ui.failed_credential(client_address(request), detail)
    return None if wait is None else wait_page(request, wait)


def store_failure_page(
    ui: Ui, request: Request, error: StoreUnavailableError | StoreTooNewError
) -> Response:
    """503 when the store cannot serve a page, with one line in the log saying why. While it
    cannot be reached (a passing state) with ``Retry-After``, and on the hub without the
    database's address, as ``/mcp`` and ``/sync/`` answer; a store a newer version migrated
    is told as such."""
    logger.warning("Page %s failed: %s", request.url.path, error.message)
    if isinstance(error, StoreTooNewError):
        return error_page(request, 503, error.message)
    response = error_page(request, 503, UNAVAILABLE if ui.hub else error.message)
    response.headers["retry-after"] = str(RETRY_AFTER_S)
    return response


def wait_page(request: Request, wait: int) -> Response:
    """429: the address failed to sign in too often."""
    message = f"Too many failed sign-ins from this address. Retry in {wait} s."
    response = error_page(request, 429, message)
    response.headers["retry-after"] = str(wait)
    return response


def safe_next(value: str | None, fallback: str = "/") -> str:
    """A local path to go back to; anything that could leave the site becomes ``fallback``."""
    if not value or not value.startswith("/") or value.startswith(("//", "/\\")):
        return fallback
    if any(ord(ch) < 0x20 or ch == "\\" for ch in value):
        return fallback
    return value


def whole_number(text: str, max_digits: int) -> int | None:
    """``text`` as a number when it is 1 to ``max_digits`` ASCII digits, else None
    (``ascii_whole``: ``int`` also takes "\uff11", "\u0663" and "1_0")."""
    return ascii_whole(text, max_digits)


def address_offset(text: str) -> int:
    """A page's ``offset`` from its address: a whole number, at most ``MAX_OFFSET`` (a longer
    one is past the end of any list, an empty page rather than the first); anything else 0."""
    offset = ascii_whole(text, len(text))
    if offset is None:
        return 0
    return MAX_OFFSET if len(text) > len(str(MAX_OFFSET)) else min(offset, MAX_OFFSET)


@dataclass(frozen=True)
class PageBound:
    """Where a later page of a bounded list starts, as its address says: ``offset`` rows in,
    of the rows with ids up to ``upto`` (None: every row, as they are now). ``odd_offset`` and
    ``odd_upto``: the address held a value that is none (the page tells, and reads the first
    page, or the rows as they are now)."""

    offset: int
    upto: int | None
    odd_offset: bool
    odd_upto: bool

    def notice(self, odd_offset: str, odd_upto: str, *others: tuple[str, bool]) -> str | None:
        """What the page says of the odd values its address held, in these words (None);
        ``others``: the words of the page's other odd values, and whether each was sent."""
        odd = ((odd_offset, self.odd_offset), (odd_upto, self.odd_upto), *others)
        return " ".join(text for text, sent in odd if sent) or None


def page_bound(params: Mapping[str, str], offset_name: str, upto_digits: int) -> PageBound:
    """The ``offset_name`` and ``upto`` of an address (``upto`` a row id of at most
    ``upto_digits`` digits, never 0)."""
    sent, sent_upto = params.get(offset_name, ""), params.get("upto", "")
    upto = whole_number(sent_upto, upto_digits)
    odd_offset = bool(sent) and ascii_whole(sent, len(sent)) is None
    return PageBound(address_offset(sent), upto or None, odd_offset, bool(sent_upto) and not upto)


@dataclass(frozen=True)
class Pager:
    """Where a page of ``per_page`` rows stands in ``total``: its first and last row (from 1),
    and the offsets of the older and newer pages (None: there is none)."""

    first: int
    last: int
    total: int
    older: int | None
    newer: int | None


def pager(offset: int, per_page: int, total: int) -> Pager:
    following = offset + per_page
    return Pager(
        offset + 1,
        min(following, total),
        total,
        following if following < total else None,
        max(offset - per_page, 0) if offset else None,
    )


def submitted(values: Mapping[str, str], name: str) -> str:
    """A text field as the owner meant it: a field shows a stored value with its escapes
    (``\\u202e``), and a hidden twin (``name.stored``, the ``stored_twin`` macro) carries the
    value itself; while the field still shows exactly that, the stored value is what was meant,
    so sending a form unchanged never turns a stored character into its escape."""
    shown = values.get(name, "")
    stored = values.get(name + STORED_SUFFIX)
    return stored if stored is not None and visible(stored) == shown else shown


def redirect(to: str) -> Response:
    return secure(RedirectResponse(to, 303))


def _address(path: str, fields: Iterable[tuple[str, str]]) -> str:
    """``path?fields`` (without the signature), written one way whoever parsed it."""
    return f"done\0{path}?" + urlencode([(k, v) for k, v in fields if k != SIGNED])


def done_redirect(request: Request, to: str, fields: Iterable[tuple[str, str]]) -> Response:
    """303 to ``to`` with ``fields`` (``done`` and what the notice names) added and the whole
    address signed with this browser's CSRF token (``browser_signature``): the page shows a
    notice saying that something happened only at an address this browser's own action made
    (``signed_done``), never at a link made elsewhere."""
    path, _, query = to.partition("?")
    pairs = [*parse_qsl(query, keep_blank_values=True), *fields]
    signature = browser_signature(request, _address(path, pairs))
    return redirect(f"{path}?{urlencode([*pairs, (SIGNED, signature)])}")


def signed_address(request: Request) -> bool:
    """Whether the request's address is one ``done_redirect`` made for this browser."""
    params = request.query_params
    message = _address(request.url.path, params.multi_items())
    return browser_signed(request, message, params.get(SIGNED, ""))


def signed_done(request: Request) -> str:
    """The address's ``done`` when ``done_redirect`` made it for this browser, else ""."""
    return request.query_params.get("done", "") if signed_address(request) else ""


def error_page(request: Request, status: int, message: str) -> Response:
    return page(request, "error.html", status, message=message, section="")


Handler = Callable[[Ui, Request, dict[str, str]], Response]
