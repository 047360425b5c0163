"""The Memories pages and actions: path, handler, and whether it changes anything (POST)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from aletheia_mem.domain.dismissals import MAX_REASON_LENGTH
from aletheia_mem.domain.echoes import echoed, redacted_echo
from aletheia_mem.domain.vocabulary import MEMORY_TYPES
from aletheia_mem.errors import NotFoundError
from aletheia_mem.web import memories
from aletheia_mem.web.base import (
    Handler,
    Ui,
    done_redirect,
    redirect,
    safe_next,
    signed_address,
    signed_done,
    whole_number,
)
from aletheia_mem.web.project_choice import project_choice
from aletheia_mem.web.render import fragment, page

DONE_NOTICES = {
    "dismiss": ("dismissed", "restore"),
    "restore": ("restored", "dismiss"),
    "pin": ("pinned", "unpin"),
    "unpin": ("unpinned", "pin"),
}
NOT_DISMISSED = "not-dismissed"
ALREADY_DISMISSED = "already-dismissed"
# What a Restore or a Dismiss that found nothing to do says (the restore_memory tool's words).
NOTHING_DONE = {
    NOT_DISMISSED: "Nothing to restore: memory #{} is not dismissed.",
    ALREADY_DISMISSED: "Nothing to dismiss: memory #{} is already dismissed.",
}
MAX_REASON = MAX_REASON_LENGTH  # as the Reason field takes, and the API


def _memory_id(request: Request) -> int:
    value = str(request.path_params["memory_id"])
    memory_id = whole_number(value, 15)
    if memory_id is None:
        raise NotFoundError(f"A memory's id is a number: “{echoed(value)}” names no memory.")
    return memory_id


def _more_query(filters: memories.Filters, listing: memories.Listing) -> str:
    """The query string of the next page of the same listing: bound to the memories its first
    page saw and, for a search, ranked at the time it was."""
    more = {**filters.values, "offset": str(filters.offset + memories.PAGE_SIZE)}
    if filters.dismissed:
        more["dismissed"] = "1"
    if listing.upto is not None:
        more["upto"] = str(listing.upto)
    if listing.at is not None:
        more["at"] = str(listing.at)
    return urlencode(more)


def _results_label(filters: memories.Filters) -> str:
    if filters.dismissed:
        return "Dismissed memories, newest first."
    if filters.searching:
        return "Search results."
    if not filters.live:
        return "Oldest first." if filters.values["order"] == "date_asc" else "Newest first."
    return "Newest first; new memories appear here as they are saved."


def memories_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    filters = memories.Filters.of(request.query_params)
    listing = memories.list_memories(ui.app, filters)
    return page(
        request,
        "memories.html",
        section="Memories",
        filters=filters,
        listing=listing,
        projects=project_choice(request, ui.app.store.project_names),
        types=MEMORY_TYPES,
        orders=memories.ORDERS,
        more_query=_more_query(filters, listing),
        results_label=_results_label(filters),
        live=filters.live,
        page_size=memories.PAGE_SIZE,
        notice=filters.notice,
    )


def memory_rows(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    """Rows for the script: the live feed (``after``) or a search typed in the box."""
    filters = memories.Filters.of(request.query_params)
    after = whole_number(request.query_params.get("after", ""), 15)
    if after is not None:
        rows = memories.newer_than(ui.app, filters, after)
        response = fragment(
            request, "memory_rows.html", rows=rows or [], facts=[], empty_reason=None
        )
        if rows is None:  # more than a page arrived: the script offers the list anew
            response.headers["x-feed-more"] = "1"
        return response
    listing = memories.list_memories(ui.app, filters)
    response = fragment(
        request,
        "memory_rows.html",
        rows=listing.memories,
        facts=listing.facts,
        empty_reason=listing.empty_reason or ("No memories." if not listing.memories else None),
    )
    # What the script updates around the rows: the label above them and the More link.
    response.headers["x-results-label"] = _results_label(filters)
    response.headers["x-more-query"] = _more_query(filters, listing) if listing.more else ""
    return response


def memory_page(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    memory_id = _memory_id(request)
    detail = memories.memory_detail(ui.app, memory_id)
    # Only at an address this browser's own action led to (a link made elsewhere shows none);
    # it keeps its notice (Back, a reload), shown only while it is still true.
    done_key = signed_done(request)
    true_now = _still_true(done_key, detail["memory"])
    done = DONE_NOTICES.get(done_key) if true_now else None
    nothing = NOTHING_DONE.get(done_key) if true_now else None
    return page(
        request,
        "memory.html",
        section="Memories",
        done=done,
        # Undo of a Restore dismisses again for the reason it was dismissed for.
        undo_reason=_signed_reason(request),
        max_reason=MAX_REASON,
        notice=nothing.format(memory_id) if nothing else None,
        **detail,
    )


def _signed_reason(request: Request) -> str:
    """The reason this page's Restore sent in its redirect: one a link made elsewhere holds
    carries no valid signature, and is not used."""
    reason = request.query_params.get("reason", "")[:MAX_REASON]
    return reason if reason and signed_address(request) else ""


def _still_true(done: str, memory: dict[str, Any]) -> bool:
    dismissed = memory["dismissed_at"] is not None
    return {
        "dismiss": dismissed,
        "restore": not dismissed,
        "pin": bool(memory["pinned"]),
        "unpin": not memory["pinned"],
        NOT_DISMISSED: not dismissed,
        ALREADY_DISMISSED: dismissed,
    }.get(done, False)


def memory_action(ui: Ui, request: Request, form: dict[str, str]) -> Response:
    memory_id = _memory_id(request)
    action = str(request.path_params["action"])
    if action not in memories.ACTIONS:
        raise NotFoundError(f"No action {redacted_echo(action)!r}.")
    reason = memories.act_on_memory(ui.app, memory_id, action, form.get("reason", ""))
    nothing = NOT_DISMISSED if action == "restore" else ALREADY_DISMISSED
    done = [("done", action if reason is not None else nothing)]
    if reason:  # a restored memory's: its Undo dismisses it again for the same reason
        done.append(("reason", reason[:MAX_REASON]))
    back = safe_next(form.get("next"), f"/memories/{memory_id}")
    if not back.startswith("/memories/"):
        return redirect(back)
    return done_redirect(request, back, done)


PAGES: tuple[tuple[str, Handler, bool], ...] = (
    ("/", memories_page, False),
    ("/memories/rows", memory_rows, False),
    ("/memories/{memory_id}", memory_page, False),
    ("/memories/{memory_id}/{action}", memory_action, True),
)
