"""What capture hooks save when a session ends: a ``summary`` memory of its requests and of the
files its observations name (``domain.observations``), built from the store without a model.

A session resumed after its end, or going on after a turn (OpenCode and Cursor sum up each turn),
ends again with a summary of all of it, which replaces its earlier one: ``replace_summary``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from aletheia_mem.domain.captured import EXCERPT_LENGTH, Captured, clean, save_captured
from aletheia_mem.domain.dismissals import REPLACED_REASON, is_replaced, set_dismissed
from aletheia_mem.domain.episodes import episode_uid
from aletheia_mem.domain.kinds import OBSERVATION_KIND, SUMMARY_KIND
from aletheia_mem.domain.limits import MAX_TEXT
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


@dataclass(frozen=True)
class SessionRecord:
    """What a session left in the store: its requests (oldest first) and the files its
    observations name."""

    requests: Sequence[str]
    files: Sequence[str]
    started_at: int
    ended_at: int


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
    saved = save_captured(store, captured, SUMMARY_KIND, project, tool, now)
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
            at=now, actor=memory.tool, tool="dismiss_memory", project=None, result="ok",
            detail=reason,
        )  # fmt: skip
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
    return is_replaced(memory.dismiss_reason)


def _in_order(store: Store, ids: Sequence[int]) -> list[Memory]:
    """The memories with these ids, in that order (unknown ones skipped)."""
    by_id = {memory.id: memory for memory in store.get_memories(ids)}
    return [by_id[memory_id] for memory_id in ids if memory_id in by_id]


def _one_line(text: str) -> str:
    return " ".join(text.split())
