"""``aletheia doctor``'s check of a remote (``--http``) entry: its URL called as a host calls it
(Streamable HTTP: ``initialize``, ``notifications/initialized``, ``tools/list``, then the
session closed), with the headers the entry sends, each ``${VAR}`` in them (each host's own
syntax) taken from this environment, and within a few seconds in all: past the deadline the
connections are cut, however the server trickles its answer (a keep-alive ``: ping`` each
second keeps no check waiting). An event stream is read up to the reply's event, even when the
server keeps it open after.

No token is ever shown: a message names the variable or header it came from, and a server's own
error message is quoted with what the entry sent and any secret masked, its control characters
escaped, and cut short. No proxy is used
and no redirect followed (hosts do neither with an MCP URL, and a redirect would carry the
token elsewhere).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import re
import socket
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import Message
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.cli.doctor_probe import identify
from aletheia_mem.cli.ownership import MASK, shown_url
from aletheia_mem.cli.terminal import one_line_safe

REMOTE_CHECK_SECONDS = 10.0
MAX_ANSWER_BYTES = 4 * 1024 * 1024
MAX_QUOTED_CHARS = 200  # of a server's own error message
MIN_MASKED_CHARS = 4  # a header value shorter than this is masked by redaction alone
PROTOCOL_VERSION = "2025-11-25"
# ``${VAR}``, ``${VAR:-default}`` (Claude Code, Gemini CLI, Command Code), ``${env:VAR}``
# (Cursor, Windsurf, VS Code), ``{env:VAR}`` (OpenCode); VS Code's ``${input:...}`` asks the user.
_REFERENCE = re.compile(
    r"\$\{(?:env:)?(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?::-(?P<default>[^}]*))?\}"
    r"|\{env:(?P<opencode>[A-Za-z_][A-Za-z0-9_]*)\}"
    r"|\$\{input:(?P<input>[^}]*)\}"
)
AUTHORIZATION = "authorization"


@dataclass
class Headers:
    """What the entry sends: the headers with their references filled in, where each came
    from (``$T``, "its Authorization header"), and what could not be filled in."""

    values: dict[str, str] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # header (lower case) -> its source
    unset: list[str] = field(default_factory=list)  # variables not set here, inputs asked for


def _filled(value: str, env: Mapping[str, str], unset: list[str]) -> tuple[str, list[str]]:
    """``value`` with its references filled from ``env``; the variables it names."""
    names: list[str] = []

    def fill(match: re.Match[str]) -> str:
        if match["input"] is not None:
            unset.append(f"the input {match['input']!r} VS Code asks for")
            return ""
        name = match["name"] or match["opencode"]
        names.append(name)
        if name in env:
            return env[name]
        if match["default"] is not None:
            return match["default"]
        unset.append(name)
        return ""

    return _REFERENCE.sub(fill, value), names


def entry_headers(entry: dict[str, Any], env: Mapping[str, str]) -> Headers:
    """The headers a host sends for ``entry``: ``headers`` (Codex: ``http_headers``, and
    ``env_http_headers`` and ``bearer_token_env_var``, which name variables)."""
    found = Headers()
    plain = {**_strings(entry.get("headers")), **_strings(entry.get("http_headers"))}
    variables = _strings(entry.get("env_http_headers"))
    named = {header: f"${{{name}}}" for header, name in variables.items()}
    token = entry.get("bearer_token_env_var")
    if isinstance(token, str) and token:
        named["Authorization"] = f"Bearer ${{{token}}}"
    for header, raw in {**plain, **named}.items():
        unset_before = len(found.unset)
        value, names = _filled(raw, env, found.unset)
        missing = len(found.unset) > unset_before
        source = ", ".join(f"${name}" for name in names) or f"its {header} header"
        found.sources[header.lower()] = source
        if not missing:
            found.values[header] = value
    return found


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(key): str(item) for key, item in value.items() if isinstance(item, str | int)}


class _Refused(Exception):
    """The check ends here: ``status`` and what to say."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx stays the answer: no token goes to another address


class _Watch:
    """The sockets of one check, all shut down at its deadline: a blocked read then ends (a
    socket timeout alone restarts with each byte a server trickles)."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.cut = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, deadline - time.monotonic()), self._cut)
        self._timer.daemon = True
        self._timer.start()

    def passed(self) -> bool:
        return self.cut or time.monotonic() >= self.deadline

    def add(self, sock: socket.socket) -> socket.socket:
        with self._lock:
            self._sockets.append(sock)
            if self.cut:
                _shut(sock)
        return sock

    def _cut(self) -> None:
        with self._lock:
            self.cut = True
            for sock in self._sockets:
                _shut(sock)

    def stop(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _watched(connection: type[http.client.HTTPConnection], watch: _Watch) -> Any:
    """``connection``'s class as urllib makes it, each socket it opens handed to ``watch``."""

    def make(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        made = connection(*args, **kwargs)
        create = made._create_connection  # type: ignore[attr-defined]
        made._create_connection = (  # type: ignore[attr-defined]
            lambda *a, **k: watch.add(create(*a, **k))
        )
        return made

    return make


class _HTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__()
        self.watch = watch

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.watch), req)


