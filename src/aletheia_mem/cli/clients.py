"""Merging one server entry into a host's config file without clobbering the rest of it.

JSON and JSONC files are edited by position (:mod:`aletheia_mem.cli.jsonc`), TOML files through
tomlkit; both keep comments, order and formatting of everything they do not change.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tempfile
import tomllib
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable

from aletheia_mem.cli import jsonc

FileFormat = Literal["json", "toml"]
Action = Literal["add", "unchanged", "replace", "conflict"]


class ConfigFileError(Exception):
    """A config file that cannot be read or changed safely; the message says why."""


@dataclass(frozen=True)
class Change:
    """What writing one entry would do to one file."""

    path: Path
    action: Action
    old_text: str
    new_text: str
    existing: Any  # the entry found under the name, or None

    def diff(self) -> str:
        """A unified diff of the change (empty when nothing changes)."""
        if self.old_text == self.new_text:
            return ""
        lines = difflib.unified_diff(
            self.old_text.splitlines(keepends=True),
            self.new_text.splitlines(keepends=True),
            fromfile=f"{self.path} (now)",
            tofile=f"{self.path} (after)",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def read_text(path: Path) -> str:
    """The file's text ("" when there is none).

    Raises:
        ConfigFileError: it cannot be read, or is no regular file (a FIFO would block).
    """
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):
            raise ConfigFileError(f"Cannot read {path}: not a regular file; move it away.")
        with path.open(encoding="utf-8", newline="") as handle:  # CRLF stays CRLF
            return handle.read()
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigFileError(f"Cannot read {path}: {error}") from None


def _toml_get(document: Any, path: tuple[str, ...]) -> Any:
    node = document
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node.unwrap() if hasattr(node, "unwrap") else node


def _toml_table(value: dict[str, Any]) -> Any:
    table = tomlkit.table()
    nested = {k: v for k, v in value.items() if isinstance(v, dict)}
    for key, item in value.items():
        if key not in nested:
            table.add(key, item)
    for key, item in nested.items():
        table.add(key, _toml_table(item))
    return table


def _toml_inline(value: dict[str, Any]) -> Any:
    """``value`` as an inline table: what an inline table may hold."""
    table = tomlkit.inline_table()
    for key, item in value.items():
        table.append(key, _toml_inline(item) if isinstance(item, dict) else item)
    return table


def _tomlkit_set(text: str, path: tuple[str, ...], value: dict[str, Any]) -> str:
    """Set ``path`` through tomlkit; inside an inline table (``mcp_servers = {}``) the entry is
    inline too. The result must read as the old document plus the entry, else it is refused."""
    try:
        document = tomlkit.parse(text)
    except TOMLKitError as error:
        raise ConfigFileError(f"not valid TOML: {error}") from None
    node: Any = document
    for key in path[:-1]:
        if key not in node:
            inline = isinstance(node, InlineTable)
            node.add(key, tomlkit.inline_table() if inline else tomlkit.table(is_super_table=True))
        node = node[key]
        if not isinstance(node, dict):
            raise ConfigFileError(f"{key} is not a table")
    item = _toml_inline(value) if isinstance(node, InlineTable) else _toml_table(value)
    try:
        if path[-1] in node:
            node[path[-1]] = item
        else:
            node.add(path[-1], item)
        new = tomlkit.dumps(document)
    except (ValueError, TOMLKitError) as error:
        raise ConfigFileError(f"cannot add the entry to this TOML: {error}") from None
    if not _sets_only(text, new, path, value):
        raise ConfigFileError(f"cannot add the entry to this TOML layout; add {path} by hand")
    return new


def _sets_only(old: str, new: str, path: tuple[str, ...], value: dict[str, Any]) -> bool:
    """Whether ``new`` reads as ``old`` with only ``path`` set to ``value``."""
    try:
        wanted: dict[str, Any] = tomllib.loads(old)
        found = tomllib.loads(new)
    except tomllib.TOMLDecodeError:
        return False
    node = wanted
    for key in path[:-1]:
        node = node.setdefault(key, {})
    node[path[-1]] = value
    return found == wanted


_HEADER = re.compile(r"^\s*\[(?!\[)(?P<key>[^\]]+)\]\s*(?:#.*)?$")


def _header_path(line: str) -> tuple[str, ...] | None:
    """The key path of a ``[table]`` header line, or None for any other line."""
    match = _HEADER.match(line)
    if match is None:
        return None
    try:
        node: Any = tomllib.loads(f"[{match['key']}]\n")
    except tomllib.TOMLDecodeError:
        return None
    keys: list[str] = []
    while isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        keys.append(key)
        node = node[key]
    return tuple(keys)


def _table_span(text: str, path: tuple[str, ...]) -> tuple[int, int] | None:
    """Where the ``[path]`` table and its sub-tables sit, without the comments that follow."""
    lines = text.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    start = end = None
    for index, line in enumerate(lines):
        key = _header_path(line)
        if start is None:
            if key == path:
                start = index
            continue
        if key is not None and key[: len(path)] != path:
            end = index
            break
    if start is None:
        return None
    end = len(lines) if end is None else end
    while end > start + 1 and (
        not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
    ):
        end -= 1
    return offsets[start], offsets[end]


def _toml_set(text: str, path: tuple[str, ...], value: dict[str, Any]) -> str:
    """Replace or append the ``[path]`` table as text, so every other line stays as it was.

    Falls back to tomlkit where the entry is not written as its own table.
    """
    block = _tomlkit_set("", path, value)
    span = _table_span(text, path)
    if span is not None:
        candidate = text[: span[0]] + block + text[span[1] :]
    elif not text.strip():
        candidate = block
    else:
        candidate = text + ("\n" if text.endswith("\n") else "\n\n") + block
    try:
        if _toml_get(tomllib.loads(candidate), path) == value:
            return candidate
    except tomllib.TOMLDecodeError:
        pass
    return _tomlkit_set(text, path, value)


def _toml_body(text: str) -> tuple[str, str, bool]:
    """A TOML file's byte order mark, its text without it (with LF line ends where every line
    ended in CRLF), and whether they did: tomllib and tomlkit read neither a mark nor write
    CRLF lines, while Codex (toml_edit) accepts both."""
    mark = "\ufeff" if text.startswith("\ufeff") else ""
    body = text[len(mark) :]
    crlf = "\r\n" in body and body.count("\n") == body.count("\r\n")
    return mark, body.replace("\r\n", "\n") if crlf else body, crlf


def get_entry(text: str, fmt: FileFormat, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in a file's text, or None."""
    try:
        if fmt == "toml":
            body = _toml_body(text)[1]
            return _toml_get(tomlkit.parse(body), path) if body.strip() else None
        return jsonc.get_member(text, path)
    except (jsonc.JsoncError, TOMLKitError) as error:
        raise ConfigFileError(f"not valid {fmt.upper()}: {error}") from None


