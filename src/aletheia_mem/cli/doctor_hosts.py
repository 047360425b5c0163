"""``aletheia doctor``'s tools section: each host's config files read, the ``aletheia`` entry
the host would use found (Claude Code: local over project over user scope), its shape checked,
and its server started as the host would (``doctor_probe``), unless it is disabled, shadowed by
another scope's, its program is missing, or its store does not exist and is not the CLI's (a
server would make a new one); before the CLI's store is made (the first save), on a throwaway
store. An entry in a project's file (a cloned repository's) is started only when it is exactly
what ``aletheia install`` writes for this installation: doctor never runs a repository's own
command, which the hosts themselves ask the user to approve first. A remote entry is called at
its URL (``doctor_remote``), but not one in a project's file: the repository would choose where
the tokens of this environment go."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from aletheia_mem.cli.clients import ConfigFileError, get_entry, read_text
from aletheia_mem.cli.doctor_probe import host_env, probe_server
from aletheia_mem.cli.doctor_remote import check_remote
from aletheia_mem.cli.hosts import HOSTS, INSTALL_VARIABLES, SERVER_NAME, Host, mcp_command
from aletheia_mem.cli.ownership import is_aletheia_entry, shown_url
from aletheia_mem.config import DB_FILE_NAME, STORE_VARIABLE, load_settings
from aletheia_mem.projects import project_root
from aletheia_mem.storage.open import display_target

DoctorScope = Literal["user", "project", "local"]
Store = Path | str  # a SQLite file or a postgresql:// URL


@dataclass(frozen=True)
class HostCheck:
    host: str
    scope: DoctorScope
    path: str
    # not-configured, ok, warning, broken, remote, unreadable, disabled, shadowed
    status: str
    detail: str
    store: str | None = None  # the store a stdio entry's server uses

    @property
    def problem(self) -> bool:
        return self.status in ("broken", "unreadable")


def kind_of(value: Any) -> str:
    """What a JSON or TOML value is, as a message names it: ``an array``, ``a string``."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "true or false"
    if value is None:
        return "null"
    return "a number"


def shape_problem(host: Host, document: Any) -> str | None:
    """What on the way to the servers' table is not an object (a file whose top level is an
    array, ``"mcpServers": "x"``), said so that the user knows the host cannot read it."""
    node, where = document, "the top level"
    for depth, key in enumerate(host.servers_key):
        if node is None:
            return None
        if not isinstance(node, dict):
            return f"{where} is {kind_of(node)}, not an object; {host.title} cannot read it"
        node, where = node.get(key), ".".join(host.servers_key[: depth + 1])
    if node is not None and not isinstance(node, dict):
        return f"{where} is {kind_of(node)}, not an object; {host.title} cannot read it"
    return None


def find_entry(host: Host, document: Any) -> Any:
    """The ``aletheia`` entry the host starts: in the first of its places that has one (as
    ``install`` finds it); None when there is none."""
    for servers in host.servers_keys():
        node = document
        for key in (*servers, SERVER_NAME):
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            return node
    return None


def _wrong(field: str, value: Any, expected: str, fix: str) -> str:
    return f'the entry\'s "{field}" is {kind_of(value)}, not {expected}; fix it, or {fix}'


def fix_hint(host: Host, place: _Place, entry: Any) -> str:
    """The command that replaces a broken or foreign entry where it is: Claude Code's local
    scope is ``claude``'s own (removing it lets the project's or user's entry run); a project
    entry is written with ``--scope project``, one not Aletheia's only with ``--force``."""
    if place.scope == "local":
        return f"run `claude mcp remove {SERVER_NAME} -s local` in {place.prefix[-1]}"
    words = ["aletheia", "install", host.name]
    if place.scope == "project":
        words += ["--scope", "project"]
    words.append("--write")
    if not is_aletheia_entry(entry):
        words.append("--force")
    return f"run `{' '.join(words)}`"


def with_fix(problem: str, fix: str) -> str:
    """A broken entry's problem and the command that replaces it (``fix_hint``)."""
    return f"{problem}; fix the entry, or {fix}"


@dataclass(frozen=True)
class Remote:
    """A remote entry's address."""

    url: str


