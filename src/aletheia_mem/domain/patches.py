"""Codex's ``apply_patch`` input, read without applying it: which files a patch adds, updates
(and moves) or deletes, and the first change of each; and the observations a call makes, one
per file (``Wrote``, ``Edited``, ``Moved``, ``Deleted``), as ``observations`` saves them.

The patch text (``tool_input.command`` in Codex's hook payload) holds one section per file::

    *** Begin Patch
    *** Add File: docs/notes.md
    +a line
    *** Update File: src/cart.py
    *** Move to: src/basket.py
    @@ def total(cart):
    -    return 0
    +    return 1
    *** Delete File: old.txt
    *** End Patch

Paths are as the model wrote them: relative to the session's folder, or absolute.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from aletheia_mem.domain.captured import (
    MAX_PATH,
    Captured,
    excluded_file,
    line_count,
    replacement,
    safe_path,
    titled,
)
from aletheia_mem.domain.episodes import read_head

# A patch naming more files than this is read up to here: each file makes an observation, and a
# hook has a second of work to save them.
MAX_PATCH_FILES = 50
# Of a file's first change, this much of each side is kept (the observation shows less).
MAX_CHANGE_TEXT = 20_000
# Of a patch, only this much is read for the files it changes.
PATCH_READ_LIMIT = 1_000_000
# How Codex's tool output begins: ``Exit code: 0``, then the wall time and the output.
EXIT_CODE = re.compile(r"\s*Exit code: (\d+)")
_SECTION = re.compile(r"\*\*\* (Add|Update|Delete) File: (.+)")
_MOVE = "*** Move to: "
Action = Literal["add", "update", "delete"]
_ACTIONS: dict[str, Action] = {"Add": "add", "Update": "update", "Delete": "delete"}


@dataclass
class FileChange:
    """One file of a patch: what it does, the path (and new path of a move), the lines an added
    file gets, how many hunks an update has, and the old and new text of its first hunk."""

    action: Action
    path: str
    moved_to: str | None = None
    added_lines: int = 0
    hunks: int = 0
    old: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    # While the patch is read: whether a hunk is open, and the characters kept of each side.
    _in_hunk: bool = False
    _old_size: int = 0
    _new_size: int = 0


def read_patch(text: str) -> list[FileChange]:
    """The files ``text`` changes, in its order (at most :data:`MAX_PATCH_FILES`); none when it
    is no patch."""
    changes: list[FileChange] = []
    for line in text.splitlines():
        section = _SECTION.fullmatch(line.rstrip())
        if section is not None:
            if len(changes) == MAX_PATCH_FILES:
                break
            changes.append(FileChange(_ACTIONS[section[1]], section[2].strip()))
        elif changes and line.startswith("*** "):
            _read_marker(changes[-1], line)
        elif changes:
            _read_body(changes[-1], line)
    return [change for change in changes if change.path]


def _read_marker(change: FileChange, line: str) -> None:
    if change.action == "update" and line.startswith(_MOVE) and change.moved_to is None:
        change.moved_to = line[len(_MOVE) :].strip() or None


def _read_body(change: FileChange, line: str) -> None:
    if change.action == "add":
        change.added_lines += line.startswith("+")
        return
    if change.action != "update":
        return
    if line.startswith("@@"):
        change._in_hunk = False  # the next change line opens a hunk
        return
    if not line and not change._in_hunk:
        return  # a blank line between sections
    if not change._in_hunk:
        change.hunks += 1
        change._in_hunk = True
    if change.hunks > 1:
        return
    mark, rest = line[:1], line[1:]
    if mark in (" ", "", "-") and change._old_size < MAX_CHANGE_TEXT:
        change.old.append(rest)
        change._old_size += len(rest) + 1
    if mark in (" ", "", "+") and change._new_size < MAX_CHANGE_TEXT:
        change.new.append(rest)
        change._new_size += len(rest) + 1


def patch_observations(
    tool_input: object, root: Path, cwd: Path, excluded: tuple[str, ...] = ()
) -> list[Captured]:
    """The observations of a call of Codex's ``apply_patch`` with ``tool_input`` (its patch in
    ``command``), one per file, in the patch's order; a relative path is of ``cwd`` (the
    session's folder), and a file in a project of ``excluded`` makes none."""
    patch = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(patch, str):
        return []
    observations = []
    # Of a patch of megabytes, the start (without the line the cut falls in: a path cut short
    # would name another file) is read: reading all of it would outlast the hook's deadline.
    for change in read_patch(read_head(patch, PATCH_READ_LIMIT)):
        found = [_patched_path(raw, cwd) for raw in (change.path, change.moved_to) if raw]
        paths = [path for path in found if path is not None]
        if len(paths) < len(found) or any(excluded_file(path, excluded) for path in paths):
            continue
        shown = [safe_path(str(path), root) for path in paths]
        observations.append(_patch_observation(change, shown))
    return observations


def _patch_observation(change: FileChange, shown: list[str]) -> Captured:
    path = shown[0]
    if change.action == "add":
        text = f"Wrote {path} ({line_count(change.added_lines)})."
        return Captured("change", titled("Wrote", path), text, (path,))
    if change.action == "delete":
        return Captured("change", titled("Deleted", path), f"Deleted {path}.", (path,))
    title, text = titled("Edited", path), f"Edited {path}"
    if len(shown) > 1:
        title, text = titled("Moved", f"{path} to {shown[1]}"), f"Moved {path} to {shown[1]}"
    edits = f" ({change.hunks} edits)." if change.hunks > 1 else "."
    text += edits
    if change.hunks:
        text += replacement("\n".join(change.old), "\n".join(change.new), path)
    return Captured("change", title, text, tuple(shown))


def _patched_path(raw: str, cwd: Path) -> Path | None:
    """A patch's path made absolute (of ``cwd``); None when it could not be kept."""
    if len(raw) > MAX_PATH or "\x00" in raw:
        return None
    path = Path(raw)
    return path if path.is_absolute() else Path(os.path.normpath(cwd / path))


def failed_call(payload: dict[str, Any]) -> bool:
    """Whether Codex's output of the call tells a non-zero exit code (the patch was not
    applied)."""
    response = payload.get("tool_response")
    exit_code = EXIT_CODE.match(response) if isinstance(response, str) else None
    return exit_code is not None and int(exit_code[1]) != 0
