"""Hub tokens: prefixed random secrets, kept only as SHA-256 hashes, with a scope and projects."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import shlex
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable
from typing import Literal

from aletheia_mem.blank import is_blank
from aletheia_mem.clock import Clock
from aletheia_mem.domain.limits import UNPRINTED_NAME
from aletheia_mem.domain.redaction_fold import folded_text, has_invisible
from aletheia_mem.errors import ConflictError, InvalidInputError, NotFoundError
from aletheia_mem.projects import holds_secret, normalize_project, secret_name
from aletheia_mem.storage.contracts import HubTokens, TokenCheck
from aletheia_mem.storage.hub_rows import HubToken

Scope = Literal["mcp", "read", "sync", "admin"]
# How ``mcp-link revoke`` reads what it is given: a name, a token's shown first characters, or
# either (None).
RevokeBy = Literal["name", "prefix"] | None
SCOPES: tuple[Scope, ...] = ("mcp", "read", "sync", "admin")
# Scopes that may call the write tools and the sync API.
WRITE_SCOPES = frozenset({"sync", "admin"})
TOKEN_PREFIX = "alt_"  # noqa: S105  (a marker, not a secret)
SHOWN_PREFIX_LENGTH = 10
MAX_NAME_LENGTH = 100
ALL_PROJECTS = "*"
# A PostgreSQL hub remembers a live token (and an MCP session) this long per process: a
# revocation made through any process holds everywhere within it (the issue asks for one second).
TOKEN_CACHE_SECONDS = 0.5
# Past this many remembered tokens the cache starts again empty.
TOKEN_CACHE_SIZE = 1000


# Drawn alike in the usual fonts (Unicode's confusables.txt reads I, l, 1 and | as "l", O and 0
# as "o"), so read as one; with case folded first, i and L join them (each is one of those in
# another case): "aIice" (capital i) reads as "alice", "b0b" as "bob".
_DRAWN_ALIKE = str.maketrans({"i": "l", "\u0131": "l", "1": "l", "|": "l", "0": "o"})


def _without_marks(text: str) -> str:
    """``text`` NFKD-decomposed, its nonspacing and enclosing marks dropped: "i" + a combining
    dot above, or a precomposed "é", reads as the bare letter."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if unicodedata.category(char) not in ("Mn", "Me"))


def lookalike_key(name: str) -> str:
    """What ``name`` reads as: compatibility forms decomposed (full-width and mathematical
    letters) and marks dropped, invisible characters dropped, Cyrillic and Greek letters drawn as
    Latin ones made Latin (a name's folded text: ``LATIN_LOOKALIKES``), case folded, and the
    letters and digits drawn alike (I, l, 1; O, 0) made one. Two names with one key pass for
    each other."""
    folded = folded_text(_without_marks(name), name=True).casefold()
    return _without_marks(folded).translate(_DRAWN_ALIKE)


def _not_a_lookalike(name: str) -> TokenCheck:
    """A check (run in the insert's transaction: ``add_token``) that refuses ``name`` when it
    passes for another token's, live or revoked (a revoked token's name stays taken, as its
    syncs stay authored by it). The same name is the store's to refuse."""
    key = lookalike_key(name)

    def refuse(tokens: list[HubToken]) -> None:
        """Raises ConflictError: ``name`` reads as one of ``tokens``' names."""
        for token in tokens:
            if token.name != name and lookalike_key(token.name) == key:
                shown = name.encode("ascii", "backslashreplace").decode("ascii")
                revoked = "" if token.revoked_at is None else " (revoked)"
                raise ConflictError(
                    f'--name "{shown}" would pass for the token "{token.name}"{revoked};'
                    " choose another name."
                )

    return refuse


