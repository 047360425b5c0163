"""Capture hooks in a host's settings: which events run ``aletheia-hook`` and how.

Claude Code: ``~/.claude/settings.json`` (user; ``$CLAUDE_CONFIG_DIR/settings.json`` when that is
set) or ``.claude/settings.json`` (project), key
``hooks.<Event>``, each a list of matcher groups ``{"hooks": [{"type": "command", ...}]}``.
Gemini CLI: the same shape in ``~/.gemini/settings.json`` or ``.gemini/settings.json`` (the file
its MCP entry is in), with its own event and tool names, a timeout in milliseconds and a hook
``name`` (what ``hooksConfig.disabled`` lists). Its hooks are on unless ``hooksConfig.enabled``
is false, and run only in trusted folders.
Codex: ``hooks.json`` beside its ``config.toml`` (``~/.codex`` or ``$CODEX_HOME``; ``.codex`` of a
project), in Claude Code's shape and event names, its timeout in seconds; its file tool is
``apply_patch``. Codex runs a hook only once the user has trusted it (``/hooks`` in Codex), and
a project's hooks only in a trusted project.
OpenCode: no command hooks; a plugin file, ``aletheia.js`` (``cli.opencode_plugin``).
Cursor: ``hooks.json`` beside its ``mcp.json`` (``~/.cursor``; ``.cursor`` of a project),
``{"version": 1, "hooks": {"<event>": [{"command": ..., "timeout": ...}]}}``: a flat list of
hooks per event, its own camelCase event names, its timeout in seconds (from Cursor's
documentation only, not tried with Cursor itself).
"""

from __future__ import annotations

import os
import shlex
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aletheia_mem.cli.clients import (
    Action,
    Change,
    ConfigFileError,
    get_entry,
    in_file,
    read_text,
    remove_empty,
    remove_entry,
    set_entry,
    set_list,
)
from aletheia_mem.cli.hook_commands import is_our_hook_command
from aletheia_mem.cli.hosts import HOSTS_BY_NAME, Scope, claude_user_settings
from aletheia_mem.cli.launcher import PACKAGE, temporary_launcher
from aletheia_mem.cli.opencode_plugin import plugin_path
from aletheia_mem.domain.kinds import (
    CODEX_FILE_TOOLS,
    CURSOR_EVENTS,
    FILE_TOOLS,
    GEMINI_FILE_TOOLS,
)
from aletheia_mem.projects import project_root

HOOK_MARKER = "aletheia-hook"
HOOK_MODULE = "aletheia_mem.hooks"
# Words found in the text of our hook commands (``uvx aletheia-mem hook ...`` from a run-once
# cache; ``python -m aletheia.hooks`` before the rename; ``aletheia hook``, the CLI's): a file
# without any holds none of ours. Which hooks are ours is ``cli.hook_commands``' rule.
HOOK_MARKS = (HOOK_MARKER, HOOK_MODULE, f"{PACKAGE} hook", "aletheia.hooks", "aletheia hook")
HOOK_TIMEOUT_SECONDS = 5
# Claude Code event -> the aletheia-hook event it runs.
CLAUDE_EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PostToolUse": "post-tool-use",
    "SessionEnd": "session-end",
}
# The tools whose calls the PostToolUse hook runs for: those that change files.
CLAUDE_MATCHERS = {"PostToolUse": "|".join(FILE_TOOLS)}
# Gemini CLI event -> the aletheia-hook event it runs (BeforeAgent comes after the user's prompt).
GEMINI_EVENTS = {
    "SessionStart": "session-start",
    "BeforeAgent": "user-prompt",
    "AfterTool": "post-tool-use",
    "SessionEnd": "session-end",
}
GEMINI_MATCHERS = {"AfterTool": "|".join(GEMINI_FILE_TOOLS)}
GEMINI_TIMEOUT_MS = HOOK_TIMEOUT_SECONDS * 1000
# Codex: Claude Code's event names (it has its own SessionEnd); apply_patch changes files.
CODEX_EVENTS = dict(CLAUDE_EVENTS)
CODEX_MATCHERS = {"PostToolUse": "|".join(CODEX_FILE_TOOLS)}
CODEX_HOOKS_FILE = "hooks.json"
CODEX_TRUST_NOTE = (
    "Codex runs a new or changed hook only once you trust it: start codex, type /hooks and"
    " trust Aletheia's four hooks."
)
CURSOR_HOOKS_FILE = "hooks.json"
CURSOR_HOOKS_VERSION = 1
# The top-level keys install adds to a hooks file besides the hooks (Cursor's ``version``).
HOOKS_FILE_KEYS: dict[str, dict[str, Any]] = {"cursor": {"version": CURSOR_HOOKS_VERSION}}
HOOK_HOSTS = ("claude-code", "gemini-cli", "codex", "opencode", "cursor")


def hook_command(event: str, env: dict[str, str]) -> str:
    """``ALETHEIA_DATA_DIR=... /abs/aletheia-hook session-start`` for a shell to run;
    ``... uvx aletheia-mem hook session-start`` from a run-once cache (uvx, pipx run)."""
    assignments = [f"{key}={shlex.quote(value)}" for key, value in env.items()]
    return " ".join([*assignments, *(shlex.quote(part) for part in hook_program()), event])


