"""``aletheia audit``: who called what on the hub, when, on which project, and how it went."""

from __future__ import annotations

from pathlib import Path

import click

from aletheia_mem.cli.common import (
    ITEM_ID,
    Count,
    echo,
    emit_json,
    existing_store,
    handles_errors,
    json_option,
    table,
)
from aletheia_mem.cli.mcp_link import hub_db_of, hub_db_option
from aletheia_mem.cli.terminal import one_line_safe
from aletheia_mem.config import load_settings
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.entries import AuditPage, AuditQuery
from aletheia_mem.storage.open import open_hub_store, open_store
from aletheia_mem.timefmt import format_instant


def shown(text: str | None) -> str | None:
    """A field as the audit prints it: every character that could move the cursor, start an
    escape sequence or reorder text becomes its escape (``\\n``, ``\\x1b``, ``\\u202e``), so
    what a client sent can never forge a row."""
    return None if text is None else one_line_safe(text)


def _store_in_use() -> Path | str:
    """``--local``: the store the CLI and the servers use (``ALETHEIA_HUB_DB``, else the data
    folder's), which must exist."""
    return existing_store(load_settings())


@click.command("audit")
@hub_db_option
@click.option(
    "--local", is_flag=True, help="Read the store the CLI uses instead (its dismiss and restore)."
)
@click.option("--limit", type=Count(1, 10_000), default=50, show_default=True)
@click.option(
    "--offset",
    type=Count(0, 2**63 - 1),
    default=0,
    show_default=True,
    help="Skip this many of the newest rows: a later page.",
)
@click.option(
    "--upto",
    type=ITEM_ID,
    help="Only rows with ids up to this one: the bound a page's note gives its next page, so"
    " that rows written meanwhile push none onto it twice.",
)
@click.option("--token", "actor", help="Only this token's (or caller's) rows.")
@click.option("--tool", help="Only calls of this tool or events of this kind.")
@json_option
@handles_errors
def audit(
    hub_db: str | None,
    local: bool,
    limit: int,
    offset: int,
    upto: int | None,
    actor: str | None,
    tool: str | None,
    as_json: bool,
) -> None:
    """The newest audit rows: time, token, tool, project, result (ok, error, refused); a page
    at a time, with a note that gives the next page's --offset and --upto.

    Arguments of calls are never recorded, but a dismissal's reason (redacted, at most 300
    characters, as the item keeps it); every field is printed with control characters
    escaped.
    """
    if local:
        store: Store = open_store(_store_in_use())
    else:
        store = open_hub_store(hub_db_of(hub_db, create=False))
    try:
        found = store.audit_page(AuditQuery(limit, offset, actor, tool, upto=upto))
    finally:
        store.close()
    # The store reads an offset past the end as the last row (the Audit page's "older="); a
    # command line asking past the end gets nothing, as search does.
    rows = found.rows if found.offset == offset else []
    note = _page_note(found, offset, len(rows), limit)
    if as_json:
        emit_json(
            [
                {
                    "at": format_instant(row.at),
                    "token": shown(row.actor),
                    "tool": shown(row.tool),
                    "project": shown(row.project),
                    "result": shown(row.result),
                    "detail": shown(row.detail),
                }
                for row in rows
            ]
        )
        if note:
            echo(note, err=True)
        return
    if not found.total:
        echo(_none_found(actor, tool, upto))
        return
    if rows:
        echo(
            table(
                ["TIME", "TOKEN", "TOOL", "PROJECT", "RESULT", "DETAIL"],
                [
                    [
                        format_instant(row.at),
                        shown(row.actor) or "",
                        shown(row.tool) or "",
                        shown(row.project) or "-",
                        shown(row.result) or "",
                        shown(row.detail) or "",
                    ]
                    for row in rows
                ],
            )
        )
    if note:
        echo(note)


def _page_note(found: AuditPage, offset: int, shown_rows: int, limit: int) -> str | None:
    """Which rows a page holds of how many, and the options of the next page (None: the
    page holds every row)."""
    if not found.total or (offset == 0 and shown_rows == found.total):
        return None
    if not shown_rows:
        return f"No more audit rows: --offset {offset:,} is past the {found.total:,} that match."
    first, last = offset + 1, offset + shown_rows
    note = f"Rows {first:,} to {last:,} of {found.total:,}, newest first."
    if last < found.total:
        following = min(limit, found.total - last)
        note += (
            f" The next {following:,}: the same command with --offset {last}"
            f" --upto {found.newest_id}."
        )
    return note


def _none_found(actor: str | None, tool: str | None, upto: int | None) -> str:
    """What an empty answer means: no rows at all, or none that the filter matched."""
    filters = (("token", actor), ("tool", tool), ("upto", None if upto is None else str(upto)))
    named = [f"--{option} {shown(value)}" for option, value in filters if value is not None]
    if not named:
        return "No audit rows yet."
    return f"No audit rows match {' and '.join(named)}."
