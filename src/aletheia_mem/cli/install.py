"""``aletheia install <host>``: merge the Aletheia entry (and hooks) into a host's config."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import click

from aletheia_mem.cli.clients import (
    Action,
    Change,
    ConfigFileError,
    get_entry,
    plan_change,
    read_text,
)
from aletheia_mem.cli.common import (
    cli_settings,
    echo,
    emit_json,
    fail,
    handles_errors,
    json_option,
    style,
)
from aletheia_mem.cli.config_writes import Written, check_writable, undo_change, write_change
from aletheia_mem.cli.connect import (
    check_scope,
    host_argument,
    launcher_note,
    remote_options,
    scope_option,
    server_for,
)
from aletheia_mem.cli.hooks import (
    CODEX_TRUST_NOTE,
    HOOK_HOSTS,
    claude_settings_path,
    codex_hooks_path,
    combined,
    cursor_hooks_path,
    hook_program,
    plan_claude_hooks,
    plan_codex_hooks,
    plan_cursor_hooks,
    plan_gemini_hooks,
)
from aletheia_mem.cli.hosts import (
    HOSTS,
    HOSTS_BY_NAME,
    SERVER_NAME,
    Host,
    Scope,
    server_env,
)
from aletheia_mem.cli.opencode_plugin import ForeignPlugin, plan_opencode_plugin, plugin_path
from aletheia_mem.cli.ownership import entry_tool, is_aletheia_entry, shown_entry, with_user_keys
from aletheia_mem.errors import ForbiddenError, InvalidInputError
from aletheia_mem.projects import project_root
from aletheia_mem.storage.files import real_target_inside

EXIT_CONFLICT = 4


def _describe(change: Change, what: str, written: bool) -> str:
    path = change.path
    if change.action == "unchanged":
        return f"{path} already has {what}; nothing to change."
    verb = {"add": "Add", "replace": "Replace"}[change.action]
    if written:
        return f"{verb.rstrip('e')}ed {what} in {path}."
    return f"Would {verb.lower()} {what} in {path}:"


def sharing_hosts(chosen: Host, scope: Scope) -> list[Host]:
    """The other hosts that read the same file at ``scope`` (Claude Code's and Command Code's
    project ``.mcp.json``)."""
    if scope != "project":
        return []
    return [h for h in HOSTS if h is not chosen and h.project_file == chosen.project_file]


def owned_by(chosen: Host, scope: Scope, url: str | None) -> Callable[[Any], bool]:
    """Whether an entry is Aletheia's own for ``chosen``: not one written for another host
    that shares the file (that one is replaced only with --force)."""
    others = {host.name for host in sharing_hosts(chosen, scope)}
    return lambda entry: is_aletheia_entry(entry, url) and entry_tool(entry) not in others


def shared_message(chosen: Host, scope: Scope, change: Change, verb: str) -> str | None:
    """Why the entry of another host sharing the file is left alone, or None."""
    for other in sharing_hosts(chosen, scope):
        if entry_tool(change.existing) == other.name:
            return (
                f"{change.path} already holds Aletheia's entry for {other.title}: {other.title}"
                f" and {chosen.title} both read this project file, which has room for one server"
                f' named "{SERVER_NAME}". Keep it, use --force to {verb} it (the file is backed'
                f" up first), or use --scope user for {chosen.title}."
            )
    return None


def _conflict_message(chosen: Host, scope: Scope, change: Change) -> str:
    shared = shared_message(chosen, scope, change, "replace")
    if shared:
        return shared
    existing = shown_entry(change.existing)
    return (
        f'{change.path} already has a different server named "{SERVER_NAME}" ({existing});'
        " use --force to replace it (the file is backed up first)."
    )


def _plans(
    chosen: Host, scope: Scope, force: bool, hooks: bool, url: str | None, token_env: str | None
) -> list[tuple[Change, str]]:
    server = server_for(chosen, url, token_env)
    cwd = Path.cwd()
    path = writable_target(chosen.config_path(scope, cwd), scope, cwd)
    entry = chosen.entry(server)
    owned = owned_by(chosen, scope, url)
    change = plan_change(
        path,
        chosen.fmt,
        _entry_path(chosen, path),
        entry,
        force=force,
        owned=owned,
        merge=partial(with_user_keys, own_file=scope == "user"),
        new_file=chosen.document_extra,
    )
    plans = [(change, "the aletheia entry")]
    if not hooks:
        return plans
    env = server_env(cli_settings(), chosen.name)
    if chosen.name == "gemini-cli":
        return [_with_gemini_hooks(plans[0][0], env)]
    if chosen.name == "opencode":
        plugin = writable_target(plugin_path(scope, cwd), scope, cwd)
        plans.append((plan_opencode_plugin(plugin, hook_program(), env), "the capture plugin"))
        return plans
    where, plan = HOOK_FILES[chosen.name]
    hooks_path = writable_target(where(scope, cwd), scope, cwd)
    plans.append((combined(hooks_path, plan(hooks_path, env)), "the hooks"))
    return plans


# The hosts whose hooks live in a file of their own: where it is, and how ours are merged in.
HOOK_FILES: dict[
    str, tuple[Callable[[Scope, Path], Path], Callable[[Path, dict[str, str]], list[Change]]]
] = {
    "claude-code": (claude_settings_path, plan_claude_hooks),
    "codex": (codex_hooks_path, plan_codex_hooks),
    "cursor": (cursor_hooks_path, plan_cursor_hooks),
}


def _with_gemini_hooks(entry: Change, env: dict[str, str]) -> tuple[Change, str]:
    """Gemini CLI keeps its hooks in the file of its MCP entry: one change of that file, the
    hooks merged into the text the entry leaves (a conflicting entry stays the conflict),
    named by what it changes (both when neither changes)."""
    if entry.action == "conflict":
        return entry, "the aletheia entry"
    hooks = plan_gemini_hooks(entry.path, env, entry.new_text)
    text = hooks[-1].new_text if hooks else entry.new_text
    actions = {entry.action, *(change.action for change in hooks)}
    action: Action = "unchanged" if text == entry.old_text else "add"
    if "replace" in actions:
        action = "replace"
    entry_changed, hooks_changed = entry.action != "unchanged", text != entry.new_text
    what = "the aletheia entry and the hooks"
    if entry_changed != hooks_changed:
        what = "the aletheia entry" if entry_changed else "the hooks"
    return Change(entry.path, action, entry.old_text, text, entry.existing), what


def _entry_path(host: Host, path: Path) -> tuple[str, ...]:
    """Where the entry goes: the first of the host's places that has one (OpenCode's
    ``mcp.aletheia`` wins over ``mcp.servers.aletheia``), else the main place."""
    try:
        text = read_text(path)
        for servers in host.servers_keys():
            if get_entry(text, host.fmt, (*servers, SERVER_NAME)) is not None:
                return (*servers, SERVER_NAME)
    except ConfigFileError:
        pass  # plan_change reports it, naming the file
    return host.entry_path()


def writable_target(path: Path, scope: Scope, cwd: Path) -> Path:
    """The file to change for ``path``: a link's target when it stays inside the repository
    (project scope) or the home folder (user scope; the file's own folder when the tool keeps
    it elsewhere), so that a linked config is updated in place and not replaced.

    Raises:
        ConfigFileError: a link leads out of that area.
    """
    if scope == "project":
        area = project_root(cwd)
    else:
        home = Path.home().absolute()
        area = home if home in path.absolute().parents else path.parent
    try:
        return real_target_inside(path, area)
    except ForbiddenError as error:
        raise ConfigFileError(error.message) from None


@click.command()
@host_argument()
@click.option("--write", is_flag=True, help="Write the change. Without it: a dry run.")
@scope_option
@click.option("--force", is_flag=True, help="Replace a different server named aletheia.")
@click.option(
    "--hooks",
    is_flag=True,
    help="Also install the capture hooks (session-start context, prompts, session end).",
)
@remote_options
@json_option
@handles_errors
def install(
    host: str,
    write: bool,
    scope: Scope,
    force: bool,
    hooks: bool,
    url: str | None,
    token_env: str | None,
    as_json: bool,
) -> None:
    """Add Aletheia to a coding tool's config file.

    Without --write it shows the change as a diff. With --write it merges the entry into the
    file, keeping everything else in it (comments in TOML and JSONC too) and writing a backup
    first. A second run changes nothing. Aletheia's own entry (it runs aletheia-mcp, aletheia
    mcp or uvx aletheia-mem mcp, or sets ALETHEIA_TOOL; a remote one at the --http address)
    and hooks are updated, keys you added to the entry kept (of its env, ALETHEIA_* variables
    only); a different server already named aletheia is left alone unless --force.
    With --hooks (Claude Code, Gemini CLI, Codex, OpenCode, Cursor) both
    files are written or neither; Gemini CLI keeps its hooks in the file of its MCP entry,
    written once; Codex keeps them in hooks.json beside its config.toml and runs them once
    trusted (/hooks); Cursor keeps them in hooks.json beside its mcp.json; OpenCode gets a
    plugin, aletheia.js, in its plugin folder.
    """
    chosen = HOSTS_BY_NAME[host.lower()]
    check_scope(chosen, scope)
    if hooks and chosen.name not in HOOK_HOSTS:
        hosts = f"{', '.join(HOOK_HOSTS[:-1])} and {HOOK_HOSTS[-1]}"
        raise InvalidInputError(f"Capture hooks are available for {hosts} only.")
    try:
        plans = _plans(chosen, scope, force, hooks, url, token_env)
    except ForeignPlugin as error:  # a user's own plugin file, as uninstall refuses it
        fail(str(error), EXIT_CONFLICT, as_json=as_json, kind="conflict")
    except ConfigFileError as error:
        fail(str(error), 1, as_json=as_json, kind="config_file")
    conflicts = [change for change, _ in plans if change.action == "conflict"]
    if conflicts:
        message = _conflict_message(chosen, scope, conflicts[0])
        fail(message, EXIT_CONFLICT, as_json=as_json, kind="conflict")
    try:
        report = _apply(plans, write, as_json)
    except ConfigFileError as error:
        fail(str(error), 1, as_json=as_json, kind="config_file")
    note = launcher_note(url)
    if as_json:
        emit_json(
            {"host": chosen.name, "scope": scope, "write": write, "changes": report, "note": note}
        )
        return
    if note:
        echo(note)
    pending = any(change.action != "unchanged" for change, _ in plans)
    if not write and pending:
        echo("Nothing written yet. Run again with --write to make this change.")
    elif write and chosen.note_for(scope):
        echo(chosen.note_for(scope))
    if write and hooks and chosen.name == "codex":
        echo(CODEX_TRUST_NOTE)


def change_report(change: Change, what: str, backup: Path | None, write: bool) -> dict[str, Any]:
    """One planned change as ``--json`` reports it (a deleted file has no diff)."""
    return {
        "path": str(change.path),
        "what": what,
        "action": change.action,
        "written": bool(write and change.action != "unchanged"),
        "backup": str(backup) if backup else None,
        "diff": "" if change.action == "delete" else change.diff(),
    }


def _apply(plans: list[tuple[Change, str]], write: bool, as_json: bool) -> list[dict[str, Any]]:
    """Write (or only describe) each change; returns the report of each."""
    changes = [change for change, _ in plans]
    backups = write_all(changes) if write else [None] * len(changes)
    report = []
    for (change, what), backup in zip(plans, backups, strict=True):
        report.append(change_report(change, what, backup, write))
        if as_json:
            continue
        echo(_describe(change, what, write))
        if not write and change.action != "unchanged":
            echo(coloured_diff(change.diff()))
        if backup:
            echo(f"Backup of the previous file: {backup}")
    return report


def write_all(changes: list[Change]) -> list[Path | None]:
    """Write every change or none: each file is checked first, and when a write fails anyway
    the files written before it are put back as they were. Returns each change's backup.

    Raises:
        ConfigFileError: a file is read-only or cannot be written; no file was changed.
    """
    for change in changes:
        check_writable(change)
    written: list[tuple[Change, Written]] = []
    try:
        for change in changes:
            written.append((change, write_change(change)))  # noqa: PERF401 - kept to undo
    except ConfigFileError as error:
        raise ConfigFileError(_undo_all(written, str(error))) from None
    return [done.backup for _, done in written]


def _undo_all(written: list[tuple[Change, Written]], error: str) -> str:
    """Put back the files written before ``error``; the message for the user."""
    restored, stuck = [], []
    for change, done in reversed(written):
        if change.action in ("unchanged", "conflict"):
            continue
        try:
            undo_change(change, done)
            restored.append(str(change.path))
        except OSError as undo_error:
            kept = f" (its previous text is in {done.backup})" if done.backup else ""
            stuck.append(f"{change.path} could not be put back: {undo_error}{kept}")
    head = error.rstrip(".")
    if stuck:
        return f"{head}; {'; '.join(stuck)}."
    if restored:
        return f"{head}; nothing was changed ({', '.join(restored)} put back as it was)."
    return error


def coloured_diff(diff: str) -> str:
    lines = []
    for line in diff.rstrip("\n").splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            line = style(line, fg="green")
        elif line.startswith("-") and not line.startswith("---"):
            line = style(line, fg="red")
        lines.append(line)
    return "\n".join(lines)
