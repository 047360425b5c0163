"""``aletheia doctor``: is the store healthy, and do the tools' entries reach a working server?"""

from __future__ import annotations

import os
import platform
import sqlite3
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import click

from aletheia_mem import __version__
from aletheia_mem.cli.common import (
    EXIT_CODES,
    cli_settings,
    echo,
    emit_json,
    json_option,
    misplaced_store,
    style,
)
from aletheia_mem.cli.doctor_hooks import HookCheck, check_hooks
from aletheia_mem.cli.doctor_hosts import HostCheck, check_hosts
from aletheia_mem.cli.hub_doctor import (
    NO_HUB_STORE,
    check_hub_store,
    hub_exit_code,
    print_hub_report,
    row_counts,
)
from aletheia_mem.config import (
    CONFIG_FILE_NAME,
    Settings,
    data_dir,
    hub_target,
    load_excluded_projects,
    semantic_enabled,
    store_chosen_by,
)
from aletheia_mem.config import STORE_VARIABLE as HUB_DB
from aletheia_mem.errors import AletheiaError, ConfigError, InvalidInputError
from aletheia_mem.search.semantic.model import INSTALL_HINT
from aletheia_mem.search.semantic.status import semantic_status
from aletheia_mem.storage.open import open_local_store
from aletheia_mem.storage.store_file import (
    RESTORE_STEP,
    as_doctor_tells_it,
    check_place,
    disk_full,
    open_to_others,
    store_problem,
)


