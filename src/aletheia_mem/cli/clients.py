"""Merging one server entry into a host's config file without clobbering the rest of it.

JSON and JSONC files are edited by position (:mod:`aletheia_mem.cli.jsonc`), TOML files through
tomlkit; both keep comments, order and formatting of everything they do not change.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable

from aletheia_mem.cli import jsonc

FileFormat = Literal["json", "toml"]
# "remove": an entry or hooks taken out of a file; "delete": a file deleted (uninstall).
Action = Literal["add", "unchanged", "replace", "conflict", "remove", "delete"]


class ConfigFileError(Exception):
    """A config file that cannot be read or changed safely; the message says why."""


class DuplicateKeyError(ConfigFileError):
    """An object on the way to the value asked for holds a key twice: which one the host reads
    is unclear (the message says which key, and where)."""


def in_file(path: Path, error: ConfigFileError) -> ConfigFileError:
    """``error`` naming the file: ``<path> is not valid JSON: ...``, ``<path>: mcpServers holds
    the key "aletheia" twice ...``."""
    joint = ":" if isinstance(error, DuplicateKeyError) else " is"
    return ConfigFileError(f"{path}{joint} {error}")


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
        old = self.old_text.splitlines(keepends=True)
        new = self.new_text.splitlines(keepends=True)
        # difflib is quadratic in what it compares: leave out the long unchanged head and tail
        # of a large file (a long-used ~/.claude.json), keeping the context lines around.
        head = 0
        while head < min(len(old), len(new)) and old[head] == new[head]:
            head += 1
        tail = 0
        while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        skip, keep = max(head - DIFF_CONTEXT, 0), max(tail - DIFF_CONTEXT, 0)
        lines = difflib.unified_diff(
            old[skip : len(old) - keep],
            new[skip : len(new) - keep],
            fromfile=f"{self.path} (now)",
            tofile=f"{self.path} (after)",
            n=DIFF_CONTEXT,
        )
        return "".join(_shifted(line, skip) for line in lines)


DIFF_CONTEXT = 3
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _shifted(line: str, offset: int) -> str:
    """A diff line ending in a newline, a hunk header's line numbers moved by ``offset``."""
    line = line if line.endswith("\n") else line + "\n"
    match = _HUNK.match(line)
    if match is None or not offset:
        return line
    old_start, old_count, new_start, new_count = match.groups()
    old_at, new_at = int(old_start) + offset, int(new_start) + offset
    header = f"@@ -{old_at}{old_count or ''} +{new_at}{new_count or ''} @@"
    return header + line[match.end() :]


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
    """The value at ``path`` in a file's text, or None.

    Raises:
        DuplicateKeyError: a JSON object on the way holds the key to it twice, or the value
            (an object) holds a key twice: an edit there is refused alike, whichever of the
            two is Aletheia's.
        ConfigFileError: the text does not parse.
    """
    try:
        if fmt == "toml":
            body = _toml_body(text)[1]
            return _toml_get(tomlkit.parse(body), path) if body.strip() else None
        if path and not jsonc.holds_no_value(text):
            jsonc.parse(text, path)  # the keys on the way once each, as an edit needs them
        return jsonc.get_member(text, path)
    except jsonc.JsoncDuplicateKeyError as error:
        raise DuplicateKeyError(str(error)) from None
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
    except (jsonc.JsoncShapeError, jsonc.JsoncDuplicateKeyError) as error:
        raise ConfigFileError(str(error)) from None
    except jsonc.JsoncError as error:
        raise ConfigFileError(f"not valid JSON: {error}") from None


def set_list(text: str, path: tuple[str, ...], values: list[Any]) -> str:
    """A JSON file's text with the list at ``path`` holding ``values``, the text of the
    elements that stay (and all else) kept as it was."""
    try:
        return jsonc.set_array(text, path, values)
    except (jsonc.JsoncShapeError, jsonc.JsoncDuplicateKeyError) as error:
        raise ConfigFileError(str(error)) from None
    except jsonc.JsoncError as error:
        raise ConfigFileError(f"not valid JSON: {error}") from None


def new_file_text(fmt: FileFormat, keys: Mapping[str, Any]) -> str:
    """The text ``install`` starts a new file with, before its own entries: the top-level
    ``keys`` (OpenCode's ``$schema``), or nothing."""
    text = ""
    for key, value in keys.items():
        text = set_entry(text, fmt, (key,), value)
    return text


def bare_file_text(fmt: FileFormat, keys: Mapping[str, Any]) -> str:
    """What is left of a file ``install`` made (starting with ``keys``) once ``uninstall`` took
    out all it added: ``{}`` (with its newline), the ``keys`` alone, or an empty TOML file."""
    return new_file_text(fmt, keys) or ("{}\n" if fmt == "json" else "")