def hook_program() -> list[str]:
    """The argv that runs ``aletheia-hook`` (the event is added after it): the absolute
    script, ``uvx aletheia-mem hook`` from a run-once cache, or ``python -m``."""
    launcher = temporary_launcher()
    script = Path(sysconfig.get_path("scripts")) / HOOK_MARKER
    if not script.exists():
        script = Path(os.path.abspath(sys.executable)).parent / HOOK_MARKER
    if launcher is not None:
        program = launcher.command("hook")
    elif script.exists():
        program = [str(script.absolute())]
    else:
        program = [os.path.abspath(sys.executable), "-m", HOOK_MODULE]
    return program


def claude_settings_path(scope: Scope, cwd: Path) -> Path:
    if scope == "project":
        return project_root(cwd) / ".claude" / "settings.json"
    return claude_user_settings()


def codex_hooks_path(scope: Scope, cwd: Path) -> Path:
    """The ``hooks.json`` beside the ``config.toml`` Codex's MCP entry goes in."""
    return HOSTS_BY_NAME["codex"].config_path(scope, cwd).parent / CODEX_HOOKS_FILE


def cursor_hooks_path(scope: Scope, cwd: Path) -> Path:
    """The ``hooks.json`` beside the ``mcp.json`` Cursor's MCP entry goes in."""
    return HOSTS_BY_NAME["cursor"].config_path(scope, cwd).parent / CURSOR_HOOKS_FILE


def hooks_path(host: str, scope: Scope, cwd: Path) -> Path:
    """The file a host keeps its hooks in.

    Raises:
        ValueError: the host has no such scope.
    """
    if host == "claude-code":
        return claude_settings_path(scope, cwd)
    if host == "codex":
        return codex_hooks_path(scope, cwd)
    if host == "opencode":
        return plugin_path(scope, cwd)
    if host == "cursor":
        return cursor_hooks_path(scope, cwd)
    return HOSTS_BY_NAME[host].config_path(scope, cwd)


def _is_our_hook(hook: Any) -> bool:
    """A hook is ours when its command's program is Aletheia's hook (``cli.hook_commands``)."""
    return isinstance(hook, dict) and is_our_hook_command(hook.get("command"))


def _without_ours(group: Any) -> Any:
    """The group without our hooks (None when nothing else is left), or the group as it is."""
    hooks = group.get("hooks") if isinstance(group, dict) else None
    if not isinstance(hooks, list) or not any(_is_our_hook(hook) for hook in hooks):
        return group
    others = [hook for hook in hooks if not _is_our_hook(hook)]
    return {**group, "hooks": others} if others else None


def merged_groups(existing: Any, command: str, matcher: str | None = None) -> list[Any]:
    """The event's groups with ours in place of any earlier Aletheia hook; the user's hooks,
    also those sharing a group (and its matcher) with an earlier one of ours, are kept."""
    hook = {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_SECONDS}
    return _merged(existing, hook, matcher)


def gemini_hook(event: str, command: str) -> dict[str, Any]:
    """Gemini CLI's entry of one hook: named, its timeout in milliseconds."""
    return {
        "name": f"aletheia-{event}",
        "type": "command",
        "command": command,
        "timeout": GEMINI_TIMEOUT_MS,
    }


def _merged(existing: Any, hook: dict[str, Any], matcher: str | None) -> list[Any]:
    groups = existing if isinstance(existing, list) else []
    ours: dict[str, Any] = {"hooks": [hook]}
    if matcher is not None:
        ours = {"matcher": matcher, **ours}
    placed = False
    result: list[Any] = []
    for group in groups:
        kept = _without_ours(group)
        if kept is not None:
            result.append(kept)
        if kept is not group and not placed:
            result.append(ours)
            placed = True
    if not placed:
        result.append(ours)
    return result


def plan_claude_hooks(path: Path, env: dict[str, str]) -> list[Change]:
    """One change per event; applied in order, each on the previous one's text.

    Raises:
        ConfigFileError: the settings file cannot be read or changed; the message names it.
    """

    def wanted(event: str, name: str, existing: Any) -> list[Any]:
        return merged_groups(existing, hook_command(name, env), CLAUDE_MATCHERS.get(event))

    return _plan_hooks(path, read_text(path), CLAUDE_EVENTS, wanted)


def plan_codex_hooks(path: Path, env: dict[str, str]) -> list[Change]:
    """Codex's hooks in its ``hooks.json``: one change per event, each on the previous one's
    text.

    Raises:
        ConfigFileError: the file cannot be read or changed; the message names it.
    """

    def wanted(event: str, name: str, existing: Any) -> list[Any]:
        return merged_groups(existing, hook_command(name, env), CODEX_MATCHERS.get(event))

    return _plan_hooks(path, read_text(path), CODEX_EVENTS, wanted)


