"""Which ``aletheia`` entry in a host's config is Aletheia's own, and how ours is updated.

An entry is Aletheia's own when any of these holds:

* its command line (``command`` and ``args``; OpenCode's ``command`` array) runs a program
  named ``aletheia-mcp`` (in any folder, ``.exe`` too), ``aletheia mcp`` or ``aletheia-mem mcp``
  (``uvx``, ``pipx run``), or Python with ``aletheia_mem`` (``-m``, ``-c``);
* its environment (``env``; OpenCode's ``environment``) sets ``ALETHEIA_TOOL``, which every
  entry ``install`` writes has;
* it is a remote entry (a URL, no command) whose address is the one given with ``--http`` (to
  ``install``, or to ``uninstall``): any server answers at some ``/mcp``, so a remote entry is
  ours only when the user names its address.

Ours is updated without ``--force`` (after a venv moved, pip to pipx, a new release), keeping
the settings a user added to it (``USER_KEYS``: Gemini CLI's ``trust``, ``timeout``) and, in a
user-scope file, the ``ALETHEIA_*`` variables added to its environment, but nothing that changes
what runs or where (``envFile``, ``cwd``, ``PYTHONPATH``, ``LD_PRELOAD``; see
``with_user_keys``); anything else named ``aletheia`` is someone else's.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The keys ``install`` writes in some host's entry: the rest of an entry of ours is the user's.
ENTRY_KEYS = frozenset(
    {
        "type",
        "transport",
        "command",
        "args",
        "env",
        "environment",
        "url",
        "serverUrl",
        "headers",
        "enabled",
        "bearer_token_env_var",
    }
)
# The settings of a user's own that a reinstall keeps in an entry of ours: whether and how long
# the host waits for it, which tools it offers and approves. None changes what runs.
USER_KEYS = frozenset(
    {
        "trust",
        "timeout",
        "startup_timeout_sec",
        "tool_timeout_sec",
        "disabled",
        "autoApprove",
        "alwaysAllow",
        "includeTools",
        "excludeTools",
        "enabled_tools",
        "disabled_tools",
        "description",
    }
)
ENV_KEYS = ("env", "environment")
URL_KEYS = ("url", "serverUrl", "httpUrl")
TOOL_VARIABLE = "ALETHEIA_TOOL"
ALETHEIA_PREFIX = "ALETHEIA_"  # the only variables of an entry of ours that a reinstall keeps
_PROGRAMS = {"aletheia-mcp", "aletheia-mcp.exe", "aletheia-mcp-script.py"}
_CLI_NAMES = {"aletheia", "aletheia.exe", "aletheia-mem", "aletheia-mem.exe"}
_MODULE = re.compile(r"\baletheia_mem\b")


def _words(entry: dict[str, Any]) -> list[str]:
    command = entry.get("command")
    words = list(command) if isinstance(command, list) else [command]
    args = entry.get("args")
    if isinstance(args, list):
        words += args
    return [word for word in words if isinstance(word, str)]


def _base(word: str) -> str:
    return re.split(r"[\\/]", word)[-1].lower()


def runs_our_server(entry: dict[str, Any]) -> bool:
    """Whether the entry's command line starts Aletheia's stdio server."""
    words = _words(entry)
    for index, word in enumerate(words):
        name = _base(word)
        if name in _PROGRAMS or _MODULE.search(word):
            return True
        if name in _CLI_NAMES and index + 1 < len(words) and words[index + 1] == "mcp":
            return True
    return False


def entry_tool(entry: Any) -> str | None:
    """The ``ALETHEIA_TOOL`` the entry's environment sets, or None."""
    if not isinstance(entry, dict):
        return None
    for key in ENV_KEYS:
        env = entry.get(key)
        if isinstance(env, dict) and isinstance(env.get(TOOL_VARIABLE), str):
            return str(env[TOOL_VARIABLE])
    return None


def entry_url(entry: Any) -> str | None:
    """A remote entry's address, or None (a stdio entry, or no entry)."""
    if not isinstance(entry, dict) or entry.get("command"):
        return None
    for key in URL_KEYS:
        if isinstance(entry.get(key), str):
            return str(entry[key])
    return None


