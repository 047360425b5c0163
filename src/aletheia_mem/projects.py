"""Project keys: which project a working directory belongs to."""

from __future__ import annotations

import re
from pathlib import Path

from aletheia_mem.canonical import canonical
from aletheia_mem.config import escape_undecodable
from aletheia_mem.domain.limits import MAX_NAME, UNPRINTED_NAME
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.escapes import escaped

DEFAULT_PROJECT = "default"
ALL_PROJECTS = "*"  # every project, to a read (search, timeline); no item belongs to it
# What takes ALL_PROJECTS, as a write or a single-project read given it is told: the tools
ALL_PROJECTS_READERS = "search and timeline"
MAX_PROJECT_LENGTH = 200


def normalize_project(name: str) -> str:
    """A project key is lower-case, trimmed and in NFC (``canonical``: a folder named with a
    decomposed ``é``, as macOS gives it, is the project a typed ``café`` names), with any
    secret in it redacted.

    Redacting before and after lower-casing catches case-sensitive token shapes (``AKIA...``)
    and keeps the key a fixed point: normalizing a key again gives the same key, so writes,
    reads and token project lists all agree.
    """
    return canonical(redact_secrets(redact_secrets(canonical(name).strip()).lower()).lower())


def project_key(value: str, field: str = "project", readers: str = ALL_PROJECTS_READERS) -> str:
    """The project a write names with ``value``: its key (``normalize_project``), 1 to
    ``MAX_PROJECT_LENGTH`` characters, and never ``*``, which means every project to a read.
    ``field`` is the argument's name in the messages, ``readers`` what takes ``*``.

    Raises:
        InvalidInputError: ``*``, or a key that is empty or too long.
    """
    if value.strip() == ALL_PROJECTS:
        raise InvalidInputError(f'{field} "*" is only for {readers}.')
    project = normalize_project(value)
    if not project:
        raise InvalidInputError(f"{field} must not be empty.")
    if len(project) > MAX_PROJECT_LENGTH:
        raise InvalidInputError(f"{field} must be at most {MAX_PROJECT_LENGTH} characters.")
    return project


def holds_secret(name: str, key: str | None = None) -> bool:
    """Whether ``normalize_project`` redacts something in ``name`` (``ghp_...`` is the project
    ``[redacted]``, which every other secret-named project is too). A name that is already
    ``[redacted]`` holds none: that project can still be named and read. ``key``: the name's
    ``normalize_project``, when the caller has it (its redaction is not run again)."""
    key = normalize_project(name) if key is None else key
    return key != canonical(canonical(name).strip().lower())


def chosen_project_key(
    value: str, field: str = "project", readers: str = ALL_PROJECTS_READERS
) -> str:
    """``project_key`` of a name a person or a model chooses (a tool's, the CLI's, the JSON
    API's or a web form's project), which is also refused when it holds a secret: stored
    redacted, unrelated projects would silently become one named ``[redacted]``. What a sync
    peer or an import file names is ``project_key``'s alone, as every release took it.

    Raises:
        InvalidInputError: as ``project_key``, or the name holds what looks like a secret.
    """
    project = project_key(value, field, readers)
    if holds_secret(value, project):
        raise InvalidInputError(secret_name(field, project))
    return project


def secret_name(field: str, shown: str) -> str:
    """The refusal of a project name that holds what looks like a secret, shown redacted."""
    return (
        f"{field} looks like a secret, which is never kept as a project's name (it would be"
        f' stored as "{escaped(shown)}", with every other such name): choose another name.'
    )


def project_root(cwd: Path) -> Path:
    """The git work tree's top folder that holds ``cwd``, else ``cwd`` itself."""
    start = cwd.expanduser().absolute()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def project_for_directory(directory: Path, home: Path | None = None) -> str:
    """The name of the git work tree's top folder that holds ``directory``, else its own name.

    ``default`` where neither gives a name: the filesystem root or the home folder. A work tree
    whose top is one of those (a dotfiles repository in the home folder) gives no name, so a
    folder inside it is named by itself.
    """
    home = Path.home() if home is None else home
    start = directory.expanduser().absolute()
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return _key_of(start if _unnamed(folder, home) else folder, home)
    return _key_of(start, home)


def _unnamed(folder: Path, home: Path) -> bool:
    return folder == Path(folder.anchor) or folder == home.absolute()


def _key_of(folder: Path, home: Path) -> str:
    if _unnamed(folder, home):
        return DEFAULT_PROJECT
    name = escape_undecodable(folder.name)  # a name of bytes that are not UTF-8 (``\xff``)
    # Control and format characters, which no project key may hold, as escapes (``\u202e``):
    # a folder named so still has a key of its own, which every store takes.
    name = UNPRINTED_NAME.sub(_escape, name)
    return normalize_project(name)[:MAX_NAME] or DEFAULT_PROJECT


def _escape(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def is_excluded(directory: Path, project: str, entries: tuple[str, ...]) -> bool:
    """Whether a project key or a folder in ``entries`` covers this directory, reached as
    written or through symbolic links: an alias of an excluded folder is excluded too, and so
    is a link of another name to an excluded project (``~/work/current`` to ``~/code/billing``,
    whose key is ``billing``)."""
    folders = _both_forms(directory)
    # Folders compare in NFC (``canonical``): an entry and the folder it names are one whichever
    # spells an accent composed and which decomposed (as macOS gives folder names).
    spelt = {_nfc(folder) for folder in folders}
    keys: set[str] | None = None  # the keys of the folders, found at the first key entry
    for entry in entries:
        if "/" in entry or "\\" in entry or entry.startswith("~"):
            for excluded in map(_nfc, _both_forms(Path(entry))):
                if any(folder == excluded or excluded in folder.parents for folder in spelt):
                    return True
            continue
        if keys is None:
            written = directory.expanduser().absolute()
            keys = {project, *(project_for_directory(f) for f in folders if f != written)}
        if normalize_project(entry) in keys:
            return True
    return False


def _nfc(path: Path) -> Path:
    return Path(canonical(str(path)))


def _both_forms(path: Path) -> set[Path]:
    """``path`` made absolute as written, and with its symbolic links resolved."""
    written = path.expanduser().absolute()
    try:
        return {written, written.resolve()}
    # A link loop, or a name the file system cannot take (a lone surrogate): as written only.
    except (OSError, RuntimeError, ValueError):
        return {written}
