"""The Facts page: per subject and predicate, the history as validity bars on a time axis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aletheia_mem.server.api_handlers import fact_json, iso
from aletheia_mem.timefmt import parse_instant
from aletheia_mem.tools.app import ALL_PROJECTS, AppContext
from aletheia_mem.web.calls import call

AXIS_WIDTH = 1000
MAX_INDEX_PROJECTS = 20
INDEX_PER_PROJECT = 30
MIN_BAR = 3
# A subject's history page shows this many facts (and on the first page every current one too):
# a memory author can write thousands of facts about one subject.
FACTS_PER_PAGE = 200


@dataclass(frozen=True)
class Bar:
    fact: dict[str, Any]
    x: int
    width: int
    current: bool  # valid now, as fact_history's current facts
    at_as_of: bool
    upcoming: bool  # written for a time still ahead: not current yet


@dataclass(frozen=True)
class Track:
    """One predicate's values over time."""

    predicate: str
    bars: list[Bar]


def _ms(iso_text: str | None, fallback: int) -> int:
    return fallback if iso_text is None else parse_instant(iso_text, "time")


def history(
    app: AppContext, subject: str, project: str, predicate: str, as_of: str, older: int = 0
) -> dict[str, Any]:
    """The tracks of a page of a subject's facts (the latest ``FACTS_PER_PAGE`` by valid from,
    skipping ``older`` of them (past the end: only the oldest, as the Rules page does), and on the
    first page every current fact), the axis ends, which facts held at ``as_of``, and where the
    older and newer pages start."""
    query: dict[str, Any] = {"subject": subject, "include_superseded": True}
    if project and project != ALL_PROJECTS:
        query["project"] = project
    if predicate:
        query["predicate"] = predicate
    found = call(app, "factHistory", query=query)["facts"]
    held: set[int] = set()
    if as_of:
        held = {f["id"] for f in call(app, "factHistory", query={**query, "as_of": as_of})["facts"]}
    now = app.clock()
    # Valid now: the value a future one supersedes holds until that one starts. The times are
    # ISO texts of one width (``iso``), so compared as text: a history may hold thousands.
    at = iso(now)
    valid_now = {
        f["id"]
        for f in found
        if f["valid_from"] <= at and (f["valid_to"] is None or at < f["valid_to"])
    }
    found.sort(key=lambda fact: (fact["valid_from"], fact["id"]), reverse=True)
    older = min(older, max(len(found) - 1, 0))
    chosen = found[older : older + FACTS_PER_PAGE]
    if older == 0:
        chosen += [fact for fact in found[FACTS_PER_PAGE:] if fact["id"] in valid_now]
    # A current fact that starts in the future (a planned change) ends where it starts.
    page = []
    for fact in chosen:
        begins = _ms(fact["valid_from"], now)
        page.append((fact, begins, max(_ms(fact["valid_to"], now), begins)))
    start = min((s for _, s, _ in page), default=now)
    end = max([now, *(e for _, _, e in page)])
    scale = AXIS_WIDTH / max(end - start, 1)
    tracks: dict[str, list[Bar]] = {}
    for fact, begins, ends in sorted(page, key=lambda span: span[1]):
        x = int((begins - start) * scale)
        bar = Bar(
            fact,
            x,
            max(int((ends - begins) * scale), MIN_BAR),
            fact["id"] in valid_now,
            fact["id"] in held,
            begins > now,
        )
        tracks.setdefault(fact["predicate"], []).append(bar)
    as_of_x = None
    if as_of:
        as_of_x = int((_ms(as_of, now) - start) * scale)
    following = older + FACTS_PER_PAGE
    return {
        "tracks": [Track(name, bars) for name, bars in sorted(tracks.items())],
        "axis_start": start,
        "axis_end": end,
        "as_of_x": as_of_x if as_of_x is not None and 0 <= as_of_x <= AXIS_WIDTH else None,
        "held": held,
        "width": AXIS_WIDTH,
        "total": len(found),
        "shown": len(page),
        "first": older + 1,
        "last": min(following, len(found)),
        "older": following if following < len(found) else None,
        "newer": max(older - FACTS_PER_PAGE, 0) if older else None,
    }


def subject_index(app: AppContext, project: str) -> list[dict[str, Any]]:
    """Current facts to start from, newest first, for the chosen project (or a few of them)."""
    store = app.store
    names = (
        store.project_names()[:MAX_INDEX_PROJECTS]
        if not project or project == ALL_PROJECTS
        else [project]
    )
    if app.allowed_projects is not None:
        names = [name for name in names if name in app.allowed_projects]
    now = app.clock()
    found = [fact for name in names for fact in store.current_facts(name, INDEX_PER_PROJECT, now)]
    found.sort(key=lambda fact: -fact.recorded_at)
    return [fact_json(fact) for fact in found[:INDEX_PER_PROJECT]]
