"""``aletheia audit``: who called what on the hub, when, on which project, and how it went."""

from __future__ import annotations

from pathlib import Path

import click

from aletheia_mem.cli.common import (
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
@click.option("--token", "actor", help="Only this token's (or caller's) rows.")
@click.option("--tool", help="Only calls of this tool or events of this kind.")
@json_option
@handles_errors
def audit(
    hub_db: str | None,
    local: bool,
    limit: int,
    actor: str | None,
    tool: str | None,
    as_json: bool,
) -> None:
    """The newest audit rows: time, token, tool, project, result (ok, error, refused).

    Arguments of calls are never recorded, but a dismissal's reason (redacted, at most 300
    characters, as the item keeps it); every field is printed with control characters
    escaped.
    """
    if local:
        store: Store = open_store(_store_in_use())
    else:
        store = open_hub_store(hub_db_of(hub_db, create=False))
    try:
        rows = store.list_audit_page(limit, actor, tool)
    finally:
        store.close()
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
        return
    if not rows:
        echo(_none_found(actor, tool))
        return
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


def _none_found(actor: str | None, tool: str | None) -> str:
    """What an empty answer means: no rows at all, or none that the filter matched."""
    filters = (("token", actor), ("tool", tool))
    named = [f"--{option} {shown(value)}" for option, value in filters if value is not None]
    if not named:
        return "No audit rows yet."
    return f"No audit rows match {' and '.join(named)}."