def plan_gemini_hooks(path: Path, env: dict[str, str], text: str) -> list[Change]:
    """Gemini CLI's hooks in ``text`` (the settings file's, with the MCP entry already merged
    in): one change per event, each on the previous one's text.

    Raises:
        ConfigFileError: the settings file cannot be changed; the message names it.
    """

    def wanted(event: str, name: str, existing: Any) -> list[Any]:
        hook = gemini_hook(name, hook_command(name, env))
        return _merged(existing, hook, GEMINI_MATCHERS.get(event))

    return _plan_hooks(path, text, GEMINI_EVENTS, wanted)


def plan_cursor_hooks(path: Path, env: dict[str, str]) -> list[Change]:
    """Cursor's hooks in its ``hooks.json``: ``version`` when the file has none, then one change
    per event, each on the previous one's text.

    Raises:
        ConfigFileError: the file cannot be read or changed; the message names it.
    """
    text = read_text(path)
    changes: list[Change] = []
    try:
        version = get_entry(text, "json", ("version",))
    except ConfigFileError as error:
        raise in_file(path, error) from None
    if version is None:
        try:
            new_text = set_entry(text, "json", ("version",), CURSOR_HOOKS_VERSION)
        except ConfigFileError as error:
            raise ConfigFileError(f"{path}: {error}") from None
        changes.append(Change(path, "add", text, new_text, None))
        text = new_text

    def wanted(event: str, name: str, existing: Any) -> list[Any]:
        return cursor_hooks(existing, hook_command(name, env))

    return changes + _plan_hooks(path, text, CURSOR_EVENTS, wanted)


def cursor_hooks(existing: Any, command: str) -> list[Any]:
    """The event's hooks with ours in place of any earlier Aletheia hook (Cursor lists hooks,
    not groups of them); the user's hooks are kept, in their order."""
    ours = {"command": command, "timeout": HOOK_TIMEOUT_SECONDS}
    result: list[Any] = []
    for hook in existing if isinstance(existing, list) else []:
        if not _is_our_hook(hook):
            result.append(hook)
        elif ours not in result:
            result.append(ours)
    return result if ours in result else [*result, ours]


def _plan_hooks(
    path: Path,
    text: str,
    events: dict[str, str],
    wanted_groups: Callable[[str, str, Any], list[Any]],
) -> list[Change]:
    changes: list[Change] = []
    for event, name in events.items():
        try:
            existing = get_entry(text, "json", ("hooks", event))
        except ConfigFileError as error:
            raise in_file(path, error) from None
        if existing is not None and not isinstance(existing, list):
            raise ConfigFileError(
                f"{path}: hooks.{event} is not a list of hook groups; fix it or move the file away."
            )
        wanted = wanted_groups(event, name, existing)
        if existing == wanted:
            continue
        try:
            new_text = set_list(text, ("hooks", event), wanted)
        except ConfigFileError as error:
            raise ConfigFileError(f"{path}: {error}") from None
        kind: Action = "replace" if holds_our_hook(existing) else "add"
        changes.append(Change(path, kind, text, new_text, None))
        text = new_text
    return changes


def holds_our_hook(hooks: Any) -> bool:
    """Whether a list of hooks (Cursor's) or of groups of them holds one of ours."""
    if not isinstance(hooks, list):
        return False
    for item in hooks:
        inner = item.get("hooks") if isinstance(item, dict) else None
        if _is_our_hook(item) or (
            isinstance(inner, list) and any(_is_our_hook(hook) for hook in inner)
        ):
            return True
    return False


def _without_our_hooks(hooks: list[Any]) -> list[Any]:
    """The list (of hooks or of groups) without ours; groups left empty go too."""
    result = []
    for item in hooks:
        if _is_our_hook(item):
            continue
        kept = _without_ours(item)
        if kept is not None:
            result.append(kept)
    return result


def remove_our_hooks(path: Path, text: str) -> Change:
    """``text`` without Aletheia's hooks, at any event of ``hooks`` (an event left with none
    goes, and ``hooks`` when it is left empty); all else kept as it was.

    Raises:
        ConfigFileError: the file is no JSON; the message names it.
    """
    try:
        events = get_entry(text, "json", ("hooks",))
    except ConfigFileError as error:
        raise in_file(path, error) from None
    new = text
    try:
        if isinstance(events, dict):
            for event, hooks in events.items():
                if not holds_our_hook(hooks):
                    continue
                kept = _without_our_hooks(hooks)
                if kept:
                    new = set_list(new, ("hooks", event), kept)
                else:
                    new = remove_entry(new, "json", ("hooks", event))
            if new != text:  # ``hooks`` left holding nothing goes too
                new = remove_empty(new, "json", ("hooks",))
    except ConfigFileError as error:
        raise ConfigFileError(f"{path}: {error}") from None
    return Change(path, "unchanged" if new == text else "remove", text, new, None)


def combined(path: Path, changes: list[Change]) -> Change:
    """The net change of several edits of one file."""
    if not changes:
        text = read_text(path)
        return Change(path, "unchanged", text, text, None)
    replaced = any(change.action == "replace" for change in changes)
    action: Action = "replace" if replaced else "add"
    return Change(path, action, changes[0].old_text, changes[-1].new_text, None)