def remove_empty(text: str, fmt: FileFormat, path: tuple[str, ...]) -> str:
    """``text`` without the object at ``path`` and each object above it left holding nothing
    (written ``{}``: not a comment inside); all else kept. TOML tables are left as they are
    (``remove_entry`` takes out no table but the entry's)."""
    if fmt == "toml":
        return text
    try:
        for depth in range(len(path), 0, -1):
            if not jsonc.is_empty_object(text, path[:depth]):
                break
            text = jsonc.remove_member(text, path[:depth])
    except jsonc.JsoncDuplicateKeyError:
        pass  # an object above holds a key twice: it is not cut, and what was cut so far stays
    except jsonc.JsoncError as error:
        raise ConfigFileError(f"not valid JSON: {error}") from None
    return text


def remove_entry(text: str, fmt: FileFormat, path: tuple[str, ...]) -> str:
    """The file's text without the value at ``path``, all else kept."""
    if fmt == "toml":
        mark, body, crlf = _toml_body(text)
        new = _toml_remove(body, path)
        return mark + (new.replace("\n", "\r\n") if crlf else new)
    try:
        return jsonc.remove_member(text, path)
    except jsonc.JsoncDuplicateKeyError as error:
        raise ConfigFileError(str(error)) from None
    except jsonc.JsoncError as error:
        raise ConfigFileError(f"not valid JSON: {error}") from None


def _toml_without(text: str, path: tuple[str, ...], prune: bool) -> dict[str, Any]:
    """The document without ``path``; with ``prune``, tables it leaves empty go too."""
    document: dict[str, Any] = tomllib.loads(text)
    parents = [document]
    for key in path[:-1]:
        parents.append(parents[-1].get(key, {}))
    parents[-1].pop(path[-1], None)
    for depth in range(len(path) - 1, 0, -1):
        if prune and not parents[depth]:
            parents[depth - 1].pop(path[depth - 1], None)
    return document


def _toml_remove(text: str, path: tuple[str, ...]) -> str:
    """The ``[path]`` table cut out as text (its sub-tables too), else removed through tomlkit;
    the result must read as the old document without it."""
    try:
        wanted = [_toml_without(text, path, prune) for prune in (False, True)]
    except tomllib.TOMLDecodeError as error:
        raise ConfigFileError(f"not valid TOML: {error}") from None
    span = _table_span(text, path)
    if span is not None:
        candidate = text[: span[0]] + text[span[1] :]
        if span[1] == len(text) and candidate.endswith("\n\n"):
            candidate = candidate[:-1]  # the blank line install put before the table
        try:
            if tomllib.loads(candidate) in wanted:
                return candidate
        except tomllib.TOMLDecodeError:
            pass
    document: Any = tomlkit.parse(text)
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    del parent[path[-1]]
    new = tomlkit.dumps(document)
    if tomllib.loads(new) not in wanted:
        raise ConfigFileError(f"cannot remove {'.'.join(path)} from this TOML layout")
    return new


def _earlier_form(existing: Any, entry: Any) -> bool:
    return (
        isinstance(existing, dict)
        and isinstance(entry, dict)
        and all(key in entry and entry[key] == value for key, value in existing.items())
    )


def plan_change(
    path: Path,
    fmt: FileFormat,
    entry_path: tuple[str, ...],
    entry: Any,
    *,
    force: bool,
    owned: Callable[[Any], bool] | None = None,
    merge: Callable[[Any, Any], Any] | None = None,
    new_file: Mapping[str, Any] | None = None,
) -> Change:
    """What writing ``entry`` at ``entry_path`` in ``path`` would do.

    An equal entry already there changes nothing. One that is ours (``owned``), or holds only
    some of the entry's fields, each with the entry's value (the entry as an earlier release
    wrote it, before OpenCode's ``enabled``), is replaced by ``merge(existing, entry)`` (what
    the user added to it kept); a different one is a conflict unless ``force``, which replaces
    it whole. A file made new starts with the top-level keys ``new_file`` (OpenCode's
    ``$schema``), as ``connect`` shows it; a file already there keeps what it has.
    """
    old = read_text(path)
    try:
        existing = get_entry(old, fmt, entry_path)
    except ConfigFileError as error:
        raise in_file(path, error) from None
    ours = existing is not None and (
        _earlier_form(existing, entry) or (owned is not None and owned(existing))
    )
    if ours and merge is not None:
        entry = merge(existing, entry)
    if existing == entry:
        return Change(path, "unchanged", old, old, existing)
    if existing is not None and not force and not ours:
        return Change(path, "conflict", old, old, existing)
    start = old
    if not path.exists():  # read_text gave "" for no file: a new one
        start = new_file_text(fmt, new_file or {})
    try:
        new = set_entry(start, fmt, entry_path, entry)
    except ConfigFileError as error:
        raise ConfigFileError(f"{path}: {error}") from None
    return Change(path, "add" if existing is None else "replace", old, new, existing)
