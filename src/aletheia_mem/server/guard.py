"""The HTTP front door: Host and Origin checks against DNS rebinding, the bearer key, a body cap.

``Guard`` is plain ASGI middleware in front of every route. A refused request gets a JSON body in
the dialect of its path: a JSON-RPC error on ``/mcp``, ``{"error": {"code", "message"}}`` on
``/api/``.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from aletheia_mem.domain.echoes import redacted_echo
from aletheia_mem.server.auth_failures import AuthFailures

MAX_BODY_BYTES = 4 * 1024 * 1024
# Characters of a refused Host or Origin its refusal repeats: a whole valid one (a DNS name has
# at most 253, an origin adds a scheme and a port).
MAX_HEADER_ECHO = 300
JSONRPC_INVALID_REQUEST = -32600
_CHALLENGE = 'Bearer realm="aletheia"'


@dataclass(frozen=True)
class Refusal:
    """Why a request is turned away: HTTP status, stable code, message, extra headers, and the
    id of the JSON-RPC request refused when its body was read (else null in the reply)."""

    status: int
    code: str
    message: str
    headers: tuple[tuple[str, str], ...] = ()
    request_id: str | int | None = None


@dataclass(frozen=True)
class GuardPolicy:
    """Who may come in. ``allowed_hosts`` and ``allowed_origins`` add to the loopback ones."""

    api_key: str | None = None
    allowed_hosts: frozenset[str] = frozenset()
    allowed_origins: frozenset[str] = frozenset()
    max_body_bytes: int = MAX_BODY_BYTES


def make_policy(
    api_key: str | None,
    allowed_hosts: Iterable[str] = (),
    allowed_origins: Iterable[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
) -> GuardPolicy:
    """A policy with the names normalised as the checks compare them."""
    hosts = {name for name in (host_name(host) for host in allowed_hosts) if name}
    origins = {origin for origin in (normal_origin(o) for o in allowed_origins) if origin}
    return GuardPolicy(api_key or None, frozenset(hosts), frozenset(origins), max_body_bytes)


def host_name(value: str) -> str | None:
    """The lower-case host of a ``Host`` header value (``[::1]:8765`` gives ``::1``)."""
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, port = (value[1:end], value[end + 1 :]) if end > 1 else ("", "")
    elif value.count(":") == 1:
        name, port = value[: value.index(":")], value[value.index(":") :]
    else:
        name, port = value, ""
    digits = port[1:]
    if port and not (port[0] == ":" and digits.isascii() and (digits.isdigit() or not digits)):
        return None  # "127.0.0.1:80@evil.com", "[::1]x"
    return name or None


def is_loopback(name: str) -> bool:
    """``localhost`` or a loopback address (127.0.0.0/8, ::1)."""
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def normal_origin(value: str) -> str | None:
    """``scheme://host[:port]`` in lower case, or None when it is not an http(s) origin."""
    try:
        parts = urlsplit(value.strip())
        parts.port  # noqa: B018  (raises ValueError on a bad port)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    return f"{parts.scheme}://{parts.netloc.lower()}"


def check_host(policy: GuardPolicy, value: str | None) -> Refusal | None:
    """Refuse a ``Host`` that is neither loopback nor allowed (DNS rebinding)."""
    if value is None:
        return None
    name = host_name(value)
    if name is not None and (is_loopback(name) or name in policy.allowed_hosts):
        return None
    # Told as sent, a secret in it redacted; the hint names the host in it, when one is left.
    shown = redacted_echo(value.strip(), MAX_HEADER_ECHO)
    named = host_name(shown)
    hint = (
        f"start the server with --allow-host {named} to serve it" if named else "check the address"
    )
    return Refusal(421, "invalid_host", f"Host {shown!r} is not served here: {hint}.")


def check_origin(policy: GuardPolicy, value: str | None) -> Refusal | None:
    """Refuse an ``Origin`` that is neither loopback nor on the allow-list; none is fine."""
    if value is None:
        return None
    origin = normal_origin(value)
    if origin is not None:
        hostname = urlsplit(origin).hostname or ""
        if is_loopback(hostname) or origin in policy.allowed_origins:
            return None
    shown = redacted_echo(value.strip(), MAX_HEADER_ECHO)
    return Refusal(403, "forbidden_origin", f"Origin {shown!r} is not allowed.")


def check_bearer(policy: GuardPolicy, value: bytes | None) -> Refusal | None:
    """With an API key set, require ``Authorization: Bearer <key>`` (constant-time compare)."""
    if policy.api_key is None:
        return None
    if value is None:
        return Refusal(
            401,
            "unauthorized",
            "Unauthorized: send Authorization: Bearer <ALETHEIA_API_KEY>.",
            (("www-authenticate", _CHALLENGE),),
        )
    scheme, _, token = value.strip().partition(b" ")
    if scheme.lower() == b"bearer" and hmac.compare_digest(
        token.strip(), policy.api_key.encode("utf-8")
    ):
        return None
    return Refusal(
        401,
        "unauthorized",
        "Unauthorized: the bearer token is not the server's API key.",
        (("www-authenticate", _CHALLENGE + ', error="invalid_token"'),),
    )


