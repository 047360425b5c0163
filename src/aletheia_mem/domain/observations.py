"""What capture hooks save for each file a tool changed: an ``observation`` memory (a session's
``summary`` is ``domain.summaries``).

Gemini CLI's file tools (``write_file``, ``replace``) are told as Claude Code's (``Write``,
``Edit``), whose input fields they share, so both make the same observations. A call of Codex's
``apply_patch`` makes one observation per file its patch adds (``Wrote``), updates (``Edited``,
``Moved``) or deletes (``Deleted``): ``domain.patches``. OpenCode's ``write`` and ``edit``
are told as ``Write`` and ``Edit`` (their fields renamed), its ``apply_patch`` as Codex's.
Cursor's ``afterFileEdit`` (a file and its edits) is told as ``MultiEdit``: ``Edited`` with the
first edit's text, as ``Edit`` makes.

An observation is built from the host's hook payload alone, without a model: it names the file
and the change (the replaced text, cut short). Text inside ``<private>`` is removed and secrets
are redacted before anything is stored (``save_memory`` redacts again). Session context does not
list observations one by one (a session makes dozens); they are found by search, and each
summary names their files. Only a block whose Recent would list nothing else lists them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from aletheia_mem.domain.captured import (
    MAX_PATH,
    Captured,
    excluded_file,
    line_count,
    replacement,
    safe_path,
    save_captured,
    titled,
)
from aletheia_mem.domain.episodes import episode_uid
from aletheia_mem.domain.kinds import (
    CODEX_FILE_TOOLS,
    CURSOR_EDIT_EVENT,
    FILE_TOOLS,
    GEMINI_FILE_TOOLS,
    OBSERVATION_KIND,
    OPENCODE_FIELDS,
    OPENCODE_FILE_TOOLS,
    OPENCODE_PATCH_TOOL,
    OPENCODE_TOOL_EVENT,
)
from aletheia_mem.domain.patches import failed_call, patch_observations

if TYPE_CHECKING:
    from aletheia_mem.storage.contracts import Store


def changed_file(tool_name: object, tool_input: object) -> str | None:
    """The path of the file a call of ``tool_name`` changed, as the host wrote it; None when
    the call changed no file (or names none that could be kept)."""
    tool_name = _claude_name(tool_name)
    if tool_name not in FILE_TOOLS or not isinstance(tool_input, dict):
        return None
    raw = tool_input.get("notebook_path" if tool_name == "NotebookEdit" else "file_path")
    if not isinstance(raw, str) or not raw.strip() or len(raw) > MAX_PATH or "\x00" in raw:
        return None
    return raw


def observation_of(tool_name: object, tool_input: object, root: Path) -> Captured | None:
    """The observation a call of ``tool_name`` with ``tool_input`` makes, when it changed a file
    (``FILE_TOOLS``); paths under ``root`` (the project's folder) are told relative to it."""
    tool_name = _claude_name(tool_name)
    raw = changed_file(tool_name, tool_input)
    if raw is None or not isinstance(tool_input, dict):
        return None
    # Redacted before the title is cut to its limit: a cut secret could not be found again; a
    # lone surrogate (a Windows file name may hold one) is replaced, as no store could keep it.
    path = safe_path(raw, root)
    if tool_name == "Write":
        content = tool_input.get("content")
        # A file's last line may end in a newline (most do): no line after it.
        lines = 0
        if isinstance(content, str) and content:
            lines = content.count("\n") + (not content.endswith("\n"))
        text = f"Wrote {path} ({line_count(lines)})."
        return Captured("change", titled("Wrote", path), text, (path,))
    if tool_name == "NotebookEdit":
        mode = tool_input.get("edit_mode")
        how = f" ({mode} a cell)" if mode in ("replace", "insert", "delete") else ""
        title = titled("Edited notebook", path)
        return Captured("change", title, f"Edited {path}{how}.", (path,))
    edits = tool_input.get("edits") if tool_name == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return None
    pairs = [e for e in edits if isinstance(e, dict)]
    text = f"Edited {path}" + (f" ({len(pairs)} edits)." if len(pairs) > 1 else ".")
    if pairs:
        text += replacement(pairs[0].get("old_string"), pairs[0].get("new_string"), path)
    return Captured("change", titled("Edited", path), text, (path,))


def save_observation(
    store: Store,
    *,
    project: str,
    tool: str,
    session_id: str | None,
    payload: dict[str, Any],
    root: Path,
    now: int,
    excluded: tuple[str, ...] = (),
    cwd: Path | None = None,
) -> bool:
    """Save the observation of a PostToolUse payload, if its tool changed a file that is not
    in a project of ``excluded`` (``is_excluded``: keys or folders, also reached through links or
    ``..``), and note it as the session's (for its summary) when the session's episode began.
    Gemini CLI runs AfterTool also after a call that failed (``tool_response.error``): such a
    call changed nothing and makes no observation. A Codex ``apply_patch`` call saves one per
    file (its relative paths are of ``cwd``, the session's folder; ``root`` without it), none
    when its output tells a non-zero exit code."""
    if payload.get("hook_event_name") == OPENCODE_TOOL_EVENT:
        payload = _as_claude_or_codex(payload)
    elif payload.get("hook_event_name") == CURSOR_EDIT_EVENT:
        payload = _cursor_as_claude(payload)
    if _failed_gemini_call(payload):
        return False
    if isinstance(payload.get("tool_name"), str) and payload["tool_name"] in CODEX_FILE_TOOLS:
        if failed_call(payload):
            return False
        found = patch_observations(payload.get("tool_input"), root, cwd or root, excluded)
        _save_all(store, found, project, tool, session_id, now)
        return bool(found)
    raw = changed_file(payload.get("tool_name"), payload.get("tool_input"))
    if raw is not None and excluded_file(root / raw, excluded):
        return False
    captured = observation_of(payload.get("tool_name"), payload.get("tool_input"), root)
    if captured is None:
        return False
    _save_all(store, [captured], project, tool, session_id, now)
    return True


def _save_all(
    store: Store,
    observations: list[Captured],
    project: str,
    tool: str,
    session_id: str | None,
    now: int,
) -> None:
    """Save each observation, noted as the session's when the session's episode began."""
    if not observations:
        return
    episode = store.episode_id_by_uid(episode_uid(tool, project, session_id, now))
    for captured in observations:
        saved = save_captured(store, captured, OBSERVATION_KIND, project, tool, now)
        if episode is not None:
            store.link_episode_memory(episode, saved.id)


def _claude_name(tool_name: object) -> object:
    """Claude Code's name of a Gemini CLI file tool; any other name as it is."""
    return GEMINI_FILE_TOOLS.get(tool_name, tool_name) if isinstance(tool_name, str) else tool_name


def _as_claude_or_codex(payload: dict[str, Any]) -> dict[str, Any]:
    """An OpenCode call as Claude Code's (``write``, ``edit``) or Codex's (``apply_patch``)
    would be: the tool's name and its input's field names. OpenCode runs the hook only after a
    call that succeeded."""
    name, tool_input = payload.get("tool_name"), payload.get("tool_input")
    if not isinstance(name, str) or not isinstance(tool_input, dict):
        return {}
    if name == OPENCODE_PATCH_TOOL:
        return {"tool_name": name, "tool_input": {"command": tool_input.get("patchText")}}
    if name not in OPENCODE_FILE_TOOLS:
        return {}
    fields = {
        OPENCODE_FIELDS[key]: value for key, value in tool_input.items() if key in OPENCODE_FIELDS
    }
    return {"tool_name": OPENCODE_FILE_TOOLS[name], "tool_input": fields}


def _cursor_as_claude(payload: dict[str, Any]) -> dict[str, Any]:
    """A Cursor ``afterFileEdit`` as Claude Code's MultiEdit call of the same edits would be."""
    tool_input = {"file_path": payload.get("file_path"), "edits": payload.get("edits")}
    return {"tool_name": "MultiEdit", "tool_input": tool_input}


def _failed_gemini_call(payload: dict[str, Any]) -> bool:
    name, response = payload.get("tool_name"), payload.get("tool_response")
    return (
        isinstance(name, str)
        and name in GEMINI_FILE_TOOLS
        and isinstance(response, dict)
        and bool(response.get("error"))
    )