def new_secret() -> str:
    """``alt_`` and 32 URL-safe random characters (192 bits)."""
    return TOKEN_PREFIX + secrets.token_urlsafe(24)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def parse_projects(text: str, field: str = "--projects") -> tuple[str, ...] | None:
    """``shop, My Project`` -> ``("shop", "my project")``: split at commas only, each part a
    project key (``normalize_project``), as a folder named with a space gives one; ``*`` -> None
    (every project). ``field``: how an error names where the text was given (the CLI's flag,
    the Tokens page's field). A blank part (``is_blank``: spaces, or only zero-width
    characters) names no project, as an empty one does.

    Raises:
        InvalidInputError: no project named, or a name holding a control or format character
            or what looks like a secret.
    """
    parts = text.split(",")
    names = [normalize_project(part) for part in parts]
    for part, name in zip(parts, names, strict=True):
        if holds_secret(part, name):  # it would limit the token to "[redacted]", every such name
            raise InvalidInputError(secret_name(field, name))
    projects = tuple(dict.fromkeys(name for name in names if not is_blank(name)))
    if projects == (ALL_PROJECTS,):
        return None
    for name in projects:
        if UNPRINTED_NAME.search(name):  # a zero-width space is a format character
            raise InvalidInputError(f"{field} must not contain control or format characters.")
    if not projects:
        raise InvalidInputError(f'{field} needs at least one project name, or "*" for all.')
    if ALL_PROJECTS in projects:
        raise InvalidInputError('"*" (every project) cannot be mixed with project names.')
    return projects


def can_write(scope: str) -> bool:
    """``sync`` and ``admin`` tokens call every tool and sync; ``mcp`` and ``read`` only read."""
    return scope in WRITE_SCOPES


def checked_name(name: str, field: str = "--name") -> str:
    """``name`` as a token keeps it: its runs of white space made one space. ``field``: how an
    error names where it was given (the CLI's flag, the Tokens page's field).

    Raises:
        InvalidInputError: the name is too long, holds a / or a control, format or invisible
            character, begins like a token, or holds what looks like a secret.
    """
    name = " ".join(name.split())
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidInputError(f"{field} must be at most {MAX_NAME_LENGTH} characters.")
    # The name authors what the token syncs (``<name>/<tool>``) and every store checks it on
    # pull: a control character would have every pull refused, a / would read as a tool, an
    # invisible one would make a second "bob".
    if not name.isprintable() or "/" in name or has_invisible(name):
        raise InvalidInputError(
            f"{field} may hold no / and no control, format or invisible characters."
        )
    # revoke takes a token's first characters too: "alt_RxFp0I" as a name would revoke bob
    if lookalike_key(name).startswith(TOKEN_PREFIX):
        raise InvalidInputError(
            f'{field} may not begin with "{TOKEN_PREFIX}": tokens do, and mcp-link revoke takes'
            " a token's first characters as well as its name."
        )
    from aletheia_mem.domain.redaction import redact_secrets  # only when a token is made

    # The hub sends the name in its hello and its refusals, and every store keeps it as the
    # author of what the token syncs: a secret in it would be shown and kept everywhere (and a
    # store refuses a hello whose name redaction would change).
    shown = redact_secrets(name)
    if shown != name:
        raise InvalidInputError(
            f"{field} holds what looks like a secret ({shown}): a token's name is shown in the"
            " hub's answers and its audit, and kept by every store it syncs. Choose another."
        )
    return name


def create_token(
    store: HubTokens,
    clock: Clock,
    *,
    scope: str,
    projects: tuple[str, ...] | None,
    name: str | None,
) -> tuple[str, HubToken]:
    """Make a token; returns the secret (shown once, never stored) and the stored row.

    Raises:
        InvalidInputError: an unknown scope or a bad name.
        ConflictError: the name is taken, or passes for a token's name (``lookalike_key``).
    """
    if scope not in SCOPES:
        raise InvalidInputError(f"scope must be one of {', '.join(SCOPES)}.")
    secret = new_secret()
    if name is None or is_blank(name):  # a zero-width name is as blank as an empty one
        name = f"{scope}-{projects[0] if projects else 'all'}-{secret[-4:].lower()}"
    name = checked_name(name)
    row = HubToken(
        id=0,
        name=name,
        token_hash=hash_secret(secret),
        prefix=secret[:SHOWN_PREFIX_LENGTH],
        scope=scope,
        projects=projects,
        created_at=clock(),
        revoked_at=None,
    )
    stored = store.add_token(row, _not_a_lookalike(name))
    if stored is None:
        raise ConflictError(f'A token named "{name}" already exists.')
    return secret, stored


def revoke_command(name: str, *, by_name: bool = False, hub_db: str | None = None) -> str:
    """The ``aletheia mcp-link revoke`` line for the token ``name``, quoted for a shell, after
    ``--`` when the name begins with "-" (which the command would read as an option), with the
    ``--hub-db`` the user gave (else the command's own default store)."""
    words = ["aletheia", "mcp-link", "revoke", *(["--by", "name"] if by_name else [])]
    words += ["--hub-db", shlex.quote(hub_db)] if hub_db else []
    return " ".join([*words, *(["--"] if name.startswith("-") else []), shlex.quote(name)])


