"""Handlers of the memory tools: search, timeline, get_observations, save, dismiss, restore."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from aletheia_mem.domain import recall
from aletheia_mem.domain.formatting import (
    fact_line,
    memory_index_line,
    none_found,
    observation_block,
    timeline_line,
    wrap_recall,
)
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.timefmt import DAY_MS, parse_instant
from aletheia_mem.tools import structured
from aletheia_mem.tools.app import AppContext, neighbour_projects, readable_projects
from aletheia_mem.tools.structured import Output


def earlier_bound(until: int | None, older_than_days: float, now: int) -> int | None:
    """The search's upper time bound: ``older_than_days`` before ``now``, or ``until`` when
    that is earlier (DESIGN: with until, the earlier bound wins)."""
    cutoff = now - int(older_than_days * DAY_MS)
    return cutoff if until is None else min(until, cutoff)


def search_request(app: AppContext, args: dict[str, Any], now: int) -> recall.SearchRequest:
    """The search of ``args`` (the search tool's arguments, defaults applied) in the caller's
    readable projects; the JSON API's search takes the same arguments.

    Raises:
        InvalidInputError: neither a query nor a file, or an unreadable since/until (a query's).
    """
    query: str = (args.get("query") or "").strip()
    file: str = (args.get("file") or "").strip()
    if not query and not file:
        raise InvalidInputError("query is required.")
    # With a file only project, file_suffix and limit apply (the reference): the tool passes
    # no others (``applicable``); the JSON API's dates and offset are not read either.
    dated = not file
    since = parse_instant(args["since"], "since") if dated and "since" in args else None
    until = (
        parse_instant(args["until"], "until", end_of_day=True)
        if dated and "until" in args
        else None
    )
    if dated and "older_than_days" in args:
        until = earlier_bound(until, args["older_than_days"], now)
    kind = (args.get("kind") or "").strip().lower()  # kinds are stored lower-case
    return recall.SearchRequest(
        query=query or None,
        projects=readable_projects(app, args.get("project")),
        file=file or None,
        file_suffix=args["file_suffix"],
        type=args.get("type"),
        kind=kind or None,
        since=since,
        until=until,
        order=args["order"],
        limit=args["limit"],
        offset=args["offset"] if dated else 0,
        repository=app.repository,
    )


def search(app: AppContext, args: dict[str, Any]) -> Output:
    """Ranked memories and facts for a query, or the memories that name a file."""
    now = app.clock()
    # One index of lines: its fact lines count in limit and offset, as its memory lines do.
    request = replace(search_request(app, args, now), facts_in_page=True)
    query, file = request.query or "", request.file or ""
    result = recall.search_index(app.store, request, now, app.semantic)
    facts = [structured.fact(fact, now) for fact in result.facts]
    heads = [structured.memory_head(memory) for memory in result.memories]
    if query and not file and request.order == "relevance":
        for rank, head in enumerate(heads, result.memory_offset + 1):
            head["rank"] = rank  # last, after the head's own fields
    if result.empty_reason is not None:
        data = structured.recall(memories=[], facts=[], empty_reason=result.empty_reason)
        return Output(f"No matches. {result.empty_reason}", data)
    lines = [fact_line(fact, now) for fact in result.facts]
    lines += [memory_index_line(memory) for memory in result.memories]
    return Output(wrap_recall("\n".join(lines)), structured.recall(memories=heads, facts=facts))


def timeline_around(
    app: AppContext,
    anchor_id: int | None,
    query: str | None,
    project: str | None,
    before: int,
    after: int,
) -> recall.Timeline | None:
    """The anchor (memory ``anchor_id``, else the best hit of ``query``) with ``before`` and
    ``after`` neighbours in time, as the timeline tool, the JSON API and the CLI find them;
    None when there is no anchor."""
    # An explicit id may be in any project the caller can read; a query searches as search does.
    if anchor_id is not None and project is None:
        lookup = app.allowed_projects
    else:
        lookup = readable_projects(app, project)
    anchor = recall.find_anchor(app.store, anchor_id, query, lookup, app.clock())
    if anchor is None:
        return None
    neighbours = neighbour_projects(app, project, anchor.project)
    return recall.timeline(app.store, anchor, neighbours, before, after)


def timeline(app: AppContext, args: dict[str, Any]) -> Output:
    """The memories around one memory, in time order, with an arrow on it.

    Whatever the arguments, finding no anchor is an answer, not an error (as in the reference).
    """
    anchor_id, query = args.get("anchor"), args.get("query")
    if anchor_id is None and not (isinstance(query, str) and query.strip()):
        return Output("Nothing to anchor on.", structured.recall(memories=[]))
    found = timeline_around(
        app, anchor_id, query, args.get("project"), args["before"], args["after"]
    )
    if found is None:
        return Output("Nothing to anchor on.", structured.recall(memories=[]))
    lines = [timeline_line(memory, False) for memory in found.before]
    lines.append(timeline_line(found.anchor, True))
    lines += [timeline_line(memory, False) for memory in found.after]
    rows = [*found.before, found.anchor, *found.after]
    memories = [{**structured.memory_head(row), "is_anchor": row is found.anchor} for row in rows]
    data = structured.recall(anchor_id=found.anchor.id, memories=memories)
    return Output(wrap_recall("\n".join(lines)), data)


def get_observations(app: AppContext, args: dict[str, Any]) -> Output:
    """Full text of the memories with these ids, newest first."""
    ids = list(dict.fromkeys(args["ids"]))
    found = app.store.get_memories(ids)
    if app.allowed_projects is not None:
        found = [memory for memory in found if memory.project in app.allowed_projects]
    seen = {memory.id for memory in found}
    data = structured.recall(
        memories=[structured.full_memory(memory) for memory in found],
        missing_ids=[memory_id for memory_id in ids if memory_id not in seen],
    )
    if not found:
        return Output(none_found(ids), data)
    return Output(wrap_recall("\n---\n".join(observation_block(m) for m in found)), data)