def launch_spec(
    host: Host, entry: Any, fix: str
) -> tuple[list[str], dict[str, str]] | Remote | str:
    """The command line and env of a stdio entry, or why it cannot be started (a field of the
    wrong shape: a string where the host wants a list, with ``fix``: how to replace it), or a
    remote one's address."""
    if not isinstance(entry, dict):
        return f"the entry is {kind_of(entry)}, not an object"
    url = entry.get("url") or entry.get("serverUrl") or entry.get("httpUrl")
    if url:
        return Remote(str(url))
    env_key = "environment" if host.name == "opencode" else "env"
    env = entry.get(env_key) or {}
    if not isinstance(env, dict):
        return _wrong(env_key, env, "an object", fix)
    command, args = entry.get("command"), entry.get("args") or []
    if host.name == "opencode":  # one list: the program and its arguments
        if command is not None and not isinstance(command, list):
            return _wrong("command", command, "a list of strings", fix)
        command, args = (str(command[0]), command[1:]) if command else (None, [])
    elif command is not None and not isinstance(command, str):
        return _wrong("command", command, "a string", fix)
    if not isinstance(args, list):
        return _wrong("args", args, "a list of strings", fix)
    if not command:
        return "the entry has no command"
    return [command, *(str(arg) for arg in args)], {str(k): str(v) for k, v in env.items()}


@dataclass(frozen=True)
class _Place:
    """Where a host may keep its ``aletheia`` entry: a file, and a key path inside it."""

    scope: DoctorScope
    path: Path
    prefix: tuple[str, ...] = ()  # Claude Code's local scope: ("projects", <project folder>)


@dataclass(frozen=True)
class _Found:
    place: _Place
    document: Any
    entry: Any


def check_hosts(cwd: Path, cli_store: Store) -> list[HostCheck]:
    """One row per host and scope that has a config file (the user scope always), each saying
    whether the entry there works, and which one the host uses where it reads several."""
    checks: list[HostCheck] = []
    for host in HOSTS:
        checks.extend(_check_host(host, _places(host, cwd), cli_store))
    return checks


def _places(host: Host, cwd: Path) -> list[_Place]:
    """The host's places, the one it prefers last; a project file that is the user file (run
    from the home folder) is one place."""
    user = _Place("user", host.config_path("user", cwd))
    places = [user]
    if host.project_file is not None:
        project = host.config_path("project", cwd)
        if project.exists() and not same_file(project, user.path):
            places.append(_Place("project", project))
    if host.name == "claude-code":  # `claude mcp add` without --scope: ~/.claude.json's projects
        places.append(_Place("local", user.path, ("projects", str(project_root(cwd)))))
    return places


def same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file (through links, or the same path written twice)."""
    try:
        return os.path.samefile(one, other)
    except OSError:  # one of them does not exist
        return one.absolute() == other.absolute()


def _check_host(host: Host, places: list[_Place], cli_store: Store) -> list[HostCheck]:
    rows: list[HostCheck | _Found] = [_read(host, place) for place in places]
    if host.name == "claude-code":
        rows = _claude_precedence(rows)
    checks = []
    for row in rows:
        if isinstance(row, HostCheck):
            if row.scope != "local" or row.status in ("disabled", "shadowed"):
                checks.append(row)  # a local place unread is the user file's, told there
        elif row.place.scope != "local" or row.entry is not None:
            checks.append(_check_entry(host, row, cli_store))
    return checks


def _read(host: Host, place: _Place) -> HostCheck | _Found:
    """The place's document and entry (None when it has none), or the row saying why not."""

    def result(status: str, detail: str) -> HostCheck:
        return HostCheck(host.name, place.scope, str(place.path), status, detail)

    if not place.path.exists():
        return result("not-configured", "no config file")
    try:
        document = get_entry(read_text(place.path), host.fmt, ())
    except ConfigFileError as error:
        return result("unreadable", str(error))
    node = document
    for key in place.prefix:
        node = node.get(key) if isinstance(node, dict) else None
    if not place.prefix:
        shape = shape_problem(host, node)
        if shape is not None:
            return result("unreadable", shape)
    return _Found(place, document, find_entry(host, node) if isinstance(node, dict) else None)


