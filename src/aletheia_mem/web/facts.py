"""The Facts page: per subject and predicate, the history as validity bars on a time axis."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aletheia_mem.domain.facts import asked_predicate, asked_subject
from aletheia_mem.domain.formatting import fact_is_current
from aletheia_mem.projects import normalize_project
from aletheia_mem.server.api_handlers import fact_json
from aletheia_mem.timefmt import parse_instant
from aletheia_mem.tools.app import ALL_PROJECTS, AppContext, target_project
from aletheia_mem.web.base import whole_number
from aletheia_mem.web.calls import call, checked

AXIS_WIDTH = 1000
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


def history(
    app: AppContext,
    subject: str,
    project: str,
    predicate: str,
    as_of: str,
    older: int = 0,
    upto: int | None = None,
    dismissed: bool = False,
) -> dict[str, Any]:
    """The tracks of a page of a subject's facts (the latest ``FACTS_PER_PAGE`` by valid from,
    skipping ``older`` of them (past the end: only the oldest, as the Rules page does), and on the
    first page every current fact), the axis ends, which facts held at ``as_of``, and where the
    older and newer pages start; of the facts with ids up to ``upto`` when given (a later page's
    link carries its first page's highest id: a fact recorded meanwhile, newest by valid from,
    pushes none onto it a second time). ``dismissed``: of the dismissed facts instead (none of
    them current)."""
    query: dict[str, Any] = {"subject": subject, "include_superseded": True}
    if project and project != ALL_PROJECTS:
        query["project"] = project
    if predicate:
        query["predicate"] = predicate
    if as_of:
        query["as_of"] = as_of
    # The factHistory operation's checks (and its words when refused) and its choice of
    # projects, but the page read in the store: a history may hold tens of thousands of facts.
    args = checked("factHistory", query=query)
    as_of_ms = parse_instant(as_of, "as_of") if as_of else None
    named = args.get("project")
    projects = (target_project(app, named),) if named and named.strip() else app.allowed_projects
    now = app.clock()
    found = app.store.fact_history_page(
        asked_subject(args["subject"]),  # as facts keep it: one given with its secret finds it
        projects,
        asked_predicate(args.get("predicate")),
        offset=older,
        limit=FACTS_PER_PAGE,
        now=now,
        upto=upto,
        dismissed=dismissed,
    )
    older, chosen = found.offset, list(found.facts)
    # Valid now: the value a future one supersedes holds until that one starts.
    valid_now = set() if dismissed else {fact.id for fact in found.current}
    if older == 0 and not dismissed:  # the first page shows every current fact, however old
        on_page = {fact.id for fact in chosen}
        chosen += [fact for fact in found.current if fact.id not in on_page]
    held = {f.id for f in chosen if fact_is_current(f, as_of_ms)} if as_of_ms is not None else set()
    # A current fact that starts in the future (a planned change) ends where it starts.
    page = []
    for fact in chosen:
        begins = fact.valid_from
        ends = now if fact.valid_to is None else fact.valid_to
        page.append((fact_json(fact), begins, max(ends, begins)))
    start = min((s for _, s, _ in page), default=now)
    end = max([now, *(e for _, _, e in page)])
    scale = AXIS_WIDTH / max(end - start, 1)
    tracks: dict[str, list[Bar]] = {}
    for shown, begins, ends in sorted(page, key=lambda span: span[1]):
        x = int((begins - start) * scale)
        bar = Bar(
            shown,
            x,
            max(int((ends - begins) * scale), MIN_BAR),
            shown["id"] in valid_now,
            shown["id"] in held,
            begins > now,
        )
        tracks.setdefault(shown["predicate"], []).append(bar)
    as_of_x = None
    if as_of_ms is not None:
        as_of_x = int((as_of_ms - start) * scale)
    following = older + FACTS_PER_PAGE
    return {
        "tracks": [Track(name, bars) for name, bars in sorted(tracks.items())],
        "axis_start": start,
        "axis_end": end,
        "as_of_x": as_of_x if as_of_x is not None and 0 <= as_of_x <= AXIS_WIDTH else None,
        "held": held,
        "width": AXIS_WIDTH,
        "total": found.total,
        "shown": len(page),
        "first": older + 1,
        "last": min(following, found.total),
        "older": following if following < found.total else None,
        "newer": max(older - FACTS_PER_PAGE, 0) if older else None,
        "upto": found.newest_id,
    }


def fact_projects(app: AppContext, limit: int, starting: str = "") -> list[str]:
    """The first ``limit`` projects the Facts page offers, by name, of those starting with
    ``starting``: those with memories and those with facts (a fact may be recorded in a project
    that holds no memory)."""
    store = app.store
    names = sorted(
        {*store.project_names(limit, starting), *store.fact_project_names(limit, starting)}
    )
    if app.allowed_projects is not None:
        names = [name for name in names if name in app.allowed_projects]
    return names[:limit]


def subject_index(app: AppContext, project: str) -> list[dict[str, Any]]:
    """Current facts to start from, newest first: of the chosen project, or of every project
    the caller may read."""
    every = not project or project == ALL_PROJECTS
    # A project as typed in the form: the tools' key.
    projects = app.allowed_projects if every else (normalize_project(project),)
    if projects is not None and app.allowed_projects is not None:
        projects = tuple(name for name in projects if name in app.allowed_projects)
    found = app.store.newest_current_facts(projects, INDEX_PER_PROJECT, app.clock())
    return [fact_json(fact) for fact in found]


FACT_ACTIONS = ("dismiss", "restore")
ALREADY = {"dismiss": "already-dismissed", "restore": "not-dismissed"}
FACT_NOTICES = {
    "dismiss": "Fact #{} dismissed.",
    "restore": "Fact #{} restored.",
    "already-dismissed": "Nothing to dismiss: fact #{} is already dismissed.",
    "not-dismissed": "Nothing to restore: fact #{} is not dismissed.",
}


def act_on_fact(app: AppContext, fact_id: int, action: str) -> str:
    """Dismiss or Restore a fact with the API's own operations; the notice's key: the action,
    or that it found nothing to do (dismissed or restored meanwhile, from another page or a
    tool: that dismissal and its reason stay)."""
    fact = app.store.get_fact(fact_id)
    if fact is not None and (fact.dismissed_at is not None) == (action == "dismiss"):
        return ALREADY[action]
    # A missing fact is refused in the operation's words.
    call(app, "dismissFact" if action == "dismiss" else "restoreFact", path={"fact_id": fact_id})
    return action


def fact_notice(app: AppContext, done: str, fact: str) -> str | None:
    """What a signed ``done`` says of fact ``fact``, while it is still true."""
    fact_id = whole_number(fact, 15)
    if done not in FACT_NOTICES or fact_id is None:
        return None
    dismissed = app.store.is_dismissed("facts", fact_id)
    if dismissed != (done in ("dismiss", "already-dismissed")):
        return None
    return FACT_NOTICES[done].format(fact_id)
