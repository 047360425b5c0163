"""``aletheia uninstall <host>``: take out what ``install`` wrote, and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from aletheia_mem.cli.clients import (
    Action,
    Change,
    ConfigFileError,
    bare_file_text,
    get_entry,
    in_file,
    read_text,
    remove_empty,
    remove_entry,
)
from aletheia_mem.cli.common import echo, emit_json, fail, handles_errors, json_option
from aletheia_mem.cli.connect import check_scope, host_argument, scope_option
from aletheia_mem.cli.hooks import HOOK_HOSTS, HOOKS_FILE_KEYS, remove_our_hooks
from aletheia_mem.cli.hosts import HOSTS_BY_NAME, SERVER_NAME, Host, Scope
from aletheia_mem.cli.install import (
    EXIT_CONFLICT,
    HOOK_FILES,
    change_report,
    coloured_diff,
    owned_by,
    shared_message,
    writable_target,
    write_all,
)
from aletheia_mem.cli.opencode_plugin import PLUGIN_MARK, plugin_path
from aletheia_mem.cli.ownership import entry_url, shown_entry, shown_url
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.projects import project_root

ENTRY = "the aletheia entry"
HOOKS = "Aletheia's hooks"
PLUGIN = "the capture plugin"


class Refused(Exception):
    """Something named like ours that is not Aletheia's own; the message says what."""


def _entry_change(
    chosen: Host, scope: Scope, path: Path, force: bool, url: str | None = None
) -> Change:
    """The entry file without Aletheia's entry (in each place the host reads servers from); a
    remote entry is Aletheia's only when ``url`` (``--http``) is its address.

    Raises:
        Refused: an ``aletheia`` entry is someone else's (or another host's sharing the file)
            and ``force`` is off.
    """
    text = read_text(path)
    owned = owned_by(chosen, scope, url)
    new, found = text, None
    emptied: list[tuple[str, ...]] = []  # the places an entry was taken out of
    for servers in chosen.servers_keys():
        where = (*servers, SERVER_NAME)
        try:
            existing = get_entry(new, chosen.fmt, where)
        except ConfigFileError as error:
            raise in_file(path, error) from None
        if existing is None:
            continue
        found = existing
        if not force and not owned(existing):
            change = Change(path, "conflict", text, text, existing)
            shown = shown_entry(existing)
            address = entry_url(existing)
            raise Refused(
                shared_message(chosen, scope, change, "remove")
                or (
                    f'{path} has a remote server named "{SERVER_NAME}" ({shown}); pass --http'
                    f" {shown_url(address)} to remove it as Aletheia's, or --force (the file is"
                    " backed up first)."
                    if address is not None
                    else f'{path} has a server named "{SERVER_NAME}" that is not Aletheia\'s'
                    f" ({shown}); use --force to remove it (the file is backed up first)."
                )
            )
        try:
            new = remove_entry(new, chosen.fmt, where)
            emptied.append(servers)
        except ConfigFileError as error:
            raise ConfigFileError(f"{path}: {error}") from None
    try:
        for servers in sorted(emptied, key=len, reverse=True):  # mcp.servers before mcp
            new = remove_empty(new, chosen.fmt, servers)
    except ConfigFileError as error:
        raise ConfigFileError(f"{path}: {error}") from None
    return Change(path, "unchanged" if new == text else "remove", text, new, found)


def _bare_deleted(change: Change, named: Path, bare: str) -> Change:
    """The change, or the file's deletion when the change leaves it holding no more than a
    file ``install`` made holds once all it added is out (``bare``), or a bare ``{}`` (what is
    left of an empty file install wrote into, with no ``$schema``): install made it, most
    likely, and it goes as it came. A file reached through a link stays (the link would be
    left pointing nowhere)."""
    left = change.new_text
    if change.action != "remove" or left not in (bare, EMPTY_JSON) or named.is_symlink():
        return change
    return Change(change.path, "delete", change.old_text, "", change.existing)


EMPTY_JSON = bare_file_text("json", {})


def _plugin_change(path: Path, force: bool) -> Change:
    text = read_text(path)
    if not path.exists():
        return Change(path, "unchanged", text, text, None)
    if PLUGIN_MARK not in text and not force:
        raise Refused(
            f"{path} is not Aletheia's plugin (it lacks its first line); use --force to delete"
            " it (a backup is kept)."
        )
    return Change(path, "delete", text, "", None)


def _plans(
    chosen: Host, scope: Scope, hooks: bool, force: bool, url: str | None = None
) -> list[tuple[Change, str]]:
    cwd = Path.cwd()
    named = chosen.config_path(scope, cwd)
    entry = _entry_change(chosen, scope, writable_target(named, scope, cwd), force, url)
    bare = bare_file_text(chosen.fmt, chosen.document_extra)
    plans = [(_bare_deleted(entry, named, bare), ENTRY)]
    if not hooks:
        return plans
    if chosen.name == "gemini-cli":  # its hooks are in the entry's file: one change
        both = remove_our_hooks(entry.path, entry.new_text)
        action: Action = "remove" if both.new_text != entry.old_text else "unchanged"
        merged = Change(entry.path, action, entry.old_text, both.new_text, entry.existing)
        return [(_bare_deleted(merged, named, bare), f"{ENTRY} and {HOOKS}")]
    if chosen.name == "opencode":
        plugin = writable_target(plugin_path(scope, cwd), scope, cwd)
        return [*plans, (_plugin_change(plugin, force), PLUGIN)]
    where, _ = HOOK_FILES[chosen.name]
    hooks_named = where(scope, cwd)
    hooks_file = writable_target(hooks_named, scope, cwd)
    removed = remove_our_hooks(hooks_file, read_text(hooks_file))
    hooks_bare = bare_file_text("json", HOOKS_FILE_KEYS.get(chosen.name, {}))
    return [*plans, (_bare_deleted(removed, hooks_named, hooks_bare), HOOKS)]