class _HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, watch: _Watch) -> None:
        super().__init__(context=ssl.create_default_context())
        self.watch = watch

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = _watched(http.client.HTTPSConnection, self.watch)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


@dataclass
class _Client:
    url: str
    headers: Headers
    deadline: float
    session: str | None = None
    version: str | None = None

    def __post_init__(self) -> None:
        self.watch = _Watch(self.deadline)
        handlers: list[Any] = [urllib.request.ProxyHandler({}), _NoRedirect()]
        handlers += [_HTTPHandler(self.watch), _HTTPSHandler(self.watch)]
        self.opener = urllib.request.build_opener(*handlers)

    def _request(self, method: str, body: dict[str, Any] | None) -> tuple[int, Message, bytes]:
        headers = {
            **self.headers.values,
            "Accept": "application/json, text/event-stream",
            "User-Agent": f"aletheia-doctor/{__version__}",
        }
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self.session is not None:
            headers["Mcp-Session-Id"] = self.session
        if self.version is not None:
            headers["MCP-Protocol-Version"] = self.version
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(  # noqa: S310 - an http(s) URL from the user's own file
            self.url, data=data, method=method, headers=headers
        )
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self._slow()
        awaited = None if body is None else body.get("id")
        try:
            answer = self._exchange(request, left, awaited)
        except TimeoutError:
            raise self._slow() from None
        except Exception:
            if self.watch.passed():  # cut at the deadline, whatever broke of it
                raise self._slow() from None
            raise
        if self.watch.passed():  # an answer cut short at the deadline is no answer
            raise self._slow()
        return answer

    def _exchange(
        self, request: urllib.request.Request, left: float, awaited: Any
    ) -> tuple[int, Message, bytes]:
        """The answer's status, headers and body; of an event stream answering request
        ``awaited``, the body up to the reply's event (``_read_to_reply``)."""
        try:
            try:
                with self.opener.open(request, timeout=left) as response:
                    return response.status, response.headers, _read_to_reply(response, awaited)
            except urllib.error.HTTPError as error:
                with error:
                    return error.code, error.headers, error.read(MAX_ANSWER_BYTES)
        except TimeoutError:
            raise
        except ValueError:  # its message would quote the header: never show a token
            raise _Refused(
                "broken", "the URL or a header holds characters HTTP does not carry"
            ) from None
        except http.client.HTTPException:
            raise _Refused("broken", "not an HTTP server: its answer is not HTTP") from None
        except (urllib.error.URLError, OSError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, TimeoutError):
                raise self._slow() from None
            raise _Refused("broken", f"cannot be reached: {_reason(reason)}") from None

    def _slow(self) -> _Refused:
        return _Refused("broken", f"no answer within {REMOTE_CHECK_SECONDS:g} s")

    def call(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The result of one request; raises _Refused for anything but one."""
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        status, headers, body = self._request("POST", message)
        if status != 200:
            raise self._status_problem(status, method)
        if request_id == 1:
            self.session = headers.get("Mcp-Session-Id")
        reply = _reply(body, headers.get_content_type(), request_id)
        if reply is None:
            raise _Refused(
                "broken", f"not an MCP server: it answers {method} with no JSON-RPC reply"
            )
        if "error" in reply:
            error = reply["error"]
            said = error.get("message") if isinstance(error, dict) else error
            raise _Refused("broken", f"the server refused {method}: {self._quoted(said)}")
        result = reply.get("result")
        return result if isinstance(result, dict) else {}

    def _quoted(self, said: Any) -> str:
        """A server's own message as doctor shows it: what the entry sent (its token) and any
        other secret masked, every control character escaped (it cannot fake a row or drive
        the terminal), and at most ``MAX_QUOTED_CHARS`` characters."""
        from aletheia_mem.domain.redaction import redact_secrets  # only when a message needs it

        text = str(said)
        sent = set(self.headers.values.values())
        sent |= {value.split(None, 1)[-1] for value in sent if value.strip()}  # "Bearer <token>"
        for value in sorted(sent, key=len, reverse=True):
            if len(value) >= MIN_MASKED_CHARS:
                text = text.replace(value, MASK)
        text = one_line_safe(redact_secrets(text))
        if len(text) > MAX_QUOTED_CHARS:
            text = text[: MAX_QUOTED_CHARS - 1] + "…"
        return text

    def notify(self, method: str) -> None:
        status, _, _ = self._request("POST", {"jsonrpc": "2.0", "method": method})
        if status not in (200, 202, 204):
            raise self._status_problem(status, method)

    def close(self) -> None:
        """End the session (best effort: a server may not let sessions be ended) and the
        watch on the deadline."""
        try:
            if self.session is None or self.deadline <= time.monotonic():
                return
            with contextlib.suppress(_Refused):
                self._request("DELETE", None)
        finally:
            self.watch.stop()

    def _status_problem(self, status: int, method: str) -> _Refused:
        if status == 401:
            return _Refused("broken", self._unauthorized())
        if status == 403:
            source = self.headers.sources.get(AUTHORIZATION)
            sent = f" from {source}" if source else ""
            return _Refused("broken", f"the server refused the token{sent} (403)")
        if status == 429:
            return _Refused("warning", "the server is rate limiting (429); try again later")
        return _Refused("broken", f"not an MCP server: it answers {method} with HTTP {status}")

    def _unauthorized(self) -> str:
        """Why a 401: no token sent (a variable not set here, or none in the entry), or the
        token sent was refused."""
        asked = "the server wants a token (401)"
        if self.headers.unset:
            names = ", ".join(self.headers.unset)
            return (
                f"{asked}: the entry takes it from {names}, not set here (the tool needs it set"
                " in its own environment too)"
            )
        source = self.headers.sources.get(AUTHORIZATION)
        if source is None:
            return f"{asked} and the entry sends none: add it with --token-env NAME"
        return f"the server refused the token from {source} (401): it is wrong or revoked"


def _reason(reason: Any) -> str:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(reason, ssl.SSLError):
        return f"TLS: {getattr(reason, 'reason', None) or reason}"
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return shown_url(str(reason))[:160]


def _read_to_reply(response: http.client.HTTPResponse, request_id: Any) -> bytes:
    """The answer's body, at most ``MAX_ANSWER_BYTES``. An event stream answering a request
    (``request_id`` not None) is read event by event, up to the end of the one that holds the
    JSON-RPC reply to it: a server may keep the stream open after the reply (for more events),
    and reading to its end would wait for the deadline and call a good server slow."""
    if request_id is None or response.headers.get_content_type() != "text/event-stream":
        return response.read(MAX_ANSWER_BYTES)
    body, event = bytearray(), bytearray()
    while len(body) < MAX_ANSWER_BYTES:
        line = response.readline(MAX_ANSWER_BYTES - len(body))
        if not line:  # the stream ended
            break
        body += line
        if line not in (b"\n", b"\r\n"):
            event += line
            continue
        # a blank line ends an event: the reply ends the reading
        if event and _reply(bytes(event), "text/event-stream", request_id) is not None:
            break
        event.clear()
    return bytes(body)


def _reply(body: bytes, content_type: str, request_id: int) -> dict[str, Any] | None:
    """The JSON-RPC reply to ``request_id`` in a JSON body or an event stream, else None."""
    text = body.decode("utf-8", "replace")
    if content_type == "text/event-stream":
        events = re.split(r"\r?\n\r?\n", text)
        candidates = [
            "\n".join(
                line[5:].lstrip(" ") for line in event.splitlines() if line.startswith("data:")
            )
            for event in events
        ]
    else:
        candidates = [text]
    for candidate in candidates:
        try:
            message = json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        for item in message if isinstance(message, list) else [message]:
            if isinstance(item, dict) and item.get("id") == request_id:
                return item
    return None


def check_remote(url: str, entry: dict[str, Any], fix: str) -> tuple[str, str]:
    """Call the remote entry's server as a host would; returns the status (ok, warning, broken)
    and what was found, the URL first (shown without any secret it holds)."""
    shown = shown_url(url)
    headers = entry_headers(entry, os.environ)
    client = _Client(url, headers, time.monotonic() + REMOTE_CHECK_SECONDS)
    params = {
        "protocolVersion": PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "aletheia-doctor", "version": __version__},
    }
    try:
        started = client.call(1, "initialize", params)
        version = started.get("protocolVersion")
        client.version = version if isinstance(version, str) else PROTOCOL_VERSION
        client.notify("notifications/initialized")
        listed = client.call(2, "tools/list", {})
    except _Refused as refused:
        client.close()
        return refused.status, f"remote {shown}: {refused.detail}"
    client.close()
    status, answers = identify(started, listed, fix)
    return status, f"remote {shown}: {answers}"
