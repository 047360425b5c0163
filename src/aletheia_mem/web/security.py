"""The UI's own defences: response headers, the sign-in cookie and cross-site request checks.

The Guard in front of the server already refuses foreign Host and Origin headers. Here:

* every page is sent with a Content-Security-Policy that allows scripts, styles and requests
  only from this origin (no inline script), ``nosniff`` and no framing;
* with ``ALETHEIA_API_KEY`` set, a page is shown only to a browser holding the sign-in cookie
  (or to a script sending the key as a bearer token); the cookie is a sign-in session's id and
  its expiry with their HMAC under the key. The session is kept in the store (hashed, as MCP
  sessions are), so every worker process can check it and signing out ends it for a copied
  cookie too; it ends after a day unused and 7 days in all, and changing the key signs all out
  for good (a server started with a new key ends the sessions of every other key, and one
  started without a key those of every key);
* every state-changing request must come from this origin (``Origin`` equal to ``Host``) and
  carry the per-browser CSRF token: a random value kept in a cookie and echoed in each form.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote_to_bytes, urlsplit

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.errors import StoreReadOnlyError, StoreUnavailableError
from aletheia_mem.server.sessions import SessionState, SessionStore

SESSION_COOKIE = "aletheia_ui"
CSRF_COOKIE = "aletheia_csrf"
CSRF_FIELD = "csrf"
# A sign-in cookie goes to every port of its host name, and a copy works from anywhere: a week
# bounds what a copied one is worth even while it is used every day (sign-out ends it at once).
SESSION_SECONDS = 7 * 24 * 3600
WEB_SESSION = "web-ui"  # a sign-in session's marker in the sessions table
WEB_SESSIONS_PER_KEY = 100
KEY_OWNER = "web-key:"  # a sign-in session's owner: this and a digest of the key
MAX_FORM_FIELDS = 200

SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
        " connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",  # "no-referrer" would make form posts send Origin: null
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


def _signature(api_key: str, signed: str) -> str:
    message = f"ui:{signed}".encode("utf-8", "surrogatepass")
    return hmac.new(api_key.encode("utf-8"), message, hashlib.sha256).hexdigest()


def new_session_cookie(api_key: str, now: float | None = None, nonce: str | None = None) -> str:
    """``<nonce>.<expiry>.<signature>``: the expiry (epoch seconds) is signed with the nonce, so
    a copied cookie stops working when the browser's would, whatever its holder sends."""
    nonce = nonce or secrets.token_urlsafe(24)
    expires = int(time.time() if now is None else now) + SESSION_SECONDS
    signed = f"{nonce}.{expires}"
    return f"{signed}.{_signature(api_key, signed)}"


def session_cookie_valid(api_key: str, cookie: str, now: float | None = None) -> bool:
    """Whether ``cookie`` is one ``new_session_cookie`` made with this key and not expired."""
    signed, _, signature = cookie.rpartition(".")
    expires = signed.rpartition(".")[2]
    if not (expires.isascii() and expires.isdigit() and len(expires) <= 12):
        return False
    # As bytes: compare_digest refuses str with non-ASCII characters (a 500 on a forged cookie).
    expected = _signature(api_key, signed).encode()
    if not hmac.compare_digest(signature.encode("utf-8", "surrogatepass"), expected):
        return False
    return int(expires) > (time.time() if now is None else now)


def key_matches(api_key: str, given: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), api_key.encode("utf-8"))


def bearer_of(request: Request) -> str | None:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


def _no_session(request: Request) -> None:
    return None


@dataclass(frozen=True)
class Gate:
    """Who may see the pages: ``admits`` a request (run in a worker thread), ``session_for``
    the key typed on the sign-in page (the cookie to set, or None), and ``sign_out`` ends the
    request's sign-in session where it is kept (in a worker thread)."""

    cookie: str
    needed: bool
    admits: Callable[[Request], bool]
    session_for: Callable[[str], str | None]
    sign_out: Callable[[Request], None] = _no_session


def _end_sign_ins(sessions: SessionStore, keep: str) -> None:
    """End the sign-in sessions of every key but the one whose owner is ``keep`` ("": all).

    A new key, or none, signs every browser out for good: going back to an earlier key later
    does not sign its old cookies back in. (A store that cannot be reached or written keeps
    them until a start that can write it: still refused under another key, as another owner's;
    the server starts and reads as ever.)"""
    with suppress(StoreUnavailableError, StoreReadOnlyError):
        sessions.end_other_owners(KEY_OWNER, keep)


