"""``aletheia doctor --hub-db``: a hub's store, a SQLite file or PostgreSQL, checked from here.

Reachable or not (one line saying why, no password), the schema version it is migrated to, and
how many rows each table holds. Never creates a store: a missing file, or a database without a
store's tables, is reported as missing (a store behind in its migrations is migrated, as the
hub would on start).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aletheia_mem.cli.common import EXIT_CODES, echo, style
from aletheia_mem.errors import AletheiaError, NoStoreError
from aletheia_mem.storage.open import display_target, hub_store_exists, open_hub_store
from aletheia_mem.storage.store_file import as_doctor_tells_it, check_place, misplaced

NO_HUB_STORE = "no hub store here (aletheia mcp-link create --hub-db starts one)"


def check_hub_store(target: Path | str) -> dict[str, Any]:
    """The health of the hub's store at ``target``: ``ok``, ``detail`` and, when it opened,
    its database's facts (``schema``, versions) and ``counts``."""
    shown = display_target(target)
    try:
        if isinstance(target, Path):
            problem = misplaced(target, "--hub-db")  # a file where its folder should be
            if problem is not None:
                raise problem
            check_place(target)  # a folder there is no store, nor a missing one
        if not hub_store_exists(target):  # never made here: a wrong URL gets no tables
            return {"target": shown, "ok": False, "missing": True, "detail": NO_HUB_STORE}
        store = open_hub_store(target)
    except NoStoreError as error:  # a file in the way, or a PostgreSQL database not there
        return {"target": shown, "ok": False, "missing": True, "detail": error.message}
    except AletheiaError as error:
        return {"target": shown, "ok": False, "detail": as_doctor_tells_it(error.message)}
    try:
        info = store.health()
        counts = store.row_counts()
    except AletheiaError as error:
        return {"target": shown, "ok": False, "detail": error.message}
    finally:
        store.close()
    problems = info.get("integrity_check", "ok")  # SQLite's own check; PostgreSQL has none
    ok = problems == "ok"
    detail = "ok" if ok else f"integrity check: {problems}"
    return {**info, "target": shown, "ok": ok, "detail": detail, "counts": counts}


def hub_exit_code(report: dict[str, Any]) -> int:
    if report.get("missing"):
        return EXIT_CODES["no_store"]
    return 0 if report["ok"] else 1


def row_counts(counts: dict[str, int]) -> str:
    """Rows per table as doctor prints them: ``2 memories, 1 rule, 0 episode_requests``."""
    return ", ".join(f"{n} {_singular(table) if n == 1 else table}" for table, n in counts.items())


def _singular(table: str) -> str:
    """A table's name for one row: memories, memory; rules, rule; audit stays."""
    if table.endswith("ies"):
        return table[:-3] + "y"
    return table.removesuffix("s")


def print_hub_report(report: dict[str, Any]) -> None:
    """Two lines when the store opened; one line saying what is wrong when it did not."""
    title = style("Hub store", bold=True)
    if "schema" not in report:
        problem = style("PROBLEM", fg="red", bold=True)
        where = "" if report["target"] in report["detail"] else f"  {report['target']}"
        echo(f"{title}{where}  {problem}  {report['detail']}")
        return
    mark = style("ok", fg="green") if report["ok"] else style("PROBLEM", fg="red", bold=True)
    echo(f"{title}  {report['target']}  {mark}")
    if "server_version" in report:
        engine = f"PostgreSQL {report['server_version']}, {report['database_size_bytes']} bytes"
    else:
        engine = f"SQLite {report['sqlite_version']}, {report['journal_mode']} journal"
    echo(f"  {engine}; schema {report['schema']}; {row_counts(report['counts'])}")
    if not report["ok"]:
        echo(f"  {report['detail']}")
