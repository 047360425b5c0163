"""``aletheia doctor``'s hooks section: for each host that takes capture hooks and each scope,
whether Aletheia's hook is there for every event ``install --hooks`` writes, and whether the
program each hook runs exists and is executable (OpenCode: its plugin's program)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aletheia_mem.cli.clients import ConfigFileError, get_entry, read_text
from aletheia_mem.cli.doctor_hosts import program_problem, same_file
from aletheia_mem.cli.hook_commands import is_our_hook_command, program_argv, runs_aletheia_hook
from aletheia_mem.cli.hooks import (
    CLAUDE_EVENTS,
    CODEX_EVENTS,
    GEMINI_EVENTS,
    HOOK_HOSTS,
    HOOK_MARKS,
    hooks_path,
)
from aletheia_mem.cli.hosts import Scope
from aletheia_mem.cli.opencode_plugin import PLUGIN_MARK
from aletheia_mem.domain.kinds import CURSOR_EVENTS

# The events ``install --hooks`` writes, per host (OpenCode's plugin handles its own).
EXPECTED_EVENTS: dict[str, tuple[str, ...]] = {
    "claude-code": tuple(CLAUDE_EVENTS),
    "gemini-cli": tuple(GEMINI_EVENTS),
    "codex": tuple(CODEX_EVENTS),
    "cursor": tuple(CURSOR_EVENTS),
}
_PLUGIN_PROGRAM = re.compile(r"^const PROGRAM = (.*);$", re.MULTILINE)


@dataclass(frozen=True)
class HookCheck:
    path: str
    status: str  # ok, broken, disabled, not-installed
    detail: str

    @property
    def installed(self) -> bool:
        return self.status != "not-installed"


def check_hooks(cwd: Path) -> dict[str, dict[str, HookCheck]]:
    """Each hook host's scopes (a project file that is the user file once) and their check."""
    found: dict[str, dict[str, HookCheck]] = {}
    for host in HOOK_HOSTS:
        found[host] = {}
        user = hooks_path(host, "user", cwd)
        scopes: list[tuple[Scope, Path]] = [("user", user)]
        project = hooks_path(host, "project", cwd)
        if not same_file(project, user):
            scopes.append(("project", project))
        for scope, path in scopes:
            found[host][scope] = _check(host, path)
    found["claude-code"] = _claude_switched_off(found["claude-code"], cwd)
    return found


def _claude_switched_off(checks: dict[str, HookCheck], cwd: Path) -> dict[str, HookCheck]:
    """Claude Code runs no hooks at all when the settings that win (the project's
    ``settings.local.json``, then its ``settings.json``, then the user's) say
    ``"disableAllHooks": true``: working hooks are then disabled."""
    project = hooks_path("claude-code", "project", cwd)
    files = [
        project.with_name("settings.local.json"),
        project,
        hooks_path("claude-code", "user", cwd),
    ]
    for settings in files:
        try:
            switch = get_entry(read_text(settings), "json", ("disableAllHooks",))
        except ConfigFileError:
            continue  # told with the hooks' check of that file, or not one of them
        if isinstance(switch, bool):
            if not switch:
                return checks
            detail = f"disableAllHooks is true in {settings}: Claude Code runs no hooks"
            return {
                scope: HookCheck(check.path, "disabled", detail) if check.status == "ok" else check
                for scope, check in checks.items()
            }
    return checks


def _check(host: str, path: Path) -> HookCheck:
    try:
        text = read_text(path)
    except ConfigFileError as error:  # also told with the hosts' checks when it is theirs
        return HookCheck(str(path), "broken" if path.exists() else "not-installed", str(error))
    if not any(mark in text for mark in HOOK_MARKS):
        return HookCheck(str(path), "not-installed", "")
    if host == "opencode":
        return _check_plugin(path, text)
    try:
        document = get_entry(text, "json", ())
    except ConfigFileError as error:
        return HookCheck(str(path), "broken", f"{path} is {error}")
    hooks = document.get("hooks") if isinstance(document, dict) else None
    hooks = hooks if isinstance(hooks, dict) else {}
    if not any(_our_commands(host, event) for event in hooks.values()):
        return HookCheck(str(path), "not-installed", "")  # only the user's own hooks
    commands = {event: _our_commands(host, hooks.get(event)) for event in EXPECTED_EVENTS[host]}
    problems = []
    missing = [event for event, found in commands.items() if not found]
    if missing:
        problems.append(f"no Aletheia hook for {', '.join(missing)}")
    programs = sorted({_program(command) for found in commands.values() for command in found})
    problems += [problem for program in programs if (problem := _program_problem(program))]
    if problems:
        fix = f"run `aletheia install {host} --hooks --write`"
        return HookCheck(str(path), "broken", "; ".join(problems) + f"; {fix}")
    if host == "gemini-cli" and _gemini_hooks_off(document):
        return HookCheck(str(path), "disabled", "hooksConfig.enabled is false")
    return HookCheck(str(path), "ok", "")


def _our_commands(host: str, event: Any) -> list[str]:
    """The commands of Aletheia's hooks for one event: Cursor lists hooks, the others groups
    of ``{"hooks": [...]}``."""
    entries = event if isinstance(event, list) else []
    if host != "cursor":
        entries = [
            hook
            for group in entries
            if isinstance(group, dict) and isinstance(group.get("hooks"), list)
            for hook in group["hooks"]
        ]
    commands = [hook.get("command") for hook in entries if isinstance(hook, dict)]
    return [str(command) for command in commands if is_our_hook_command(command)]


def _program(command: str) -> str:
    """The program one of our hook commands runs: its first word after ``NAME=value`` ones."""
    return (program_argv(command) or [""])[0]


def _program_problem(program: str) -> str | None:
    """As for an entry's program, looked up on this PATH as the shell finds it."""
    return program_problem(program, None, runs="a hook runs no program")


def _check_plugin(path: Path, text: str) -> HookCheck:
    if PLUGIN_MARK not in text:
        return HookCheck(str(path), "not-installed", "")
    match = _PLUGIN_PROGRAM.search(text)
    try:
        program = json.loads(match.group(1)) if match else None
    except ValueError:
        program = None
    if not isinstance(program, list) or not program:
        detail = "the plugin names no program; run `aletheia install opencode --hooks --write`"
        return HookCheck(str(path), "broken", detail)
    if not runs_aletheia_hook([str(word) for word in program]):
        shown = json.dumps(program, ensure_ascii=False)[:120]
        detail = (
            f"the plugin runs {shown}, not aletheia-hook; run `aletheia install opencode"
            " --hooks --write`"
        )
        return HookCheck(str(path), "broken", detail)
    problem = _program_problem(str(program[0]))
    if problem:
        fix = "run `aletheia install opencode --hooks --write`"
        return HookCheck(str(path), "broken", f"{problem}; {fix}")
    return HookCheck(str(path), "ok", "")


def _gemini_hooks_off(document: dict[str, Any]) -> bool:
    config = document.get("hooksConfig")
    return isinstance(config, dict) and config.get("enabled") is False
