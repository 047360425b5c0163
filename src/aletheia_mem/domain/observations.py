"""What capture hooks save as memories: an ``observation`` for each file a tool changed, and a
``summary`` of a session when it ends.

Gemini CLI's file tools (``write_file``, ``replace``) are told as Claude Code's (``Write``,
``Edit``), whose input fields they share, so both make the same observations. A call of Codex's
``apply_patch`` makes one observation per file its patch adds (``Wrote``), updates (``Edited``,
``Moved``) or deletes (``Deleted``): ``domain.patches``. OpenCode's ``write`` and ``edit``
are told as ``Write`` and ``Edit`` (their fields renamed), its ``apply_patch`` as Codex's.
Cursor's ``afterFileEdit`` (a file and its edits) is told as ``MultiEdit``: ``Edited`` with the
first edit's text, as ``Edit`` makes.

Both are built from the host's hook payload alone, without a model: an observation names the
file and the change (the replaced text, cut short), a summary lists the session's requests and
the files its observations name. Text inside ``<private>`` is removed and secrets are redacted
before anything is stored (``save_memory`` redacts again). Session context does not list
observations one by one (a session makes dozens); they are found by search, and each summary
names their files.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aletheia_mem.domain.captured import (
    EXCERPT_LENGTH,
    MAX_PATH,
    Captured,
    clean,
    excluded_file,
    line_count,
    replacement,
    safe_path,
    titled,
)
from aletheia_mem.domain.dismissals import set_dismissed
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
    SUMMARY_KIND,
)
from aletheia_mem.domain.limits import MAX_TEXT
from aletheia_mem.domain.memories import MemoryInput, save_memory
from aletheia_mem.domain.patches import failed_call, patch_observations
from aletheia_mem.storage.base import Memory
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.timefmt import format_clock, format_date

if TYPE_CHECKING:
    from aletheia_mem.storage.contracts import Store

MAX_SUMMARY_ITEMS = 20
# The requests and observations a summary looks through (a session rarely has more).
SESSION_ITEMS = 200
# How the reason of a summary dismissed by its session's later one begins (the user's own
# dismissals give theirs, or none).
REPLACED_REASON = "the session went on: "


@dataclass(frozen=True)
class SessionRecord:
    """What a session left in the store: its requests (oldest first) and the files its
    observations name."""

    requests: Sequence[str]
    files: Sequence[str]
    started_at: int
    ended_at: int


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
        text += replacement(pairs[0].get("old_string"), pairs[0].get("new_string"))
    return Captured("change", titled("Edited", path), text, (path,))


def summary_of(session: SessionRecord, tool: str) -> Captured | None:
    """The summary of a session that made requests or changed files; None for an empty one."""
    requests = [clean(request) for request in session.requests]
    requests = [request for request in requests if request]
    if not requests and not session.files:
        return None
    day, start, end = (
        format_date(session.started_at),
        format_clock(session.started_at),
        format_clock(session.ended_at),
    )
    lines = [f"Session of {tool}, {day} {start}-{end} UTC."]
    if requests:
        lines.append("Requests:")
        lines += [f"- {_one_line(r)[:EXCERPT_LENGTH]}" for r in requests[:MAX_SUMMARY_ITEMS]]
        if len(requests) > MAX_SUMMARY_ITEMS:
            lines.append(f"- ... and {len(requests) - MAX_SUMMARY_ITEMS} more")
    files = list(dict.fromkeys(session.files))
    if files:
        shown = ", ".join(files[:MAX_SUMMARY_ITEMS])
        more = (
            f" and {len(files) - MAX_SUMMARY_ITEMS} more" if len(files) > MAX_SUMMARY_ITEMS else ""
        )
        lines.append(f"Files changed: {shown}{more}.")
    changed = f"{len(files)} file{'s' if len(files) != 1 else ''} changed"
    first = _one_line(requests[0]) if requests else changed
    title = f"Session: {first}"[:100]
    return Captured("note", title, "\n".join(lines)[:MAX_TEXT], tuple(files[:MAX_SUMMARY_ITEMS]))


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
        saved = _save(store, captured, OBSERVATION_KIND, project, tool, now)
        if episode is not None:
            store.link_episode_memory(episode, saved.id)


def end_session(store: Store, *, project: str, tool: str, session_id: str | None, now: int) -> bool:
    """Save the session's summary (when it made requests or changed files), then close its
    episode with the summary's text; False when the session never started one.

    A session resumed after its end (or going on after a turn, for hosts that sum up each turn)
    ends again with a summary of all of it, which replaces the one of its earlier end:
    :func:`replace_summary`. A session the user dismissed (its episode) makes none.
    """
    episode = store.episode_id_by_uid(episode_uid(tool, project, session_id, now))
    if episode is None:
        return False
    if store.is_dismissed("episodes", episode):  # the user hid the session: no summary of it
        return store.end_episode(episode, now, None)
    started = store.episode_started_at(episode)
    # Its own requests, not the project's newest (another session may have made hundreds since).
    requests = store.episode_requests(episode, SESSION_ITEMS)
    # The session's own observations: another session of the same tool in the same project at
    # the same time makes its own.
    ids = store.episode_memory_ids(episode, OBSERVATION_KIND, SESSION_ITEMS)
    files = [path for memory in _in_order(store, ids) for path in memory.files]
    record = SessionRecord([r.text for r in requests], files, started or now, now)
    captured = summary_of(record, tool)
    summary = None
    if captured is not None:
        summary = replace_summary(store, episode, captured, project, tool, now)
    return store.end_episode(episode, now, summary)


def replace_summary(
    store: Store, episode: int, captured: Captured, project: str, tool: str, now: int
) -> str | None:
    """Save ``captured`` as the summary of the episode's session, in place of its earlier one;
    the text of the session's summary now, None when it saved none.

    The earlier one stays when ``captured`` adds nothing to it but a later end (a turn or a
    resumed session that asked nothing and changed no file; Cursor's sessionEnd long after its
    last stop). The same text is one memory (deduplicated), so two sessions that end alike
    share their summary: the earlier one is dismissed (``aletheia restore`` brings it back)
    only when it is no other session's summary, and a summary dismissed so that comes again is
    this session's now and shown again. A summary the user dismissed stays so, with the user's
    reason, and the session saves no other one until the user restores it.
    """
    earlier = _in_order(store, store.episode_memory_ids(episode, SUMMARY_KIND, SESSION_ITEMS))
    if any(memory.dismissed_at is not None and not _replaced(memory) for memory in earlier):
        return None
    current = [memory for memory in earlier if memory.dismissed_at is None]
    if current and _same_but_its_end(current[-1], captured):
        return current[-1].text
    saved = _save(store, captured, SUMMARY_KIND, project, tool, now)
    store.link_episode_memory(episode, saved.id)
    linked = store.get_memory(saved.id)  # read after the link: no session retires it now
    if linked is not None and linked.dismissed_at is not None and _replaced(linked):
        set_dismissed(
            store,
            item_type="memory",
            item_id=saved.id,
            dismiss=False,
            reason=None,
            actor=tool,
            now=now,
        )
    retired = _retire(store, episode, [m for m in earlier if m.id != saved.id], saved.id, now)
    if any(memory.pinned for memory in retired) and not saved.pinned:
        store.set_pinned(saved.id, True, now)  # the user pinned the session's summary
    return captured.text


def _retire(
    store: Store, episode: int, earlier: list[Memory], saved_id: int, now: int
) -> list[Memory]:
    """Retire the episode's earlier summaries in favour of ``saved_id``; the ones dismissed
    (those no other session links, not dismissed already)."""
    retired = []
    for memory in earlier:
        reason = f"{REPLACED_REASON}#{saved_id} sums it up"
        audit = AuditEntry(
            at=now, actor=memory.tool, tool="dismiss_memory", project=None, result="ok"
        )
        if store.retire_episode_memory(episode, memory.id, now, reason, audit):
            retired.append(memory)
    return retired


def _same_but_its_end(memory: Memory, captured: Captured) -> bool:
    """Whether a summary tells what ``captured`` tells, but for the time the session ended (its
    first line)."""
    return (memory.title, memory.files, memory.text.partition("\n")[2]) == (
        captured.title,
        captured.files,
        captured.text.partition("\n")[2],
    )


def _replaced(memory: Memory) -> bool:
    """Whether a dismissed summary was dismissed by its session's later one, not by the user."""
    return (memory.dismiss_reason or "").startswith(REPLACED_REASON)


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


def _in_order(store: Store, ids: Sequence[int]) -> list[Memory]:
    """The memories with these ids, in that order (unknown ones skipped)."""
    by_id = {memory.id: memory for memory in store.get_memories(ids)}
    return [by_id[memory_id] for memory_id in ids if memory_id in by_id]


def _save(store: Store, captured: Captured, kind: str, project: str, tool: str, now: int) -> Memory:
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


def _one_line(text: str) -> str:
    return " ".join(text.split())