def _versions(store_info: dict[str, Any]) -> dict[str, str]:
    found = {"aletheia": __version__, "python": platform.python_version()}
    server = store_info.get("server_version")
    if server and "sqlite_version" not in store_info:  # a PostgreSQL store: no SQLite in use
        found["postgresql"] = str(server).split()[0]
    elif not str(store_info.get("path", "")).startswith(("postgresql:", "postgres:")):
        # the library's own version when no store file opened (none yet, or a damaged one)
        found["sqlite"] = str(store_info.get("sqlite_version", sqlite3.sqlite_version))
    for package in ("click", "tomlkit"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "missing"
    return found


def check_store_in_use(settings: Settings) -> dict[str, Any]:
    """The store the commands and servers use, checked; ``chosen_by`` names the variable that
    chose it (``ALETHEIA_HUB_DB`` wins over ``ALETHEIA_DATA_DIR``), or ``default``."""
    misplaced = misplaced_store(settings)  # a file where the data folder should be
    report: dict[str, Any]
    if misplaced is not None:
        report = {"path": str(settings.store), "ok": False, "missing": True}
        report["detail"] = misplaced.message
    elif isinstance(settings.store, Path):
        report = check_store(settings.store, not_created(settings))
    else:
        report = check_database(settings.store)
    report["detail"] = as_doctor_tells_it(str(report["detail"]))  # this is doctor already
    return {**report, "chosen_by": store_chosen_by()}


def check_database(url: str) -> dict[str, Any]:
    """A PostgreSQL store: reachable, migrated, its row counts (as ``doctor --hub-db``)."""
    report = check_hub_store(url)
    if report["detail"] == NO_HUB_STORE:  # a database without a store's tables
        # ALETHEIA_HUB_DB names the hub's store (docs/scale.md) as well as the CLI's: both ways
        report["detail"] = (
            "the database has no store yet: aletheia mcp-link create starts one for a hub"
            " (aletheia-sync serves it); a save (aletheia save) starts one too, for the CLI and"
            " the tools that use it."
        )
    return {**report, "path": report["target"]}


def not_created(settings: Settings) -> str:
    """What doctor says of a store not made yet: nothing to fix, the first save makes it (and
    where its path came from, when a variable named it: a mistyped one is found here)."""
    variable = settings.store_variable
    named = os.environ.get(variable, "").strip()
    detail = (
        "the first save makes it (aletheia save, or a tool's save_memory); each tool's entry is"
        " started on a throwaway store until then"
    )
    if named:
        detail += f'; {variable} is "{named}": check it if you expected a store there'
    return detail


def check_store(db_path: Path, later: str) -> dict[str, Any]:
    """Open the store (migrating it), run SQLite's integrity check and count its contents;
    never create one. One not made yet is no problem (``exists`` false; ``later``: what to say
    of it)."""
    try:
        if not check_place(db_path):  # a folder there is no store, nor a missing one
            return {"path": str(db_path), "ok": True, "exists": False, "detail": later}
        store = open_local_store(db_path)  # SQLite's own checks: integrity, journal, tables
    except AletheiaError as error:
        return {"path": str(db_path), "ok": False, "detail": error.message}
    try:
        info = store.health()
        counts = {table: store.count_rows(table) for table in store.DATA_TABLES}
    except sqlite3.Error as error:
        problem = store_problem(db_path, error)
        detail = problem.message if problem else f"cannot be read: {error}"
        return {"path": str(db_path), "ok": False, "detail": detail}
    finally:
        store.close()
    intact = info["integrity_check"] == "ok"
    read_only = not all(os.access(place, os.W_OK) for place in (db_path, db_path.parent))
    detail = "ok" if intact else f"integrity check: {info['integrity_check']}. {RESTORE_STEP}."
    if intact and read_only:
        detail = (
            f"The store {db_path} is read-only for this user: it reads, but saving fails. Make"
            " the file and its folder writable (or point ALETHEIA_DATA_DIR elsewhere)."
        )
    full = intact and not read_only and disk_full(db_path)
    if full:
        detail = (
            f"The disk that holds the store {db_path} is full (no space left): it reads, but"
            " saving fails. Free some space on it."
        )
    return {
        "open_to_others": open_to_others(db_path),
        "path": str(db_path),
        "ok": intact and not read_only and not full,
        "read_only": read_only,
        "detail": detail,
        "schema": info["schema"],
        "counts": counts,
        **info,
    }


_MARKS = {
    "ok": ("ok", "green"),
    "warning": ("WARNING", "yellow"),  # works with a host, but not as it should
    "remote": ("remote", "cyan"),
    "disabled": ("disabled", "yellow"),  # the host does not start it
    "shadowed": ("shadowed", "white"),  # another scope's entry comes first
    "not-configured": ("-", "white"),
    "broken": ("BROKEN", "red"),
    "unreadable": ("UNREADABLE", "red"),
}


@click.command()
@click.option(
    "--hub-db",
    help="Check a hub's store instead (a file or a postgresql:// URL): reachable, migrated,"
    " its row counts.",
)
@json_option
def doctor(hub_db: str | None, as_json: bool) -> None:
    """Check the store, the versions, and which tools are connected to a working server.

    Each tool's server is started as the tool would start it, asked for its tools, and ended
    with every process it started (before the first save, on a throwaway store: a store not
    created yet is no problem). One that answers but does not exit when its input closes is a
    warning, which leaves the exit code as it is. A remote entry (--http) is called at its URL
    with the token its entry names, which is never shown.
    """
    if hub_db is not None:
        report = check_hub_store(hub_target(hub_db))
        if as_json:
            emit_json(report)
        else:
            print_hub_report(report)
        raise SystemExit(hub_exit_code(report))
    settings = cli_settings()
    store = check_store_in_use(settings)
    versions = _versions(store)
    hosts = check_hosts(Path.cwd(), settings.store)
    hooks = check_hooks(Path.cwd())
    config = check_config()
    db_path = settings.store if "counts" in store and isinstance(settings.store, Path) else None
    semantic = check_semantic(db_path, local=isinstance(settings.store, Path))
    healthy = (
        store["ok"]
        and config["ok"]
        and "problem" not in semantic
        and not any(check.problem for check in hosts)
        and not any(c.status == "broken" for scopes in hooks.values() for c in scopes.values())
    )
    code = EXIT_CODES["no_store"] if store.get("missing") else 0 if healthy else 1
    # per host and scope: whether Aletheia's hooks are there and work
    installed = {
        host: {scope: check.status == "ok" for scope, check in scopes.items()}
        for host, scopes in hooks.items()
    }
    if as_json:
        emit_json(
            {
                "ok": healthy,
                "store": store,
                "config": config,
                "versions": versions,
                "hosts": [check.__dict__ for check in hosts],
                "hooks": installed,
                "hook_checks": {
                    host: {scope: check.__dict__ for scope, check in scopes.items()}
                    for host, scopes in hooks.items()
                },
                "claude_code_hooks": installed["claude-code"],  # as doctor reported it before
                "semantic": semantic,
            }
        )
    else:
        _print_report(store, config, versions, hosts, hooks)
        _print_semantic(semantic)
    raise SystemExit(code)


def check_config() -> dict[str, Any]:
    """``<data dir>/config.json``: absent or valid is ok; an invalid one stops every command."""
    path = data_dir(os.environ) / CONFIG_FILE_NAME
    try:
        load_excluded_projects()
    except ConfigError as error:  # also a folder there, an unreadable file, one not UTF-8
        return {"path": str(path), "ok": False, "detail": error.message}
    return {"path": str(path), "ok": True, "detail": "ok" if path.exists() else "none"}


def check_semantic(db_path: Path | None, *, local: bool) -> dict[str, Any]:
    """The semantic extra's status, with a ``problem`` when it was asked for and cannot work
    (a mistyped ``ALETHEIA_SEMANTIC``, no model, a store that keeps no vectors)."""
    try:
        enabled = semantic_enabled()
    except InvalidInputError as error:
        return {**semantic_status(db_path, False), "problem": error.message}
    status = semantic_status(db_path, enabled)
    if enabled and not status["model_found"]:
        status["problem"] = (
            "ALETHEIA_SEMANTIC is on but the embedding model is not installed; search is lexical"
            f" only. Install it: {INSTALL_HINT}"
        )
    elif enabled and not local:
        status["problem"] = (
            "ALETHEIA_SEMANTIC is on but the store is a PostgreSQL database, which keeps no"
            " vectors; search is lexical only."
        )
    return status


def _print_report(
    store: dict[str, Any],
    config: dict[str, Any],
    versions: dict[str, str],
    hosts: list[HostCheck],
    hooks: dict[str, dict[str, HookCheck]],
) -> None:
    mark = style("ok", fg="green") if store["ok"] else style("PROBLEM", fg="red", bold=True)
    if store.get("exists") is False:
        mark = style("not created yet", fg="cyan")
    chosen = f" (from {HUB_DB})" if store["chosen_by"] == HUB_DB else ""
    echo(style("Store", bold=True) + f"  {store['path']}{chosen}  {mark}")
    if store["ok"] and "counts" in store:
        counts = row_counts(store["counts"])
        engine = (
            f"integrity ok; schema {store['schema']}, {store['journal_mode']} journal"
            if "journal_mode" in store
            else f"PostgreSQL {store['server_version']}; schema {store['schema']}"
        )
        echo(f"  {engine}; {counts}")
    else:
        echo(f"  {'no store here: ' if store.get('missing') else ''}{store['detail']}")
    for item in store.get("open_to_others", []):
        echo(
            style(
                f"  warning: {item}; others may read it (chmod 700 the folder, 600 files)",
                fg="yellow",
            )
        )
    if not config["ok"]:
        problem = style("PROBLEM", fg="red", bold=True)
        echo(style("Config", bold=True) + f"  {problem}  {config['detail']}")
    echo(style("Versions", bold=True) + "  " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    echo(style("Tools", bold=True))
    for check in hosts:
        label, colour = _MARKS[check.status]
        echo(
            f"  {check.host:<15} {check.scope:<8} {style(label.ljust(10), fg=colour)}"
            f" {check.detail}  ({check.path})"
        )
    echo(style("Hooks", bold=True) + "  " + "; ".join(_hooks_line(h, s) for h, s in hooks.items()))
    for host, scopes in hooks.items():
        for scope, hook in scopes.items():
            if hook.status in ("broken", "disabled"):
                label, colour = _MARKS[hook.status]
                echo(
                    f"  {host:<15} {scope:<8} {style(label.ljust(10), fg=colour)}"
                    f" {hook.detail}  ({hook.path})"
                )


def _hooks_line(host: str, scopes: dict[str, HookCheck]) -> str:
    """``claude-code: user, project scope``; when a scope's hooks do not work, each scope
    named with its own mark: ``claude-code: user scope (broken), project scope``."""
    installed = {scope: check.status for scope, check in scopes.items() if check.installed}
    if not installed:
        return f"{host}: not installed"
    if all(status == "ok" for status in installed.values()):
        return f"{host}: " + ", ".join(installed) + " scope"
    return f"{host}: " + ", ".join(
        f"{scope} scope" + ("" if status == "ok" else f" ({status})")
        for scope, status in installed.items()
    )


def _print_semantic(status: dict[str, Any]) -> None:
    switch = "on" if status["enabled"] else "off (ALETHEIA_SEMANTIC=on turns it on)"
    problem = status.get("problem")
    if problem and not status["enabled"]:  # a value that is neither on nor off
        switch = "off until ALETHEIA_SEMANTIC says on or off"
    if not status["model_found"]:
        echo(style("Semantic", bold=True) + f"  model not installed ({status['hint']}); {switch}")
    else:
        echo(style("Semantic", bold=True) + f"  model {status['model']} found; {switch}")
    if problem:
        echo(f"  {style('PROBLEM', fg='red', bold=True)}  {problem}")
    if status["model_found"]:
        _print_coverage(status)


def _print_coverage(status: dict[str, Any]) -> None:
    if "memories" in status:
        with_vectors, memories = status["memories_with_vectors"], status["memories"]
        echo(f"  {with_vectors} of {memories} memories have vectors")
        if with_vectors < memories:  # the worker starts at a server's first save or search
            echo(
                "  (a server with ALETHEIA_SEMANTIC=on embeds the rest after its first save or"
                " search in words; until then search finds them by their words only)"
            )
