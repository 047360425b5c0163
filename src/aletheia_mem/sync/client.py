"""The hub's sync API as seen from a store: JSON over HTTP(S) with a bearer token."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aletheia_mem.errors import (
    AletheiaError,
    ForbiddenError,
    InvalidInputError,
    RateLimitedError,
    StoreUnavailableError,
    UnauthorizedError,
)
from aletheia_mem.http_urls import checked_http_url, checked_token

TIMEOUT_SECONDS = 120.0
# A reply's body: a pull page is about 4 MiB, and past that at most one record as large as a
# push (16 MiB); a hub sending more, or taking longer, is not one.
MAX_REPLY_BYTES = 64 * 1024 * 1024
REPLY_SECONDS = 600.0
_CHUNK = 64 * 1024
MAX_RATE_LIMIT_WAITS = 20
MAX_WAIT_SECONDS = 60
# How a hub's 429 for an address's failed authentications begins (hub.app): no wait helps.
FAILED_AUTHENTICATIONS = "Too many failed authentications"
Waiting = Callable[[int], None]  # told the seconds before each wait on the rate limit


def _no_word(seconds: int) -> None:
    """A library caller is told nothing of a wait unless it asks."""


def hub_base_url(url: str) -> str:
    """``https://hub:8787``, from that or from the hub's ``/mcp`` URL."""
    base = checked_http_url(url, "The hub URL").rstrip("/")
    if base.endswith("/mcp"):
        base = base[: -len("/mcp")]
    return base


@dataclass
class HubClient:
    """Calls ``/sync/...`` on one hub; waits as told when the rate limit answers 429, and
    says so first through ``on_wait`` (silent by default)."""

    url: str
    token: str
    ca_file: str | None = None
    sleep: Callable[[float], None] = time.sleep
    requests: int = field(default=0)
    on_wait: Waiting = _no_word

    def __post_init__(self) -> None:
        self.url = hub_base_url(self.url)
        self.token = checked_token(self.token, "given")
        self._context: ssl.SSLContext | None = None
        if self.url.startswith("https://"):
            try:
                self._context = ssl.create_default_context(cafile=self.ca_file)
                if self.ca_file is not None:  # remembered: a hub that moves to a public
                    self._context.load_default_certs()  # certificate stays reachable
            except OSError as error:  # gone since it was remembered, or no PEM certificate
                raise InvalidInputError(
                    f"Cannot use the CA file {self.ca_file}: {getattr(error, 'reason', error)}"
                ) from None

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST ``body`` as JSON and return the JSON answer.

        Raises:
            ForbiddenError: the token is unknown, revoked, or may not sync (401, 403), or this
                address failed to authenticate too often (429, not waited on).
            StoreUnavailableError: the hub's store is busy or cannot be reached (503).
            RateLimitedError: still limited after waiting many times.
            AletheiaError: the hub cannot be reached or answered with an error.
        """
        data = json.dumps(body, ensure_ascii=False).encode("utf-8", "backslashreplace")
        for _ in range(MAX_RATE_LIMIT_WAITS):
            request = urllib.request.Request(  # noqa: S310  (the URL is checked to be http(s))
                self.url + path,
                data=data,
                method="POST",
                headers={
                    "Authorization": f"Bearer {self.token}",
                    "Content-Type": "application/json",
                    "Accept": "application/json",
                },
            )
            self.requests += 1
            try:
                with urllib.request.urlopen(  # noqa: S310
                    request, timeout=TIMEOUT_SECONDS, context=self._context
                ) as response:
                    answer = _json_of(self._read(response))
            except urllib.error.HTTPError as error:
                with error:  # the refusal holds the connection: closed whatever comes next
                    if error.code != 429:
                        raise _error_of(error, self._read(error), self.url) from None
                    refused = _failed_authentications(error, self._read(error))
                    if refused is not None:  # waiting would only bring the token's 401
                        raise refused from None
                    seconds = _retry_after(error.headers.get("Retry-After", "1"))
                self.on_wait(seconds)
                self.sleep(seconds)
                continue
            except (urllib.error.URLError, OSError) as error:
                reason = getattr(error, "reason", error)
                raise AletheiaError(f"Cannot reach the hub at {self.url}: {reason}") from None
            except ValueError:  # a URL or header the HTTP client refuses: never echo the token
                raise InvalidInputError(
                    f"Cannot send a request to {self.url}: the URL or the token holds"
                    " characters HTTP does not carry."
                ) from None
            if answer is None:
                raise AletheiaError(f"The hub at {self.url} sent something that is not sync JSON.")
            return answer
        raise RateLimitedError("The hub kept answering 429 (rate limit); try again later.")

    def _read(self, response: Any) -> bytes:
        """A reply's body, given up once it passes ``MAX_REPLY_BYTES`` or ``REPLY_SECONDS``:
        read a piece at a time, so that neither a huge reply nor a trickle holds the sync."""
        deadline = time.monotonic() + REPLY_SECONDS
        read_some = getattr(response, "read1", response.read)
        chunks: list[bytes] = []
        size = 0
        while chunk := read_some(_CHUNK):
            size += len(chunk)
            if size > MAX_REPLY_BYTES:
                raise AletheiaError(f"The hub at {self.url} sent a reply too large for sync.")
            if time.monotonic() > deadline:
                raise AletheiaError(f"The hub at {self.url} took too long to send its reply.")
            chunks.append(chunk)
        return b"".join(chunks)


def _retry_after(value: str) -> int:
    """The seconds a 429 says to wait, at most ``MAX_WAIT_SECONDS``; 1 when it says none that
    reads as a whole number (a hub's header is latin-1: "\u00b2" is a digit no ``int`` reads)."""
    digits = value.strip()
    if not (digits.isascii() and digits.isdigit()):
        return 1
    # int() refuses more than 4,300 digits; past 100, it is more than the most ever waited
    return MAX_WAIT_SECONDS if len(digits) > 100 else min(MAX_WAIT_SECONDS, int(digits))


def _json_of(body: bytes) -> dict[str, Any] | None:
    """A reply's JSON object; None when it is none (an HTML page, bytes nested past the
    parser: whatever a server that is no hub sends)."""
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        return None
    return answer if isinstance(answer, dict) else None


def _failed_authentications(error: urllib.error.HTTPError, raw: bytes) -> ForbiddenError | None:
    """The 429 a hub sends an address that failed to authenticate too often (its message says
    so, where the token's rate limit says "Too many requests"), as the refusal of the token it
    is; None for any other 429."""
    message = _message_of(error, raw)
    if not message.startswith(FAILED_AUTHENTICATIONS):
        return None
    return ForbiddenError(f"The hub refused the request ({error.code}): {message}")


def _message_of(error: urllib.error.HTTPError, raw: bytes) -> str:
    """The message of a hub's error reply, else the HTTP reason."""
    body = _json_of(raw)
    try:
        message = body["error"]["message"] if body is not None else error.reason
    except (KeyError, TypeError):
        message = error.reason
    return message if isinstance(message, str) else str(error.reason)


def _error_of(error: urllib.error.HTTPError, raw: bytes, url: str) -> AletheiaError:
    message = _message_of(error, raw)
    if error.code == 503:  # a passing state (its store busy or unreachable): not a refusal
        return StoreUnavailableError(
            f"The hub at {url} cannot sync now (503): {message}"
            " Pages synced before stay synced; the next sync goes on from there."
        )
    text = f"The hub refused the request ({error.code}): {message}"
    if error.code == 401:
        return UnauthorizedError(text)
    if error.code == 403:
        return ForbiddenError(text)
    return AletheiaError(text)