def key_gate(api_key: str | None, sessions: SessionStore | None = None) -> Gate:
    """``aletheia-server``'s gate: ``ALETHEIA_API_KEY`` when set, else the Guard alone.

    ``sessions`` keeps the sign-in sessions (the store's sessions table); their owner is a
    digest of the key, so a session of one key is none of another's. Without a key, given
    ``sessions``, the sign-in sessions of every key end, as a new key ends them."""
    if api_key is None:
        if sessions is not None:
            _end_sign_ins(sessions, keep="")
        return Gate(SESSION_COOKIE, False, lambda request: True, lambda given: None)
    if sessions is None:
        raise ValueError("a key gate needs somewhere to keep its sign-in sessions")
    key, kept = api_key, sessions
    owner = KEY_OWNER + _signature(key, "sessions")[:32]
    _end_sign_ins(kept, keep=owner)

    def session_of(cookie: str) -> str | None:
        """The session id a cookie this key signed names, while not expired."""
        if not session_cookie_valid(key, cookie):
            return None
        return cookie.partition(".")[0]

    def admits(request: Request) -> bool:
        bearer = bearer_of(request)
        if bearer is not None and key_matches(key, bearer):
            return True
        session_id = session_of(request.cookies.get(SESSION_COOKIE, ""))
        return session_id is not None and kept.get(session_id, owner) is not None

    def session_for(given: str) -> str | None:
        if not key_matches(key, given):
            return None
        state = SessionState(protocol_version=WEB_SESSION, client_name=None)
        return new_session_cookie(key, nonce=kept.add(owner, state))

    def sign_out(request: Request) -> None:
        session_id = session_of(request.cookies.get(SESSION_COOKIE, ""))
        if session_id is not None:
            kept.end(session_id, owner)

    return Gate(SESSION_COOKIE, True, admits, session_for, sign_out)


def csrf_token(request: Request) -> str:
    """This browser's token: its cookie's, or a new one (``remember_csrf`` then sets it)."""
    token = request.cookies.get(CSRF_COOKIE, "")
    if len(token) >= 32 and token.isascii():
        return token
    cached: str | None = request.scope.get("aletheia_new_csrf")
    if cached is None:
        cached = secrets.token_urlsafe(32)
        request.scope["aletheia_new_csrf"] = cached
    return cached


def browser_signature(request: Request, message: str) -> str:
    """``message`` signed with this browser's CSRF token: a value a page sent itself in an
    address (a redirect's), which a link made elsewhere cannot carry."""
    key = csrf_token(request).encode("utf-8")
    return hmac.new(key, message.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def browser_signed(request: Request, message: str, signature: str) -> bool:
    """Whether ``signature`` (from an address) is ``browser_signature`` of ``message``; one
    with non-ASCII characters is no signature (``compare_digest`` refuses such text)."""
    expected = browser_signature(request, message).encode()
    return hmac.compare_digest(signature.encode("utf-8", "surrogatepass"), expected)


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def remember_csrf(request: Request, response: Response) -> None:
    """Set the CSRF cookie when this request made a new token."""
    token = request.scope.get("aletheia_new_csrf")
    if token is not None:
        response.set_cookie(
            CSRF_COOKIE, token, httponly=True, samesite="strict", secure=_secure(request)
        )


def set_session(request: Request, response: Response, name: str, value: str) -> None:
    response.set_cookie(
        name,
        value,
        max_age=SESSION_SECONDS,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )


def clear_session(request: Request, response: Response, name: str) -> None:
    """Have the browser drop its sign-in cookie."""
    response.delete_cookie(name, httponly=True, samesite="strict", secure=_secure(request))


def same_origin(request: Request) -> bool:
    """The request says it comes from this very origin (browsers send Origin on every POST)."""
    origin = request.headers.get("origin")
    host = request.headers.get("host", "")
    if origin is None:
        # No Origin: not a browser form post; a fetch or form would carry one. Fall back on
        # Sec-Fetch-Site, which browsers also send and pages cannot forge.
        return request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
    parts = urlsplit(origin.strip())
    return parts.scheme in ("http", "https") and parts.netloc.lower() == host.strip().lower()


def form_is_utf8(raw: bytes) -> bool:
    """Whether a form body is UTF-8, its %-escapes decoded too (a page of another charset, or
    a hand-made ``caf%E9``): read with replacement characters, it would save text the owner
    never typed."""
    try:
        unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def parse_form(raw: bytes) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body; a field given twice keeps the last."""
    try:
        pairs = parse_qsl(
            raw.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS
        )
    except ValueError:  # too many fields: nothing of it is used
        return {}
    return dict(pairs)


def csrf_problem(request: Request, form: dict[str, str]) -> str | None:
    """Why a state-changing request is refused as cross-site, or None when it may go on."""
    if not same_origin(request):
        return "This request came from another site and was refused."
    cookie = request.cookies.get(CSRF_COOKIE, "")
    given = form.get(CSRF_FIELD, "")
    if not cookie or not hmac.compare_digest(cookie.encode(), given.encode()):
        return "The form's security token is missing or stale: reload the page and try again."
    return None