def _claude_precedence(rows: list[HostCheck | _Found]) -> list[HostCheck | _Found]:
    """Claude Code starts the local-scope entry, else the project's (unless refused there),
    else the user's; ``disabledMcpServers`` of the project's settings turns that one off."""
    settings = _claude_project_settings(rows)
    used: str | None = None
    checked: list[HostCheck | _Found] = []
    for row in reversed(rows):  # local, project, user
        if isinstance(row, HostCheck) or row.entry is None:
            checked.append(row)
            continue
        scope, path = row.place.scope, str(row.place.path)
        if scope == "project" and SERVER_NAME in _names(settings, "disabledMcpjsonServers"):
            detail = (
                "disabled: the project's .mcp.json servers were refused (disabledMcpjsonServers)"
            )
            checked.append(HostCheck("claude-code", scope, path, "disabled", detail))
        elif used is not None:
            detail = f"not used: Claude Code starts the {used}-scope entry, which comes first"
            checked.append(HostCheck("claude-code", scope, path, "shadowed", detail))
        elif SERVER_NAME in _names(settings, "disabledMcpServers"):
            used = scope
            detail = "disabled in this project (disabledMcpServers; /mcp in Claude Code enables it)"
            checked.append(HostCheck("claude-code", scope, path, "disabled", detail))
        else:
            used = scope
            checked.append(row)
    return list(reversed(checked))


def _claude_project_settings(rows: list[HostCheck | _Found]) -> dict[str, Any]:
    """``~/.claude.json``'s ``projects[<this project>]``: its servers and switches."""
    for row in rows:
        if isinstance(row, _Found) and row.place.scope == "local":
            node = row.document
            for key in row.place.prefix:
                node = node.get(key) if isinstance(node, dict) else None
            return node if isinstance(node, dict) else {}
    return {}


def _names(settings: dict[str, Any], key: str) -> list[str]:
    names = settings.get(key)
    return [str(name) for name in names] if isinstance(names, list) else []


def _check_entry(host: Host, found: _Found, cli_store: Store) -> HostCheck:
    path = str(found.place.path)

    def result(status: str, detail: str, store: Store | None = None) -> HostCheck:
        shown = None if store is None else display_target(store)
        return HostCheck(host.name, found.place.scope, path, status, detail, shown)

    if found.entry is None:
        return result("not-configured", "no aletheia entry")
    if host.name in ("opencode", "codex") and _switched_off(found.entry):
        return result(
            "disabled", f"disabled: its enabled is false, so {host.title} does not start it"
        )
    fix = fix_hint(host, found.place, found.entry)
    spec = launch_spec(host, found.entry, fix)
    if isinstance(spec, Remote):
        return result(*_check_remote(host, found, spec.url))
    if isinstance(spec, str):
        return result("broken", spec)
    argv, env = spec
    if found.place.scope == "project" and not written_by_install(argv, env):
        return result("warning", NOT_INSTALLS)
    problem = program_problem(argv[0], host_env(env).get("PATH"))
    if problem is not None:
        return result("broken", with_fix(problem, fix))
    store = load_settings(host_env(env)).store
    other = not _same_store(store, cli_store)
    its_store, cli_store_shown = display_target(store), display_target(cli_store)  # no password
    if isinstance(store, Path) and not store.exists():
        if other:
            detail = (
                f"not started: its store {its_store} does not exist and is not the CLI's"
                f" ({cli_store_shown}); the server would make a new, empty store there, and the"
                " tool would not see the CLI's memories"
            )
            return result("warning", detail, store)
        status, detail = _probe_on_scratch(argv, env, fix)
        if status == "ok":
            detail += f" (on a throwaway store: {its_store} is made at the first save)"
        return result(status, detail, store)
    status, detail = probe_server(argv, env, fix)
    if other and status == "ok":
        status, detail = (
            "warning",
            (
                f"{detail}, but it uses the store {its_store}, not the CLI's ({cli_store_shown}):"
                " the tool and the CLI see different memories"
            ),
        )
    return result(status, detail, store)


