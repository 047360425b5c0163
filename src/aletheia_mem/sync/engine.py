"""One sync of a local store with a hub: push this store's changes, then pull everyone else's.

A hub (and token) this store never synced with gets every item the store holds, not only the
changes made here: a hub set up anew (its store lost) or another hub then gets the team's memory
back from any store that had it. A version another store (or a hub) made is sent as this store's
at the same time, since a push carries only the pushing store's versions; a hub holding that
version or a later one keeps its own.

Each push page is applied by the hub in one transaction before this store moves its push
cursor; each pull page is applied here in one transaction together with the pull cursor. A sync
killed at any point therefore resumes where it stopped, and a page sent twice changes nothing
the second time (equal versions are skipped).

One bad record stops no sync (``screening``): a pulled record this store refuses is held back
(the cursor moves past it), and a record of this store the hub would refuse is left out of the
push; both are counted in the report with their reasons.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from aletheia_mem.clock import Clock
from aletheia_mem.errors import AletheiaError, ForbiddenError, InvalidInputError
from aletheia_mem.storage.contracts import SyncLog
from aletheia_mem.storage.sync_records import ApplyStats, ExportPage
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.replies import read_hello, read_pull_page, read_push_merged
from aletheia_mem.sync.screening import ANY_TIME, Refusals, screen
from aletheia_mem.sync.validate import MAX_SKEW_MS, dropped_reference, sendable_references

DEFAULT_PAGE_SIZE = 1000
PAGE_BYTES = 4 * 1024 * 1024
OVERSIZED = "it is larger than a sync page may carry (4 MiB)."
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Narrowed:
    """The hub names fewer projects for this token than it did at the last sync: ``before``
    (None: every project). What it no longer covers is neither pushed nor pulled."""

    before: tuple[str, ...] | None


@dataclass
class SyncReport:
    """What one sync did."""

    hub_url: str
    hub_id: str = ""
    token_name: str = ""
    projects: list[str] | None = None
    pushed: int = 0
    merged_at_hub: int = 0  # of those pushed, what the hub merged with an item it had
    held_back: int = 0  # rules a project-limited token may not push (``writable``)
    pulled: int = 0
    applied: int = 0
    merged: int = 0  # of those pulled
    withheld: dict[str, int] = field(default_factory=dict)  # left out by the hub, by reason
    pages: int = field(default=0)
    # records held back (screening): pulled ones this store refuses, own ones the hub would
    # refuse (left out of the push); own ones sent without a reference to an item no store
    # takes; lists sent or applied with their key rebuilt
    refused_pulled: Refusals = field(default_factory=Refusals)
    left_out: Refusals = field(default_factory=Refusals)
    unlinked: Refusals = field(default_factory=Refusals)
    repaired: int = 0
    # this store's changes of projects the token does not cover, passed over, by project
    outside: dict[str, int] = field(default_factory=dict)
    narrowed: Narrowed | None = None  # the hub names fewer projects for the token than before


def _quiet(message: str) -> None:
    """Progress goes nowhere unless asked for."""


def _scope_digest(client: HubClient) -> str:
    """How this store remembers the token's projects: by a digest of the token, never it."""
    return hashlib.sha256(client.token.encode("utf-8", "surrogateescape")).hexdigest()