def set_entry(text: str, fmt: FileFormat, path: tuple[str, ...], value: Any) -> str:
    """The file's text with the value at ``path`` set, all else kept."""
    if fmt == "toml":
        mark, body, crlf = _toml_body(text)
        new = _toml_set(body, path, value)
        return mark + (new.replace("\n", "\r\n") if crlf else new)
    try:
        return jsonc.set_member(text, path, value)
    except jsonc.JsoncError as error:
        raise ConfigFileError(f"not valid JSON: {error}") from None


def plan_change(
    path: Path, fmt: FileFormat, entry_path: tuple[str, ...], entry: Any, *, force: bool
) -> Change:
    """What writing ``entry`` at ``entry_path`` in ``path`` would do.

    An equal entry already there changes nothing; a different one is a conflict unless
    ``force``.
    """
    old = read_text(path)
    try:
        existing = get_entry(old, fmt, entry_path)
    except ConfigFileError as error:
        raise ConfigFileError(f"{path} is {error}") from None
    if existing == entry:
        return Change(path, "unchanged", old, old, existing)
    if existing is not None and not force:
        return Change(path, "conflict", old, old, existing)
    try:
        new = set_entry(old, fmt, entry_path, entry)
    except ConfigFileError as error:
        raise ConfigFileError(f"{path}: {error}") from None
    return Change(path, "add" if existing is None else "replace", old, new, existing)


def backup_path(path: Path, now: datetime | None = None) -> Path:
    """``settings.json.aletheia-backup-20261029T194645Z`` (numbered if that exists)."""
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%dT%H%M%SZ")
    candidate = path.with_name(f"{path.name}.aletheia-backup-{stamp}")
    number = 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}.aletheia-backup-{stamp}-{number}")
    return candidate


def _private_copy(source: Path, backup: Path) -> None:
    """A byte-for-byte copy only its owner can read (a config may hold tokens)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(backup, flags, 0o600)
    with os.fdopen(handle, "wb") as out:
        os.fchmod(out.fileno(), 0o600)
        out.write(source.read_bytes())


def write_change(change: Change) -> Path | None:
    """Write the new text atomically, after a backup of the old file; returns the backup.

    Raises:
        ConfigFileError: the folder or file cannot be written (permissions, a full disk).
    """
    if change.action in ("unchanged", "conflict"):
        return None
    path = change.path
    try:
        return _replace_text(path, change.new_text)
    except OSError as error:
        raise ConfigFileError(f"Cannot write {path}: {error}") from None


def _replace_text(path: Path, text: str) -> Path | None:
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        backup = backup_path(path)
        _private_copy(path, backup)
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return backup