def is_aletheia_entry(entry: Any, url: str | None = None) -> bool:
    """Whether ``entry`` is Aletheia's own (see the module's rule); ``url``: the remote
    address given with ``--http``, if any."""
    if not isinstance(entry, dict):
        return False
    if runs_our_server(entry) or entry_tool(entry) is not None:
        return True
    address = entry_url(entry)
    if address is None or url is None:
        return False
    return address.rstrip("/") == url.rstrip("/")


def with_user_keys(existing: Any, wanted: dict[str, Any], *, own_file: bool) -> dict[str, Any]:
    """``wanted`` plus the settings of ``USER_KEYS`` the user added to our ``existing`` entry,
    and, in the user's own file (``own_file``: user scope, not a repository's project file), the
    ``ALETHEIA_*`` variables added to its environment (ours win where both set one).

    Nothing else is kept: a key that changes how or where the server starts (VS Code's
    ``envFile``, ``cwd``, Codex's ``env_vars``) or a variable (``PYTHONPATH``, ``LD_PRELOAD``)
    could run a repository's code, and in a project file, which a cloned repository can plant,
    an ``ALETHEIA_HUB_DB`` or ``ALETHEIA_DATA_DIR`` would send memories to a store it chose.
    """
    if not isinstance(existing, dict):
        return wanted
    merged = dict(wanted)
    for key in ENV_KEYS if own_file else ():
        theirs, ours = existing.get(key), wanted.get(key)
        if isinstance(theirs, dict) and isinstance(ours, dict):
            added = {
                name: value
                for name, value in theirs.items()
                if name not in ours and str(name).startswith(ALETHEIA_PREFIX)
            }
            merged[key] = {**ours, **added}
    for key, value in existing.items():
        if key in USER_KEYS and key not in merged:
            merged[key] = value
    return merged


# The parts of an entry whose values are secrets as often as not (a bearer token, an API key in
# a variable): a message shows their names only.
SECRET_MAPS = frozenset({"headers", "env", "environment", "http_headers", "env_http_headers"})
MASK = "***"


def _masked(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_masked(item) for item in value]
    return MASK


# The lists of an entry that hold a command line (OpenCode's ``command`` is the whole of it).
ARGUMENT_LISTS = frozenset({"args", "command"})
# An option whose value is a secret: its name holds one of these words (``--token``,
# ``--client-secret``, ``--api-key``, ``--auth``), or it is ``-p`` (a password, as in mysql).
_SECRET_OPTION = re.compile(r"-+[^=]*(token|secret|password|passwd|pwd|key|auth|credential)", re.I)
_SHORT_SECRET_OPTIONS = frozenset({"-p"})


def _is_secret_option(arg: str) -> bool:
    return arg in _SHORT_SECRET_OPTIONS or bool(_SECRET_OPTION.match(arg))


def _masked_args(args: list[Any]) -> list[Any]:
    """A command line with the value of each secret option masked: the argument after it, or
    what follows its ``=`` (``--token=...``)."""
    shown: list[Any] = []
    after_secret = False
    for arg in args:
        if after_secret:
            shown.append(MASK)
            after_secret = False
            continue
        shown.append(arg)
        if not isinstance(arg, str) or not arg.startswith("-"):
            continue
        name, equals, _ = arg.partition("=")
        if _is_secret_option(name):
            if equals:
                shown[-1] = f"{name}={MASK}"
            else:
                after_secret = True
    return shown


def shown_entry(entry: Any) -> str:
    """An entry as a message shows it: JSON with the values of its headers and environment
    masked (their names kept), the value after each option of its command line named for a
    secret (``--token``, ``--password``, ``--api-key``, ``-p``, ``--secret=...``) masked, and
    what else looks like a secret (a token in ``args``, a password in a URL) redacted."""
    from aletheia_mem.domain.redaction import redact_secrets  # only when a message needs it

    if isinstance(entry, dict):
        entry = {
            key: _masked(value)
            if key in SECRET_MAPS
            else _masked_args(value)
            if key in ARGUMENT_LISTS and isinstance(value, list)
            else value
            for key, value in entry.items()
        }
    return redact_secrets(json.dumps(entry, ensure_ascii=False))


def shown_url(url: str) -> str:
    """A URL as a message shows it: a password or token in it redacted."""
    from aletheia_mem.domain.redaction import redact_secrets

    return redact_secrets(url)
