"""An http(s) address and a bearer token a user gives, checked before anything is sent or
written: a bad one is one clear line (exit code 2), never a traceback, and never echoes a
password or a token."""

from __future__ import annotations

import re
from urllib.parse import SplitResult, urlsplit

from aletheia_mem.errors import InvalidInputError

# What a URL or token may hold: visible ASCII (a space, a control character or a non-ASCII
# one would be refused by the HTTP client, or split a header).
_VISIBLE = re.compile(r"[\x21-\x7e]+")


def checked_http_url(url: str, what: str) -> str:
    """``url`` (trimmed) when it is an http:// or https:// address with a host, a valid port
    and no user or password; ``what`` names it in the error (``The hub URL``).

    Raises:
        InvalidInputError: it is not; the message shows the URL only when it is safe to.
    """
    value = url.strip()
    if not _VISIBLE.fullmatch(value):
        raise InvalidInputError(
            f"{what} must be an http:// or https:// URL without spaces or control characters."
        )
    if not value.lower().startswith(("http://", "https://")):
        raise InvalidInputError(f"{what} must start with http:// or https://: {value}")
    try:
        parts = urlsplit(value)
        port = parts.port  # reads the port: a ValueError for one that is not a number
    except ValueError as error:
        raise InvalidInputError(f"{what} is not a valid URL ({error}): {_shown(value)}") from None
    if parts.username is not None or parts.password is not None:
        raise InvalidInputError(
            f"{what} must not hold a user or password (user:password@);"
            f" the token is the credential: {_without_user(parts)}"
        )
    if not parts.hostname:
        raise InvalidInputError(f"{what} has no host: {value}")
    del port
    return value


def checked_token(token: str, where: str) -> str:
    """``token`` trimmed, when it is one run of visible ASCII characters, as every token
    ``aletheia mcp-link create`` prints is; ``where`` says where it came from. The error never
    shows the token.

    Raises:
        InvalidInputError: it holds a space, a control or a non-ASCII character.
    """
    value = token.strip()
    if not _VISIBLE.fullmatch(value):
        raise InvalidInputError(
            f"The token {where} is not a token: it holds spaces, line breaks, control or"
            " non-ASCII characters (a token is one word, as aletheia mcp-link create prints it)."
        )
    return value


def _shown(value: str) -> str:
    """A URL as an error may show it: without what comes before an ``@`` in its address."""
    scheme, _, rest = value.partition("://")
    address, slash, path = rest.partition("/")
    if "@" in address:
        address = address.rsplit("@", 1)[1]
    return f"{scheme}://{address}{slash}{path}"


def _without_user(parts: SplitResult) -> str:
    host = parts.netloc.rsplit("@", 1)[1]
    return parts._replace(netloc=host).geturl()
