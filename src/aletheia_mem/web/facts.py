"""The Facts page: per subject and predicate, the history as validity bars on a time axis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aletheia_mem.server.api_handlers import fact_json
from aletheia_mem.timefmt import parse_instant
from aletheia_mem.tools.app import ALL_PROJECTS, AppContext
from aletheia_mem.web.calls import call

AXIS_WIDTH = 1000
MAX_INDEX_PROJECTS = 20
INDEX_PER_PROJECT = 30
MIN_BAR = 3


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
    app: AppContext, subject: str, project: str, predicate: str, as_of: str
) -> dict[str, Any]:
    """The tracks of a subject's facts, the axis ends, and which facts held at ``as_of``."""
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
    # A current fact that starts in the future (a planned change) ends where it starts.
    spans = []
    for fact in found:
        begins = _ms(fact["valid_from"], now)
        spans.append((fact, begins, max(_ms(fact["valid_to"], now), begins)))
    # Valid now: the value a future one supersedes holds until that one starts.
    valid_now = {f["id"] for f, begins, _ in spans if begins <= now < _ms(f["valid_to"], now + 1)}
    start = min((s for _, s, _ in spans), default=now)
    end = max([now, *(e for _, _, e in spans)])
    scale = AXIS_WIDTH / max(end - start, 1)
    tracks: dict[str, list[Bar]] = {}
    for fact, begins, ends in sorted(spans, key=lambda span: span[1]):
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
    return {
        "tracks": [Track(name, bars) for name, bars in sorted(tracks.items())],
        "axis_start": start,
        "axis_end": end,
        "as_of_x": as_of_x if as_of_x is not None and 0 <= as_of_x <= AXIS_WIDTH else None,
        "held": held,
        "width": AXIS_WIDTH,
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
