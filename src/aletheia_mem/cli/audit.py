"""``aletheia audit``: who called what on the hub, when, on which project, and how it went."""

from __future__ import annotations

from pathlib import Path

import click

from aletheia_mem.cli.common import (
    echo,
    emit_json,
    handles_errors,
    json_option,
    local_store_hint,
    require_store,
    table,
)
from aletheia_mem.cli.mcp_link import hub_db_of, hub_db_option
from aletheia_mem.config import load_settings
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.timefmt import format_instant


@click.command("audit")
@hub_db_option
@click.option(
    "--local", is_flag=True, help="Read this machine's store instead (its dismiss and restore)."
)
@click.option("--limit", type=click.IntRange(1, 10_000), default=50, show_default=True)
@click.option("--token", "actor", help="Only this token's (or caller's) rows.")
@click.option("--tool", help="Only calls of this tool or events of this kind.")
@json_option
@handles_errors
def audit(
    hub_db: Path | None,
    local: bool,
    limit: int,
    actor: str | None,
    tool: str | None,
    as_json: bool,
) -> None:
    """The newest audit rows: time, token, tool, project, result (ok, error, refused).

    Arguments of calls are never recorded.
    """
    if local:
        path = require_store(load_settings().db_path, local_store_hint())
    else:
        path = hub_db_of(hub_db, create=False)
    store = SqliteStore(path)
    try:
        rows = store.list_audit_page(limit, actor, tool)
    finally:
        store.close()
    if as_json:
        emit_json(
            [
                {
                    "at": format_instant(row.at),
                    "token": row.actor,
                    "tool": row.tool,
                    "project": row.project,
                    "result": row.result,
                    "detail": row.detail,
                }
                for row in rows
            ]
        )
        return
    if not rows:
        echo("No audit rows yet.")
        return
    echo(
        table(
            ["TIME", "TOKEN", "TOOL", "PROJECT", "RESULT", "DETAIL"],
            [
                [
                    format_instant(row.at),
                    row.actor,
                    row.tool,
                    row.project or "-",
                    row.result,
                    row.detail or "",
                ]
                for row in rows
            ],
        )
    )