def _left_hooks(chosen: Host, scope: Scope, url: str | None) -> str | None:
    """The file where Aletheia's hooks (or plugin) stay without --hooks, or None."""
    if chosen.name not in HOOK_HOSTS:
        return None
    try:
        plans = _plans(chosen, scope, True, False, url)
    except (ConfigFileError, Refused):
        return None
    for change, what in plans:
        if what != ENTRY and change.action != "unchanged":
            return str(change.path)
    return None


def _local_entry_note(chosen: Host) -> str | None:
    """Where Claude Code's local scope (``claude mcp add`` without ``--scope``) still holds an
    ``aletheia`` entry for this project, which this command does not touch, or None."""
    if chosen.name != "claude-code":
        return None
    user_file = chosen.config_path("user", Path.cwd())
    project = str(project_root(Path.cwd()))
    try:
        entry = get_entry(read_text(user_file), "json", ("projects", project, "mcpServers"))
    except ConfigFileError:
        return None  # the file's problem is told by the entry's change
    if not isinstance(entry, dict) or SERVER_NAME not in entry:
        return None
    return (
        f"Claude Code's local scope for {project} (projects in {user_file}) still has an"
        f" {SERVER_NAME} entry, which Claude Code starts first; remove it with `claude mcp"
        f" remove {SERVER_NAME} -s local` run in {project}."
    )


def _describe(change: Change, what: str, written: bool) -> str:
    path = change.path
    if change.action == "unchanged":
        absent = {
            ENTRY: "has no aletheia entry",
            HOOKS: "has no hooks of Aletheia's",
            PLUGIN: "is not there",
        }.get(what, "has no aletheia entry nor hooks of Aletheia's")
        return f"{path} {absent}; nothing to remove."
    if change.action == "delete" and what == PLUGIN:
        return f"Deleted {path} ({what})." if written else f"Would delete {path} ({what})."
    if change.action == "delete":
        if written:
            return f"Removed {what} from {path} and deleted the file, which held nothing else."
        return f"Would remove {what} from {path} and delete the file, which holds nothing else."
    return f"Removed {what} from {path}." if written else f"Would remove {what} from {path}:"


@click.command()
@host_argument()
@click.option("--write", is_flag=True, help="Make the change. Without it: a dry run.")
@scope_option
@click.option(
    "--hooks",
    is_flag=True,
    help="Also remove Aletheia's capture hooks (OpenCode: its plugin aletheia.js).",
)
@click.option(
    "--force", is_flag=True, help="Remove a server named aletheia that is not Aletheia's own."
)
@click.option(
    "--http",
    "url",
    metavar="URL",
    help="The address of a remote aletheia entry to remove as Aletheia's (else it needs --force).",
)
@json_option
@handles_errors
def uninstall(
    host: str, write: bool, scope: Scope, hooks: bool, force: bool, url: str | None, as_json: bool
) -> None:
    """Take Aletheia out of a coding tool's config file: what install wrote.

    Without --write it shows the change as a diff. With --write it removes Aletheia's own
    aletheia entry and, with --hooks, Aletheia's hooks (OpenCode: deletes the plugin
    aletheia.js), keeping everything else in the files as it was and writing a backup of each
    file first; an mcpServers or hooks object left empty goes too, and a file left with nothing
    else (as install makes it) is deleted. A second run finds nothing to remove. A server named
    aletheia that is not Aletheia's own is left alone unless --force; a remote one is
    Aletheia's when --http names its address.
    """
    chosen = HOSTS_BY_NAME[host.lower()]
    check_scope(chosen, scope)
    if hooks and chosen.name not in HOOK_HOSTS:
        raise InvalidInputError(f"{chosen.title} has no capture hooks from Aletheia.")
    try:
        plans = _plans(chosen, scope, hooks, force, url)
    except Refused as refused:
        fail(str(refused), EXIT_CONFLICT, as_json=as_json, kind="conflict")
    except ConfigFileError as error:
        fail(str(error), 1, as_json=as_json, kind="config_file")
    changes = [change for change, _ in plans]
    try:
        backups = write_all(changes) if write else [None] * len(changes)
    except ConfigFileError as error:
        fail(str(error), 1, as_json=as_json, kind="config_file")
    left = None if hooks else _left_hooks(chosen, scope, url)
    notes = [
        text
        for text in (
            f"Aletheia's hooks in {left} stay; add --hooks to remove them too." if left else None,
            _local_entry_note(chosen),
        )
        if text
    ]
    note = " ".join(notes) or None
    report: list[dict[str, Any]] = []
    for (change, what), backup in zip(plans, backups, strict=True):
        report.append(change_report(change, what, backup, write))
        if as_json:
            continue
        echo(_describe(change, what, write))
        if not write and change.action == "remove":
            echo(coloured_diff(change.diff()))
        if backup:
            echo(f"Backup of the previous file: {backup}")
    if as_json:
        emit_json(
            {"host": chosen.name, "scope": scope, "write": write, "changes": report, "note": note}
        )
        return
    for text in notes:
        echo(text)
    if not write and any(change.action != "unchanged" for change in changes):
        echo("Nothing removed yet. Run again with --write to make this change.")