def speaks_json(path: str) -> bool:
    """``/mcp`` and ``/api/`` take the bearer key; the web UI's pages check their own sign-in."""
    return path == "/mcp" or path == "/api" or path.startswith(("/api/", "/mcp/"))


def refusal_body(path: str, refusal: Refusal) -> bytes:
    """The JSON body of a refusal, in the dialect of the path."""
    if path == "/api" or path.startswith("/api/"):
        body: object = {"error": {"code": refusal.code, "message": refusal.message}}
    else:
        body = {
            "jsonrpc": "2.0",
            "id": refusal.request_id,
            "error": {"code": JSONRPC_INVALID_REQUEST, "message": refusal.message},
        }
    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"))  # compact, as every reply
    return text.encode("utf-8", "backslashreplace")


async def send_refusal(scope: Scope, send: Send, refusal: Refusal) -> None:
    body = refusal_body(scope.get("path", ""), refusal)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        (b"x-content-type-options", b"nosniff"),
        *((name.encode(), value.encode()) for name, value in refusal.headers),
    ]
    await send({"type": "http.response.start", "status": refusal.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


def _over(length: bytes, most: int) -> bool:
    """Whether a Content-Length says more than ``most`` bytes. The parser reads leading zeros
    without end (``000…02`` is 2), where ``int`` refuses more than 4,300 digits."""
    digits = length.strip().lstrip(b"0")
    return digits.isdigit() and (len(digits) > len(str(most)) or int(digits) > most)


def _too_large(policy: GuardPolicy) -> Refusal:
    return Refusal(
        413, "payload_too_large", f"The request body is over {policy.max_body_bytes} bytes."
    )


def _throttled(failures: AuthFailures, scope: Scope) -> Refusal | None:
    """Count a wrong or missing key from the request's address: 429 once it failed too often,
    else None (answer 401)."""
    wait, _ = failures.fail(_client(scope))
    return None if wait is None else _wait_refusal(wait)


def _still_waiting(failures: AuthFailures | None, scope: Scope) -> Refusal | None:
    """429 for any key from an address still waiting after too many failures, the right key
    too, unread: a throttle that still served the right key let guessing go on at full speed
    from the network. Loopback is spared (``key_wait``)."""
    wait = None if failures is None else key_wait(failures, _client(scope))
    return None if wait is None else _wait_refusal(wait)


def key_wait(failures: AuthFailures, client: str) -> int | None:
    """How long any key from ``client`` waits, or None. Not from loopback: every local tool
    connects from there, and one with a stale key would lock out the others with the right one
    (a hub's clients may share an address too, so the hub never waits a valid token)."""
    return None if is_loopback(client) else failures.waiting(client)


def _client(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "?"


def _wait_refusal(wait: int) -> Refusal:
    message = f"Too many failed authentications from this address. Retry in {wait} s."
    return Refusal(429, "rate_limited", message, (("retry-after", str(wait)),))


# The page a browser is shown for a refusal at one of the UI's addresses (None: the JSON body).
RefusalPage = Callable[[Scope, Refusal], Response | None]


class Guard:
    """ASGI middleware: checks every HTTP request, then hands the app its whole body at once.

    ``failures``, when given, counts wrong keys per client address as the hub counts wrong
    tokens (the web UI's sign-in counts into the same); ``pages`` answers a refusal at a UI
    address with the UI's error page rather than a JSON body."""

    def __init__(
        self,
        app: ASGIApp,
        policy: GuardPolicy,
        failures: AuthFailures | None = None,
        pages: RefusalPage | None = None,
    ) -> None:
        self.app = app
        self.policy = policy
        self.failures = failures
        self.pages = pages

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, refusal: Refusal) -> None:
        page = None if self.pages is None else self.pages(scope, refusal)
        if page is None:
            await send_refusal(scope, send, refusal)
        else:
            await page(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        keyed = speaks_json(scope.get("path", "")) and self.policy.api_key is not None
        refusal = (
            check_host(self.policy, _text(_header(scope, b"host")))
            or check_origin(self.policy, _text(_header(scope, b"origin")))
            or (_still_waiting(self.failures, scope) if keyed else None)
            or (check_bearer(self.policy, _header(scope, b"authorization")) if keyed else None)
        )
        if refusal is not None and refusal.status == 401 and self.failures is not None:
            refusal = _throttled(self.failures, scope) or refusal
        length = _header(scope, b"content-length")
        if refusal is None and length is not None and _over(length, self.policy.max_body_bytes):
            refusal = _too_large(self.policy)
        if refusal is not None:
            await self._refuse(scope, receive, send, refusal)
            return
        body = await self._read_body(receive)
        if body is None:
            await self._refuse(scope, receive, send, _too_large(self.policy))
            return
        await self.app(scope, replay_body(body, receive), send)

    async def _read_body(self, receive: Receive) -> bytes | None:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client went away; the app will see that
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.policy.max_body_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)


def replay_body(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives the whole body read already, then what ``receive`` gives."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay
