"""The Memories page: the newest first (or a search with every filter of the search tool), a
detail view with the timeline around a memory, and Dismiss, Restore, Pin and Unpin."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from starlette.datastructures import QueryParams

from aletheia_mem.domain import recall
from aletheia_mem.domain.worklists import WORK_STATE_KIND
from aletheia_mem.errors import AletheiaError
from aletheia_mem.search.query import query_terms
from aletheia_mem.server.api_handlers import memory_json, search_json
from aletheia_mem.storage.base import MemoryQuery
from aletheia_mem.timefmt import parse_instant
from aletheia_mem.tools.app import ALL_PROJECTS, AppContext, readable_projects
from aletheia_mem.tools.memory_tools import search_request
from aletheia_mem.web.base import PageBound, page_bound, submitted, whole_number
from aletheia_mem.web.calls import call, checked

PAGE_SIZE = 50
FILTERS = ("q", "project", "type", "kind", "since", "until", "file", "file_suffix", "order")
ORDERS = ("relevance", "date_desc", "date_asc")
ACTIONS = {"dismiss", "restore", "pin", "unpin"}
PAST_THE_END = "No more memories: this page is past the end of the list."
ODD_OFFSET = "This link's offset= is not a number of memories: the first page is shown."
ODD_UPTO = "This link's upto= is not a memory id: the list is shown as it is now."
ODD_AT = "This link's at= is not a time: the results are ranked as they are now."
ID_DIGITS = 15  # as a memory id in an address
AT_DIGITS = 15  # epoch milliseconds, as an address carries them


@dataclass(frozen=True)
class Filters:
    """The Memories page's query string, as the form and the script send it."""

    values: dict[str, str]
    dismissed: bool
    # The page's offset and the highest memory id the listing's first page saw, which its next
    # pages carry: a memory saved meanwhile pushes none of those seen onto the next page a
    # second time. An odd offset= is the first page, an odd upto= the list as it is now.
    bound: PageBound
    # The time a search's first page ranked its results at (epoch ms), which its next pages
    # carry: ranked at that time again, the memories keep their order (recency, and a memory
    # whose facts were superseded meanwhile is not sunk as stale between two pages).
    at: int | None = None
    odd_at: bool = False  # an at= that is no time (the results are ranked as they are now)

    @classmethod
    def of(cls, params: QueryParams) -> Filters:
        values = {name: submitted(params, name).strip() for name in FILTERS}
        values["project"] = values["project"] or ALL_PROJECTS
        sent_at = params.get("at", "")
        at = whole_number(sent_at, AT_DIGITS)
        dismissed = params.get("dismissed") == "1"
        bound = page_bound(params, "offset", ID_DIGITS)
        return cls(values, dismissed, bound, at, bool(sent_at) and not at)

    @property
    def offset(self) -> int:
        return self.bound.offset

    @property
    def upto(self) -> int | None:
        return self.bound.upto

    @property
    def searching(self) -> bool:
        return bool(self.values["q"] or self.values["file"])

    @property
    def ranked(self) -> bool:
        """A search of the search tool's (the dismissed ones are listed by date instead)."""
        return self.searching and not self.dismissed

    @property
    def notice(self) -> str | None:
        """What the page says of an odd bound its link carried."""
        return self.bound.notice(ODD_OFFSET, ODD_UPTO, (ODD_AT, self.odd_at and self.ranked))

    @property
    def live(self) -> bool:
        """The newest-first list, which new memories join at the top as they are saved."""
        oldest_first = self.values["order"] == "date_asc"
        return not (self.searching or self.dismissed or self.offset or oldest_first)


@dataclass(frozen=True)
class Listing:
    memories: list[dict[str, Any]]
    facts: list[dict[str, Any]]
    empty_reason: str | None
    more: bool
    upto: int | None = None  # the bound its next page carries
    at: int | None = None  # the time a search's next page ranks at (browsing: None)


def _search_args(filters: Filters) -> dict[str, Any]:
    """The search tool's arguments: the filled-in filters, as the API takes them."""
    args: dict[str, Any] = {
        ("query" if name == "q" else name): value
        for name, value in filters.values.items()
        if value and name != "file_suffix"
    }
    if filters.values["file_suffix"]:
        args["file_suffix"] = "true"
    return {**args, "limit": PAGE_SIZE + 1, "offset": filters.offset}


def _instant(value: str, name: str, end_of_day: bool = False) -> int | None:
    return parse_instant(value, name, end_of_day=end_of_day) if value else None


def _browse(app: AppContext, filters: Filters, upto: int | None) -> list[dict[str, Any]]:
    """Newest first without a query (or the dismissed ones): the store's date-ordered page, of
    the memories with ids up to ``upto`` (None: all)."""
    values = filters.values
    # The searchMemories operation's checks, as a search's: an unknown order or type is refused
    # in its words whether a query is typed or not.
    checked("searchMemories", query=_search_args(filters))
    query = MemoryQuery(
        terms=tuple(query_terms(values["q"])) if filters.dismissed else (),
        projects=readable_projects(app, values["project"]),
        type=values["type"] or None,
        kind=values["kind"] or None,
        since=_instant(values["since"], "since"),
        until=_instant(values["until"], "until", end_of_day=True),
        order="date_asc" if values["order"] == "date_asc" else "date_desc",
        limit=PAGE_SIZE + 1,
        offset=filters.offset,
        # The live lists are on the Lists page; a dismissed one (renamed away, say) only here.
        exclude_kinds=() if values["kind"] or filters.dismissed else (WORK_STATE_KIND,),
        dismissed=filters.dismissed,
        upto=upto,
    )
    found = app.store.search_memories(query, app.clock())
    return [memory_json(memory) for memory in found]


def _search(app: AppContext, filters: Filters, upto: int, at: int) -> dict[str, Any]:
    """A page of the search tool's results (the searchMemories operation's checks and words
    when refused, and its answer), of the memories up to ``upto``, ranked at time ``at``; a
    file search is paged too (the tool's is not: only project, file_suffix and limit apply)."""
    args = checked("searchMemories", query=_search_args(filters))
    request = replace(search_request(app, args, at), offset=filters.offset, upto=upto)
    return search_json(recall.search(app.store, request, at, app.semantic))


def list_memories(app: AppContext, filters: Filters) -> Listing:
    """One page of the Memories list, with the matching facts when searching."""
    # Read before the page: a memory saved in between is above the bound, on no page.
    upto = filters.upto if filters.upto else app.store.newest_memory_id()
    at = None
    if filters.ranked:
        now = app.clock()
        at = min(filters.at, now) if filters.at else now  # never ranked at a time to come
        found = _search(app, filters, upto, at)
        rows, facts, reason = found["memories"], found["facts"], found["empty_reason"]
    else:
        rows, facts, reason = _browse(app, filters, upto), [], None
    if filters.offset and not rows and not facts:
        reason = PAST_THE_END
    return Listing(rows[:PAGE_SIZE], facts, reason, len(rows) > PAGE_SIZE, upto, at)


def newer_than(app: AppContext, filters: Filters, after: int) -> list[dict[str, Any]] | None:
    """The memories above id ``after``, newest first, for the live feed (newest-first view
    only); None when more than a page of them arrived: the page then offers to show the list
    anew rather than the newest page of them, which would leave a hole below it."""
    if not filters.live:
        return []
    newer = [row for row in _browse(app, filters, None) if row["id"] > after]
    return newer if len(newer) <= PAGE_SIZE else None


def memory_detail(app: AppContext, memory_id: int) -> dict[str, Any]:
    """A memory in full with the memories just before and after it."""
    memory = call(app, "getMemory", path={"memory_id": memory_id})
    try:
        around = call(app, "timeline", query={"anchor": memory_id, "before": 5, "after": 5})
    except AletheiaError:  # a dismissed memory anchors no timeline
        around = {"before": [], "after": []}
    return {"memory": memory, "before": around["before"], "after": around["after"]}


def act_on_memory(app: AppContext, memory_id: int, action: str, reason: str) -> str | None:
    """Dismiss (with a reason), Restore, Pin or Unpin: the API's own operations. None when
    Restore finds the memory not dismissed, or Dismiss finds it dismissed already (meanwhile,
    from another page or a tool: that dismissal and its reason stay, and are not this page's to
    undo); else the reason a restored memory was dismissed for (for its Undo), or ""."""
    path = {"memory_id": memory_id}
    if action in ("dismiss", "restore"):
        memory = call(app, "getMemory", path=path)
        if (memory["dismissed_at"] is None) == (action == "restore"):
            return None
    if action == "dismiss":
        call(app, "dismissMemory", path=path, body={"reason": reason} if reason.strip() else {})
    elif action == "restore":
        call(app, "restoreMemory", path=path)
        return str(memory.get("dismiss_reason") or "")
    else:
        call(app, "pinMemory", path=path, body={"pinned": action == "pin"})
    return ""