def check_revoke_name(given: str, field: str) -> None:
    """Refuse a blank ``given`` for revoke (``is_blank``: empty, spaces, or only zero-width
    characters), as create reads such a name as none given: no token's name is blank (create
    makes the default name instead), and "No live token named" would say nothing useful.
    ``field``: how the error names it (the CLI's NAME argument, the Tokens page's field).

    Raises:
        InvalidInputError: ``given`` is blank.
    """
    if is_blank(given):
        raise InvalidInputError(f"{field} is required.")


def live_matches(tokens: Iterable[HubToken], given: str, by: RevokeBy = None) -> list[HubToken]:
    """The live tokens ``given`` names: by their name, their shown first characters, or either."""
    return [
        token
        for token in tokens
        if token.revoked_at is None
        and ((by != "prefix" and token.name == given) or (by != "name" and token.prefix == given))
    ]


def one_to_revoke(matches: list[HubToken], given: str, hub_db: str | None = None) -> HubToken:
    """The one token of ``matches`` (``live_matches``), which a store's ``revoke_token`` of its
    name revokes (names are unique, and a name goes before first characters).

    Raises:
        NotFoundError: none.
        ConflictError: more than one: ``given`` is one's name and another's first characters
            (or the first characters of two), so the command says which it means (each line
            with ``hub_db``, the ``--hub-db`` given).
    """
    if not matches:
        from aletheia_mem.domain.echoes import echoed  # only when a message needs it

        raise NotFoundError(f'No live token named "{echoed(given)}".')
    if len(matches) == 1:
        return matches[0]
    how = {True: "its name", False: "its first characters"}
    listing = " and ".join(f'the token "{t.name}" ({how[t.name == given]})' for t in matches)
    commands = ", or ".join(
        revoke_command(token.name, by_name=True, hub_db=hub_db) for token in matches
    )
    raise ConflictError(
        f'"{given}" names more than one live token: {listing}. Revoke one by its name alone:'
        f" {commands}."
    )


def find_presented(store: HubTokens, presented: str) -> HubToken | None:
    """The token matching a presented secret, live or revoked (the store keeps a revoked
    token's hash), or None (unknown)."""
    if not presented.startswith(TOKEN_PREFIX) or len(presented) > 200:
        return None
    digest = hash_secret(presented)
    found = store.find_token(digest)
    if found is None or not hmac.compare_digest(found.token_hash, digest):
        return None
    return found


def verify_token(store: HubTokens, presented: str) -> HubToken | None:
    """The live token matching a presented secret, or None (unknown or revoked)."""
    found = find_presented(store, presented)
    return None if found is None or found.revoked_at is not None else found


class TokenCache:
    """Live tokens by hash, each remembered ``ttl`` seconds after it was read from the store, so
    that a busy client's requests do not each read its token (0: every request reads it).
    Unknown and revoked tokens are never remembered.
    """

    def __init__(
        self,
        store: HubTokens,
        ttl: float,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._store = store
        self._ttl = ttl
        self._monotonic = monotonic
        self._found: dict[str, tuple[HubToken, float]] = {}
        self._lock = threading.Lock()

    def remembered(self, presented: str) -> HubToken | None:
        """The token when read less than ``ttl`` ago, without asking the store; else None."""
        if self._ttl <= 0 or not presented.startswith(TOKEN_PREFIX) or len(presented) > 200:
            return None
        with self._lock:
            found = self._found.get(hash_secret(presented))
        if found is None or self._monotonic() - found[1] >= self._ttl:
            return None
        return found[0]

    def verify(self, presented: str) -> HubToken | None:
        """``verify_token`` against the store, remembering a live token (reads the store: call
        it off the event loop)."""
        token = self.find(presented)
        return None if token is None or token.revoked_at is not None else token

    def find(self, presented: str) -> HubToken | None:
        """``find_presented`` against the store: the token, live or revoked (whose refusals
        are audited by its name), remembering a live one (reads the store: call it off the
        event loop)."""
        read_at = self._monotonic()
        token = find_presented(self._store, presented)
        if self._ttl > 0:
            with self._lock:
                if token is None or token.revoked_at is not None:  # revoked since, maybe
                    self._found.pop(hash_secret(presented), None)
                else:
                    if len(self._found) >= TOKEN_CACHE_SIZE:
                        self._found.clear()
                    self._found[token.token_hash] = (token, read_at)
        return token
