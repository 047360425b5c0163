"""The parts of what a capture hook saves, for every host: an observation's type, title, text
and files, how a path and a replaced text are shown in them, and how it is saved."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aletheia_mem.domain.episodes import clean_request, read_head
from aletheia_mem.domain.limits import MAX_TITLE
from aletheia_mem.domain.memories import MemoryInput, save_memory
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.projects import is_excluded, project_for_directory
from aletheia_mem.storage.base import Memory

if TYPE_CHECKING:
    from aletheia_mem.storage.contracts import Store

EXCERPT_LENGTH = 300
MAX_PATH = 1000
# Of a replaced text, only this much is cleaned (then cut to EXCERPT_LENGTH): redacting
# megabytes would outlast the hook's deadline. The line the cut falls in is dropped
# (``episodes.read_head``): a secret cut in two would not be redacted.
READ_LIMIT = 20_000


@dataclass(frozen=True)
class Captured:
    """A memory a hook saves: its type, title, text and files (kind set by the caller)."""

    type: str
    title: str
    text: str
    files: tuple[str, ...]


def titled(verb: str, path: str) -> str:
    """An observation's title (``Edited src/cart.py``), cut to a title's limit."""
    return f"{verb} {path}"[:MAX_TITLE]


def line_count(count: int) -> str:
    """``1 line``, ``3 lines``."""
    return f"{count} line" if count == 1 else f"{count} lines"


def shown_path(raw: str, root: Path) -> str:
    """``raw`` relative to ``root`` when it is under it, as written or with links resolved (a
    session in a link to the project, a tool naming the real path, or the other way round)."""
    path = Path(raw)
    if not path.is_absolute() or path.is_relative_to(root):
        return path.relative_to(root).as_posix() if path.is_absolute() else path.as_posix()
    try:
        real, top = Path(os.path.realpath(path)), Path(os.path.realpath(root))
    except (OSError, ValueError):  # a name the file system cannot take (a lone surrogate)
        return path.as_posix()
    return real.relative_to(top).as_posix() if real.is_relative_to(top) else path.as_posix()


# Files that hold secrets and little else (.env, .env.production, key.pem, credentials.json,
# ~/.aws/credentials, ~/.ssh/id_ed25519, .npmrc, prod.tfvars): an edit's text is the secret
# itself, often a bare value no rule could tell from a word (a private key's body without its
# BEGIN line), so no excerpt of it is kept.
_SECRET_FILE_PREFIXES = (".env", "credentials")
_SECRET_FILE_SUFFIXES = (
    ".pem",
    ".key",
    ".tfvars",
    ".tfvars.json",
    ".p12",
    ".pfx",
    ".keystore",
    ".jks",
)
_SECRET_FILES = frozenset(
    {".netrc", "_netrc", ".pgpass", ".npmrc", ".pypirc", ".git-credentials", ".dockercfg"}
)
_DOCKER_CONFIG = ".docker/config.json"  # a name that holds secrets only in its folder
# SSH private keys: id_ed25519 (id_rsa.old), or named for their type (deploy_rsa)
_SSH_KEY_PREFIXES = ("id_rsa", "id_dsa", "id_ecdsa", "id_ed25519")
_SSH_KEY_SUFFIXES = ("_rsa", "_dsa", "_ecdsa", "_ed25519", "_ecdsa_sk", "_ed25519_sk")


def holds_secrets(path: str) -> bool:
    """Whether the file at ``path`` is a secrets file (``.env*``, ``*.pem``, ``credentials*``,
    an SSH private key, ``.npmrc``, ``*.tfvars``...: the list docs/hosts.md gives)."""
    shown = path.replace("\\", "/").lower()
    name = shown.rsplit("/", 1)[-1]
    return (
        name.startswith(_SECRET_FILE_PREFIXES)
        or name.endswith(_SECRET_FILE_SUFFIXES)
        or name in _SECRET_FILES
        or f"/{shown}".endswith(f"/{_DOCKER_CONFIG}")
        or _ssh_private_key(name)
    )


def _ssh_private_key(name: str) -> bool:
    """Whether ``name`` is an SSH private key's (not its ``.pub`` public key's)."""
    if name.endswith(".pub"):
        return False
    return name.startswith(_SSH_KEY_PREFIXES) or name.endswith(_SSH_KEY_SUFFIXES)


def replacement(old: Any, new: Any, path: str) -> str:
    """The replaced text and its replacement, cut short; nothing for a secrets file."""
    if not isinstance(old, str) or not isinstance(new, str) or holds_secrets(path):
        return ""
    return f"\nReplaced:\n{excerpt(old)}\nWith:\n{excerpt(new)}"


def excerpt(text: str) -> str:
    cleaned = clean(text)
    return cleaned if len(cleaned) <= EXCERPT_LENGTH else cleaned[:EXCERPT_LENGTH] + " ..."


def clean(text: str) -> str:
    """Private parts removed, secrets redacted, no NUL or lone surrogate."""
    return clean_request(read_head(text, READ_LIMIT))


def safe_path(raw: str, root: Path) -> str:
    """``raw`` as an observation shows it (``shown_path``), secrets redacted and a lone
    surrogate (a Windows file name may hold one) replaced, as no store could keep it. Redacted
    before a title cuts it: a cut secret could not be found again."""
    return redact_secrets(shown_path(raw, root).encode("utf-8", "replace").decode("utf-8"))


def excluded_file(path: Path, excluded: tuple[str, ...]) -> bool:
    """Whether the file ``path`` lies in a project of ``excluded`` (``is_excluded``: keys or
    folders, also reached through links or ``..``)."""
    if not excluded:
        return False
    folder = path.parent
    return is_excluded(folder, project_for_directory(folder), excluded)


def save_captured(
    store: Store, captured: Captured, kind: str, project: str, tool: str, now: int
) -> Memory:
    """Save a captured memory of ``kind`` at ``now`` (deduplicated as any save); the memory."""
    item = MemoryInput(
        text=captured.text,
        project=project,
        tool=tool,
        title=captured.title,
        type=captured.type,
        kind=kind,
        files=captured.files,
    )
    return save_memory(store, lambda: now, item)[0]
