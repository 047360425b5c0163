"""``aletheia doctor``: is the store healthy, and do the tools' entries reach a working server?"""

from __future__ import annotations

import json
import os
import platform
import sqlite3
import subprocess
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import click

from aletheia_mem import __version__
from aletheia_mem.cli.clients import ConfigFileError, get_entry, read_text
from aletheia_mem.cli.common import (
    EXIT_CODES,
    cli_settings,
    echo,
    emit_json,
    json_option,
    local_store_hint,
    style,
)
from aletheia_mem.cli.hooks import HOOK_MARKS, claude_settings_path
from aletheia_mem.cli.hosts import HOSTS, Host, Scope
from aletheia_mem.cli.hub_doctor import (
    NO_HUB_STORE,
    check_hub_store,
    hub_exit_code,
    print_hub_report,
    row_counts,
)
from aletheia_mem.config import STORE_VARIABLE as HUB_DB
from aletheia_mem.config import Settings, hub_target, semantic_enabled
from aletheia_mem.errors import AletheiaError
from aletheia_mem.search.semantic.status import semantic_status
from aletheia_mem.storage.open import open_local_store
from aletheia_mem.storage.store_file import RESTORE_HINT, open_to_others, store_problem

SERVER_CHECK_SECONDS = 10
_HANDSHAKE = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "aletheia-doctor", "version": __version__},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]