def _named(projects: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if projects is None else tuple(sorted(set(projects)))


def _check_scope(
    store: SyncLog, client: HubClient, projects: tuple[str, ...] | None
) -> Narrowed | None:
    """Refuse a hub that names more projects for a token than it did before: a token's projects
    never change, so a hub doing so is not to be trusted with them (before anything is pushed).
    The first time, they are remembered. Fewer are the hub's to name (an admin narrowed the
    token): returned, and remembered only once the sync went through (``sync_store``), so that
    the sync that says so is one that finished.

    Raises:
        ForbiddenError: the hub now names projects it did not before.
    """
    known, before = store.sync_scope(client.url, _scope_digest(client))
    wider = before is not None and (projects is None or not set(projects) <= set(before))
    if known and wider:
        asked = "every project" if projects is None else ", ".join(sorted(projects))
        raise ForbiddenError(
            f"{client.url} now names {asked} for this token, where it named"
            f" {', '.join(before or ())} before; a token's projects never change, so nothing"
            " was sent. If the hub's admin gave you a new token, sync with that one."
        )
    if not known:
        store.set_sync_scope(client.url, _scope_digest(client), _named(projects))
        return None
    return Narrowed(before) if _named(projects) != before else None


def sync_store(
    store: SyncLog,
    client: HubClient,
    clock: Clock,
    *,
    page_size: int = DEFAULT_PAGE_SIZE,
    progress: Progress = _quiet,
    accepted: Callable[[], None] = lambda: None,
) -> SyncReport:
    """Push then pull until both sides have nothing new for each other. ``accepted`` is called
    once the hub has answered the hello and its projects passed, before anything moves.

    Raises:
        AletheiaError: the hub refused or could not be reached (what was applied stays).
    """
    store_id = store.sync_store_id()
    hello = read_hello(client.url, client.call("/sync/hello", {"store_id": store_id}))
    hub_id, token_id, projects = hello.hub_id, hello.token_id, hello.projects
    page_size = min(page_size, hello.max_records)
    names = None if projects is None else list(projects)
    report = SyncReport(client.url, hub_id, hello.token_name, names)
    report.narrowed = _check_scope(store, client, projects)
    accepted()
    push_cursor, pull_cursor = store.sync_cursors(hub_id, token_id)
    first = (push_cursor, pull_cursor) == (0, 0)  # never pushed to nor pulled from: send all
    push_cursor = _push(
        store, client, report, token_id, push_cursor, projects, page_size, clock, progress, first
    )
    merged_before = report.merged
    _pull(store, client, report, token_id, pull_cursor, projects, page_size, clock, progress)
    if report.merged > merged_before:  # what this store merged is a change of its own: send it
        _push(store, client, report, token_id, push_cursor, projects, page_size, clock, progress)
    if report.narrowed is not None:  # said by this sync: the next one compares with these
        store.set_sync_scope(client.url, _scope_digest(client), _named(projects))
    return report


def _push(
    store: SyncLog,
    client: HubClient,
    report: SyncReport,
    token_id: int,
    cursor: int,
    projects: tuple[str, ...] | None,
    page_size: int,
    clock: Clock,
    progress: Progress,
    everything: bool = False,
) -> int:
    """Send this store's own changes after ``cursor``; returns the new push cursor.
    ``everything``: every item's current version, those pulled too (``as_own``).

    The next page is read while the hub applies the current one; the cursor moves only once
    the hub has answered for the page.
    """
    store_id = store.sync_store_id()

    def export(after: int) -> ExportPage:
        return store.export_changes(
            after=after,
            limit=page_size,
            max_bytes=PAGE_BYTES,
            local_only=not everything,
            exclude_origin=None,
            projects=projects,
        )

    page = export(cursor)
    with ThreadPoolExecutor(max_workers=1) as sender:
        while True:
            sent: Future[dict[str, Any]] | None = None
            _left_out_oversized(store, report, page.oversized)
            for project, count in page.outside.items():  # the hub would refuse them
                report.outside[project] = report.outside.get(project, 0) + count
            records = [record for record in page.records if writable(record, projects)]
            # Held back: this store's own changes (a pulled rule stays the hub's to send).
            report.held_back += sum(
                1
                for record in page.records
                if record["v"][1] == store_id and not writable(record, projects)
            )
            own = [as_own(record, store_id) for record in records]
            records = _screened_own(store, report, own, clock())
            if records:
                body = {"store_id": store_id, "records": records}
                sent = sender.submit(client.call, "/sync/push", body)
            following = export(page.cursor) if page.more else None
            if sent is not None:
                report.merged_at_hub += read_push_merged(sent.result(), len(records))
                report.pushed += len(records)
                report.pages += 1
                progress(f"pushed {len(records)} (page {report.pages})")
            if page.cursor != cursor:
                store.set_push_cursor(report.hub_id, token_id, page.cursor, clock())
                cursor = page.cursor
            if following is None:
                return cursor
            page = following


def _left_out_oversized(store: SyncLog, report: SyncReport, records: list[dict[str, Any]]) -> None:
    """Count the records of this store no page could carry (an earlier release wrote them), as
    the records the hub would refuse: named by their ``#N`` (a rule by its id), as the id is
    not checked."""
    for record in records:
        number = store.sync_item_number(record["kind"], record["key"])
        kind = record["kind"]
        named = f"{kind} #{number}" if number is not None else f"{kind} {record['key']}"
        report.left_out.add(f"record 0 ({named}): {OVERSIZED}")


def _screened_own(
    store: SyncLog, report: SyncReport, records: list[dict[str, Any]], now: int
) -> list[dict[str, Any]]:
    """This store's records as the hub will take them: one it would refuse left out (counted
    in ``report.left_out``, named by its ``#N`` when its id cannot be shown), so that the rest
    of the page still goes; a list's key repaired; a reference to an item no store takes
    dropped, as the hub drops it from a pull (``report.unlinked``: the item is left out, the
    record citing it goes). Sent as they are (the hub checks and redacts them again); a time
    ahead of the clock is the hub's to refuse, naming the clock (``screening``)."""
    dropped = {n: why for n, record in enumerate(records) if (why := dropped_reference(record))}
    positioned = [
        (n, sendable_references(record) if n in dropped else record)
        for n, record in enumerate(records)
    ]

    def number(record: dict[str, Any]) -> str | None:
        found = store.sync_item_number(record["kind"], record["key"])
        return None if found is None else f"{record['kind']} #{found}"

    screened = screen(positioned, now, ANY_TIME, report.left_out, pulled=False, number=number)
    report.repaired += screened.repaired
    for position, (given, _) in zip(screened.positions, screened.passed, strict=True):
        if position in dropped:  # sent so (one left out is counted there); its id passed
            why = dropped[position]
            report.unlinked.add(f"record {position} ({given['kind']} {given['key']}): {why}")
    return [given for given, _ in screened.passed]


def _validated(
    client: HubClient, report: SyncReport, records: list[tuple[int, dict[str, Any]]], now: int
) -> list[dict[str, Any]]:
    """A pulled page checked as the hub checks a pushed one: a hub cannot break this store. A
    record this store refuses is held back (``report.refused_pulled``), the rest applied. The
    skew is doubled: the hub's clock and this one may each be off.

    Raises:
        AletheiaError: a record whose only fault is a time ahead of the clocks (it will pass).
    """
    try:
        screened = screen(records, now, 2 * MAX_SKEW_MS, report.refused_pulled, pulled=True)
    except InvalidInputError as error:
        raise AletheiaError(f"{client.url} sent a bad pull page: {error.message}") from None
    report.repaired += screened.repaired
    return [checked for _, checked in screened.passed]


def _apply_pulled(
    store: SyncLog,
    client: HubClient,
    records: list[dict[str, Any]],
    projects: tuple[str, ...] | None,
    now: int,
    pull_cursor: tuple[str, int, int],
) -> ApplyStats:
    """A pulled page applied with its cursor; one reaching outside the token's projects (a
    hub that is not what it says, or a page changed on the way) is refused, nothing kept."""
    try:
        return store.apply_changes(
            records,
            projects=projects,
            now=now,
            pull_cursor=pull_cursor,
            shared_rules=True,
        )
    except ForbiddenError as error:
        raise AletheiaError(f"{client.url} sent a bad pull page: {error.message}") from None


def as_own(record: dict[str, Any], store_id: str) -> dict[str, Any]:
    """A record as this store pushes it: a version another store made, at the same time but
    this store's (a hub takes only the pushing store's versions). A hub that holds that
    version or a later one keeps what it has (the same words, or newer ones); for the same
    time, the greater origin wins on every store alike, so they stay the same."""
    if record["v"][1] == store_id:
        return record
    return {**record, "v": [record["v"][0], store_id]}


def writable(record: dict[str, Any], projects: tuple[str, ...] | None) -> bool:
    """Whether a token of ``projects`` may push the record: a project-limited one pushes no
    rule for every project or a situation (the hub would refuse the page)."""
    return projects is None or record["kind"] != "rule" or record["data"]["scope_tier"] == "project"


def _pull(
    store: SyncLog,
    client: HubClient,
    report: SyncReport,
    token_id: int,
    cursor: int,
    projects: tuple[str, ...] | None,
    page_size: int,
    clock: Clock,
    progress: Progress,
) -> None:
    """Apply everyone else's changes after ``cursor``, each page with its cursor, within the
    token's ``projects`` as a push is: a page holding anything else is refused whole.

    The next page is fetched while this one is applied.
    """
    store_id = store.sync_store_id()

    def fetch(after: int) -> dict[str, Any]:
        return client.call(
            "/sync/pull", {"store_id": store_id, "cursor": after, "limit": page_size}
        )

    with ThreadPoolExecutor(max_workers=1) as fetcher:
        coming = fetcher.submit(fetch, cursor)
        while True:
            page = read_pull_page(client.url, coming.result(), cursor, page_size)
            cursor, more = page.cursor, page.more
            for reason, count in page.withheld.items():
                report.withheld[reason] = report.withheld.get(reason, 0) + count
            for problem in page.refused:
                report.refused_pulled.add(problem)
            records = _validated(client, report, page.records, clock())
            if more:
                coming = fetcher.submit(fetch, cursor)
            at = (report.hub_id, token_id, cursor)
            stats = _apply_pulled(store, client, records, projects, clock(), at)
            report.pulled += len(records)
            report.applied += stats.applied
            report.merged += stats.merged
            report.pages += 1
            progress(f"pulled {len(records)} (page {report.pages})")
            if not more:
                return