def _check_remote(host: Host, found: _Found, url: str) -> tuple[str, str]:
    """A remote entry called as the host would (``doctor_remote``); one in a project's file is
    not: a cloned repository would choose where doctor sends the tokens of this environment."""
    shown = shown_url(url)
    entry = found.entry
    if found.place.scope == "project":
        return "remote", f"remote {shown}: {REMOTE_NOT_CALLED}"
    if _legacy_sse(host, entry):
        return "remote", f"remote {shown}: not checked (an SSE entry, not Streamable HTTP)"
    words = ["aletheia", "install", host.name, "--write", "--http", shown]
    token = _token_variable(entry)
    if token:
        words += ["--token-env", token]
    if not is_aletheia_entry(entry, url):
        words.append("--force")
    return check_remote(url, entry, f"run `{' '.join(words)}`")


REMOTE_NOT_CALLED = (
    "not called: a project's remote entry; doctor sends this environment's tokens only where"
    " your own files say (check it by hand: docs/troubleshooting.md)"
)


def _legacy_sse(host: Host, entry: dict[str, Any]) -> bool:
    """An entry of the older SSE transport: ``"type": "sse"``, or Gemini CLI's ``url`` without
    ``"type": "http"`` (its ``httpUrl`` is Streamable HTTP)."""
    kind = str(entry.get("type") or entry.get("transport") or "").lower()
    if kind == "sse":
        return True
    return host.name == "gemini-cli" and "httpUrl" not in entry and kind != "http"


def _token_variable(entry: dict[str, Any]) -> str | None:
    """The variable the entry's bearer token comes from, for a hint, or None."""
    name = entry.get("bearer_token_env_var")
    if isinstance(name, str) and name:
        return name
    headers = entry.get("headers")
    value = headers.get("Authorization") if isinstance(headers, dict) else None
    text = value if isinstance(value, str) else ""
    match = re.search(r"\{(?:env:)?([A-Za-z_][A-Za-z0-9_]*)\}", text)
    return match.group(1) if match else None


def _probe_on_scratch(argv: list[str], env: dict[str, str], fix: str) -> tuple[str, str]:
    """``probe_server`` with the entry's store (the CLI's, not made yet) moved to a folder of
    its own that is deleted afterwards: the server starts and answers as it will, and makes
    no store where the first save will."""
    with tempfile.TemporaryDirectory(prefix="aletheia-doctor-") as scratch:
        variable = load_settings(host_env(env)).store_variable
        target = Path(scratch) / DB_FILE_NAME if variable == STORE_VARIABLE else Path(scratch)
        moved = {**env, variable: str(target)}
        return probe_server(argv, moved, fix)


NOT_INSTALLS = (
    "not started: a project entry that aletheia install did not write; doctor does not run a"
    " repository's commands (check it by hand: docs/troubleshooting.md)"
)


def written_by_install(argv: list[str], env: dict[str, str]) -> bool:
    """Whether a stdio entry is what ``aletheia install`` writes for this installation: its
    command line, and only the variables install sets (the store's folder and the tool's name;
    a planted ``ALETHEIA_HUB_DB`` would send the server to a store the repository chose)."""
    command, args = mcp_command()
    return argv == [command, *args] and set(env) <= INSTALL_VARIABLES


def program_problem(
    program: str, path: str | None, *, runs: str = "the entry runs no program"
) -> str | None:
    """Why ``program`` cannot be started (missing, not executable), or None; a bare name is
    looked up on ``path`` (the PATH the host starts it with; None: this one). ``runs``: what
    to say when there is no program at all."""
    if not program:
        return runs
    if os.sep not in program and "/" not in program:
        return None if shutil.which(program, path=path) else f"{program} is not found on PATH"
    if not os.path.exists(program):
        return f"{program} does not exist"
    if os.path.isdir(program) or not os.access(program, os.X_OK):
        return f"{program} is not executable"
    return None


def _switched_off(entry: Any) -> bool:
    """OpenCode's ``"enabled": false``, Codex's ``enabled = false``."""
    return isinstance(entry, dict) and entry.get("enabled") is False


def _same_store(one: Store, other: Store) -> bool:
    if isinstance(one, Path) and isinstance(other, Path):
        try:
            return one.resolve() == other.resolve()
        except (OSError, ValueError):  # a NUL in a path, a loop of links
            return one.absolute() == other.absolute()
    return one == other