@dataclass(frozen=True)
class HostCheck:
    host: str
    scope: Scope
    path: str
    status: str  # not-configured, ok, broken, remote, unreadable
    detail: str

    @property
    def problem(self) -> bool:
        return self.status in ("broken", "unreadable")


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
    chose it (``ALETHEIA_HUB_DB`` wins over ``ALETHEIA_DATA_DIR``)."""
    if isinstance(settings.store, Path):
        report = check_store(settings.store, local_store_hint(settings))
    else:
        report = check_database(settings.store)
    return {**report, "chosen_by": settings.store_variable}


def check_database(url: str) -> dict[str, Any]:
    """A PostgreSQL store: reachable, migrated, its row counts (as ``doctor --hub-db``)."""
    report = check_hub_store(url)
    if report["detail"] == NO_HUB_STORE:  # a database without a store's tables
        report["detail"] = "the database has no store yet; save something first to start one."
    return {**report, "path": report["target"]}


def check_store(db_path: Path, hint: str) -> dict[str, Any]:
    """Open the store (migrating it), run SQLite's integrity check and count its contents;
    never create one (``hint``: where a missing store's path came from)."""
    if not db_path.is_file():
        return {"path": str(db_path), "ok": False, "missing": True, "detail": hint}
    try:
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
    ok = info["integrity_check"] == "ok"
    return {
        "open_to_others": open_to_others(db_path),
        "path": str(db_path),
        "ok": ok,
        "detail": "ok" if ok else f"integrity check: {info['integrity_check']}. {RESTORE_HINT}",
        "schema": info["schema"],
        "counts": counts,
        **info,
    }


def _launch_spec(host: Host, entry: Any) -> tuple[list[str], dict[str, str]] | str:
    """The command line and env of a stdio entry, or a description of a remote one."""
    if not isinstance(entry, dict):
        return "the entry is not an object"
    url = entry.get("url") or entry.get("serverUrl") or entry.get("httpUrl")
    if url:
        return f"remote {url}"
    if host.name == "opencode":
        command = entry.get("command")
        env = entry.get("environment") or {}
        argv = [str(part) for part in command] if isinstance(command, list) else []
    else:
        args = entry.get("args") or []
        env = entry.get("env") or {}
        argv = [str(entry.get("command") or ""), *(str(arg) for arg in args)]
    if not argv or not argv[0]:
        return "the entry has no command"
    return argv, {str(k): str(v) for k, v in dict(env).items()}


def probe_server(argv: list[str], env: dict[str, str]) -> tuple[bool, str]:
    """Start the server as a host would (minimal env) and list its tools."""
    base = {key: os.environ[key] for key in ("PATH", "HOME") if key in os.environ}
    payload = "".join(json.dumps(message) + "\n" for message in _HANDSHAKE)
    try:
        result = subprocess.run(  # noqa: S603 - the command is the user's own config entry
            argv,
            input=payload,
            capture_output=True,
            text=True,
            env={**base, **env},
            timeout=SERVER_CHECK_SECONDS,
            check=False,
        )
    except FileNotFoundError:
        return False, f"{argv[0]} does not exist"
    except PermissionError:
        return False, f"{argv[0]} is not executable"
    except subprocess.TimeoutExpired:
        return False, f"no answer within {SERVER_CHECK_SECONDS} s"
    for line in result.stdout.splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == 2 and "result" in message:
            tools = message["result"].get("tools", [])
            return True, f"server answers ({len(tools)} tools)"
    error = (result.stderr.strip().splitlines() or ["no reply"])[-1]
    return False, f"server did not answer tools/list: {error[:200]}"


def check_host(host: Host, scope: Scope, path: Path) -> HostCheck:
    def result(status: str, detail: str) -> HostCheck:
        return HostCheck(host.name, scope, str(path), status, detail)

    if not path.exists():
        return result("not-configured", "no config file")
    try:
        entry = get_entry(read_text(path), host.fmt, host.entry_path())
    except ConfigFileError as error:
        return result("unreadable", str(error))
    if entry is None:
        return result("not-configured", "no aletheia entry")
    spec = _launch_spec(host, entry)
    if isinstance(spec, str):
        return result("remote" if spec.startswith("remote") else "broken", spec)
    ok, detail = probe_server(*spec)
    return result("ok" if ok else "broken", detail)


def check_hosts(cwd: Path) -> list[HostCheck]:
    checks = []
    for host in HOSTS:
        checks.append(check_host(host, "user", host.config_path("user", cwd)))
        if host.project_file is not None:
            project_path = host.config_path("project", cwd)
            if project_path.exists():
                checks.append(check_host(host, "project", project_path))
    return checks


def check_hooks(cwd: Path) -> dict[str, bool]:
    found: dict[str, bool] = {}
    scopes: tuple[Scope, ...] = ("user", "project")
    for scope in scopes:
        try:
            text = read_text(claude_settings_path(scope, cwd))
        except ConfigFileError:  # told with the hosts' checks; no hooks can be read there
            text = ""
        found[scope] = any(mark in text for mark in HOOK_MARKS)
    return found


_MARKS = {
    "ok": ("ok", "green"),
    "remote": ("remote", "cyan"),
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
    """Check the store, the versions, and which tools are connected to a working server."""
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
    hosts = check_hosts(Path.cwd())
    hooks = check_hooks(Path.cwd())
    db_path = settings.store if store["ok"] and isinstance(settings.store, Path) else None
    semantic = semantic_status(db_path, semantic_enabled())
    healthy = store["ok"] and not any(check.problem for check in hosts)
    code = EXIT_CODES["no_store"] if store.get("missing") else 0 if healthy else 1
    if as_json:
        emit_json(
            {
                "ok": healthy,
                "store": store,
                "versions": versions,
                "hosts": [check.__dict__ for check in hosts],
                "claude_code_hooks": hooks,
                "semantic": semantic,
            }
        )
    else:
        _print_report(store, versions, hosts, hooks)
        _print_semantic(semantic)
    raise SystemExit(code)


def _print_report(
    store: dict[str, Any], versions: dict[str, str], hosts: list[HostCheck], hooks: dict[str, bool]
) -> None:
    mark = style("ok", fg="green") if store["ok"] else style("PROBLEM", fg="red", bold=True)
    chosen = f" (from {HUB_DB})" if store["chosen_by"] == HUB_DB else ""
    echo(style("Store", bold=True) + f"  {store['path']}{chosen}  {mark}")
    if store["ok"]:
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
    echo(style("Versions", bold=True) + "  " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    echo(style("Tools", bold=True))
    for check in hosts:
        label, colour = _MARKS[check.status]
        echo(
            f"  {check.host:<15} {check.scope:<8} {style(label.ljust(10), fg=colour)}"
            f" {check.detail}  ({check.path})"
        )
    installed = [scope for scope, present in hooks.items() if present]
    echo(
        style("Claude Code hooks", bold=True)
        + "  "
        + (", ".join(installed) + " scope" if installed else "not installed")
    )


def _print_semantic(status: dict[str, Any]) -> None:
    switch = "on" if status["enabled"] else "off (ALETHEIA_SEMANTIC=on turns it on)"
    if not status["model_found"]:
        echo(style("Semantic", bold=True) + f"  model not installed ({status['hint']}); {switch}")
        return
    echo(style("Semantic", bold=True) + f"  model {status['model']} found; {switch}")
    if "memories" in status:
        with_vectors, memories = status["memories_with_vectors"], status["memories"]
        echo(f"  {with_vectors} of {memories} memories have vectors")
        if with_vectors < memories:  # the worker starts with a server's first search, not at once
            echo(
                "  (a server with ALETHEIA_SEMANTIC=on embeds the rest after its first search in"
                " words; until then search finds them by their words only)"
            )
