"""``aletheia-hook <event>``: what a coding tool runs at session start, per prompt, after a
file change and at the end.

Reads the host's hook JSON on stdin (Claude Code: ``session_id``, ``cwd``, ``prompt``,
``hook_event_name``; Gemini CLI sends the same fields, its events named SessionStart,
BeforeAgent, AfterTool and SessionEnd; Codex too, its events named as Claude Code's; OpenCode's
plugin sends them too, its events named after OpenCode's hooks; Cursor sends
``conversation_id`` and ``workspace_roots`` instead of ``session_id`` and ``cwd``, its events
named sessionStart, beforeSubmitPrompt, afterFileEdit, stop and sessionEnd, and reads an answer
of its own: ``CURSOR_ANSWERS``). Events:

* ``session-start``: prints the session-start context as ``additionalContext`` in
  ``hookSpecificOutput``, where Claude Code, Gemini CLI and Codex all read it (Cursor's
  sessionStart: as ``additional_context``; before any write, so a store another process is
  writing to still gives it), then opens the session's episode;
* ``user-prompt``: records the prompt as a request of the episode (``<private>`` parts
  removed, secrets redacted; without the ``<hook_context>`` block Gemini CLI puts before the
  first prompt of a non-interactive session, which holds the session-start context);
* ``post-tool-use``: saves an ``observation`` memory of a call that changed a file (Write,
  Edit, MultiEdit, NotebookEdit; Gemini CLI's write_file and replace; OpenCode's write and
  edit; one per file of Codex's and OpenCode's apply_patch; Cursor's afterFileEdit:
  ``domain.observations``);
* ``session-end``: saves a ``summary`` memory of the session (its requests and the files it
  changed: ``domain.summaries``), then closes the episode (Cursor's stop and sessionEnd);
  ``stop`` only closes it
  (Claude Code's Stop ends a turn, not the session).

It fails open: any error, a locked store or a slow disk ends it silently with exit 0. A watchdog
stops it after :data:`CPU_DEADLINE_SECONDS` of its own work, or :data:`DEADLINE_SECONDS` whatever
happens: on a machine busy with other work (or running dozens of hooks at once) a call takes
longer by the clock, and a one-second limit by the clock lost observations it had nearly saved.
Projects listed in ``exclude_projects`` (``<data dir>/config.json``) or ``ALETHEIA_EXCLUDE`` are
never touched, whether the folder is named as written or through its links. Input and output
are UTF-8.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import sys
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from aletheia_mem.clock import Clock, system_clock
from aletheia_mem.config import Settings, load_excluded_projects, load_settings
from aletheia_mem.domain.kinds import CURSOR_EVENTS
from aletheia_mem.projects import is_excluded, project_for_directory, project_root

if TYPE_CHECKING:
    from aletheia_mem.storage.contracts import Store

CPU_DEADLINE_SECONDS = 1.0
DEADLINE_SECONDS = 3.0
# How long a write waits for another process's (a sync pull or an import may hold the store for
# a while); well inside the deadline.
STORE_WAIT_MS = 1000
# Of a prompt, only this much is cleaned and stored (the store keeps 4,000 characters of it):
# redacting megabytes would outlast the deadline and lose the prompt. The line the cut falls in
# is dropped (``episodes.read_head``): a secret cut in two would not be redacted.
PROMPT_READ_LIMIT = 100_000
CONTEXT_LIMIT = 20
DEFAULT_TOOL = "claude-code"
EVENTS = {
    "session-start": "session-start",
    "sessionstart": "session-start",
    "user-prompt": "user-prompt",
    "userpromptsubmit": "user-prompt",
    "post-tool-use": "post-tool-use",
    "posttooluse": "post-tool-use",
    "beforeagent": "user-prompt",
    "aftertool": "post-tool-use",
    "session-end": "session-end",
    "sessionend": "session-end",
    "stop": "stop",
    # OpenCode's plugin (``cli.opencode_plugin``) names its payloads after OpenCode's hooks.
    "session.created": "session-start",
    "chat.message": "user-prompt",
    "tool.execute.after": "post-tool-use",
    "session.idle": "session-end",
}
GEMINI_PROMPT_EVENT = "BeforeAgent"
CURSOR_SESSION_START = "sessionStart"
# What Cursor reads on stdout: beforeSubmitPrompt's ``continue`` lets the prompt through; its
# other hooks (sessionStart aside: the context) need nothing.
CURSOR_PROMPT = "beforeSubmitPrompt"
CURSOR_ANSWERS: dict[str, dict[str, Any]] = {CURSOR_PROMPT: {"continue": True}}
CURSOR_TOOL = "cursor"
# What Gemini CLI puts before the first prompt of a non-interactive session: the session-start
# context, its ``<`` and ``>`` escaped (so the first closing tag is the block's own).
GEMINI_HOOK_CONTEXT = re.compile(r"\A\s*<hook_context>.*?</hook_context>\s*", re.DOTALL)


def _read_payload(stream: IO[str]) -> dict[str, Any]:
    raw = stream.read()
    if not raw.strip():
        return {}
    payload = json.loads(raw)
    return payload if isinstance(payload, dict) else {}


def run(
    event: str | None,
    stdin: IO[str],
    stdout: IO[str],
    settings: Settings,
    clock: Clock = system_clock,
) -> None:
    """Handle one hook call at ``clock``'s time. Errors propagate; :func:`main` swallows them.

    Cursor's prompt hook (``ALETHEIA_TOOL=cursor``, the event ``user-prompt``, as ``install``
    writes it) is answered before its input is read: input cut short or not JSON still lets the
    prompt through."""
    answered = _cursor_prompt(settings.tool, event)
    if answered:
        _answer(stdout, CURSOR_ANSWERS[CURSOR_PROMPT])
    payload = _read_payload(stdin)
    cursor = _cursor_event(payload)
    if cursor is not None and cursor != CURSOR_SESSION_START and not answered:
        _answer(stdout, CURSOR_ANSWERS.get(cursor, {}))  # first: whatever happens next
    if event is None and cursor is not None:
        name: str | None = CURSOR_EVENTS[cursor]
    else:
        name = _event_name(event or str(payload.get("hook_event_name", "")))
    if name is None:
        return
    directory = _directory(payload, settings.cwd)
    project = project_for_directory(directory)
    excluded = load_excluded_projects()
    if is_excluded(directory, project, excluded):
        return
    session = payload.get("session_id") or payload.get("conversation_id")
    session_id = str(session) if session else None
    tool = settings.tool or DEFAULT_TOOL

    from aletheia_mem.domain import episodes
    from aletheia_mem.storage.open import open_store

    # Upkeep on opening (a reindex an upgrade owes) is left to the server or the CLI.
    store = open_store(settings.store, busy_timeout_ms=STORE_WAIT_MS, upkeep=False)
    try:
        now = clock()
        common: dict[str, Any] = {"project": project, "tool": tool, "session_id": session_id}
        if name == "session-start":
            shape = "cursor" if cursor == CURSOR_SESSION_START else "claude"
            _start_session(store, stdout, directory, common, now, shape)
        elif name == "user-prompt":
            prompt = payload.get("prompt")
            if isinstance(prompt, str):
                if payload.get("hook_event_name") == GEMINI_PROMPT_EVENT:
                    prompt = GEMINI_HOOK_CONTEXT.sub("", prompt, count=1)
                text = episodes.read_head(prompt, PROMPT_READ_LIMIT)
                episodes.record_request(store, prompt=text, now=now, **common)
        elif name == "post-tool-use":
            from aletheia_mem.domain.observations import save_observation

            root = project_root(directory)
            save_observation(
                store,
                payload=payload,
                root=root,
                now=now,
                excluded=excluded,
                cwd=directory,
                **common,
            )
        elif name == "session-end":
            from aletheia_mem.domain.summaries import end_session

            end_session(store, now=now, **common)
        else:
            episodes.end_episode(store, now=now, **common)
    finally:
        store.close()


def _cursor_prompt(tool: str | None, event: str | None) -> bool:
    """Whether this is Cursor's prompt hook as ``install`` writes it, whatever its input."""
    return (tool or "").strip() == CURSOR_TOOL and _event_name(event) == "user-prompt"


def _event_name(event: str | None) -> str | None:
    """The event ``run`` handles for a name given or sent (``UserPromptSubmit``,
    ``user-prompt``), else None."""
    return EVENTS.get((event or "").strip().lower())


def _cursor_event(payload: dict[str, Any]) -> str | None:
    """The Cursor event of a payload Cursor sent (its names are camelCase: ``stop``, where
    Claude Code sends ``Stop``), else None."""
    name = payload.get("hook_event_name")
    return name if isinstance(name, str) and name in CURSOR_EVENTS else None


def _directory(payload: dict[str, Any], default: Path) -> Path:
    """The session's folder: ``cwd``, else the first of Cursor's ``workspace_roots`` (Cursor
    runs a user's hooks in ``~/.cursor``), else ``default``."""
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd.strip():
        return Path(cwd)
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str) and roots[0].strip():
        return Path(roots[0])
    return default


def _answer(stdout: IO[str], answer: dict[str, Any]) -> None:
    stdout.write(json.dumps(answer, ensure_ascii=False) + "\n")
    stdout.flush()


def _start_session(
    store: Store,
    stdout: IO[str],
    directory: Path,
    common: dict[str, Any],
    now: int,
    shape: str = "claude",
) -> None:
    """Print the context first: it only reads, so another process's write does not keep it
    from the host; then open the episode and note the repository (writes, which may wait).
    ``shape``: where the host reads it (Cursor: ``additional_context``; the others:
    ``hookSpecificOutput.additionalContext``)."""
    from aletheia_mem.domain import episodes
    from aletheia_mem.domain.context import build_context
    from aletheia_mem.domain.formatting import wrap_recall
    from aletheia_mem.domain.repositories import note_repository, repository_log

    context = wrap_recall(build_context(store, common["project"], CONTEXT_LIMIT, now=now))
    if shape == "cursor":
        _answer(stdout, {"additional_context": context})
    else:
        specific = {"hookEventName": "SessionStart", "additionalContext": context}
        _answer(stdout, {"hookSpecificOutput": specific})
    episodes.start_episode(store, now=now, **common)
    log = repository_log(store)
    if log is not None:
        note_repository(log, directory, now)  # for Write to tools


def _give_up(signum: int, frame: Any) -> None:
    os._exit(0)


USAGE = """Usage: aletheia-hook EVENT   (also: aletheia hook EVENT)

  What a coding tool runs at session start, per prompt, after a file change and at the end;
  reads the host's hook JSON on standard input. EVENT: session-start, user-prompt,
  post-tool-use, session-end or stop; without it, the payload's hook_event_name. Always exits
  0 and stays silent on any error.

Options:
  --version   Show the version and exit.
  -h, --help  Show this message and exit.
"""


def main(argv: list[str] | None = None) -> None:
    """Entry point of ``aletheia-hook``: ``--help``, ``--version``, else :func:`run_hook`."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--help", "-h"):
        sys.stdout.write(USAGE)
    elif args and args[0] == "--version":
        from aletheia_mem import __version__

        sys.stdout.write(f"aletheia-hook, version {__version__}\n")
    else:
        run_hook(args[0] if args else None)


def run_hook(event: str | None) -> None:
    """Handle one hook call and end the process: always exit 0, silent on any error."""
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _give_up)
        signal.setitimer(signal.ITIMER_REAL, DEADLINE_SECONDS)
        signal.signal(signal.SIGPROF, _give_up)
        signal.setitimer(signal.ITIMER_PROF, CPU_DEADLINE_SECONDS)
    try:
        # Hosts send and read UTF-8 whatever the console's code page (cp1252 on Windows pipes).
        stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
        stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n")
        try:
            settings = load_settings()
        except Exception:  # Cursor's prompt still gets its answer
            if _cursor_prompt(os.environ.get("ALETHEIA_TOOL"), event):
                _answer(stdout, CURSOR_ANSWERS[CURSOR_PROMPT])
            raise
        run(event, stdin, stdout, settings)
        stdout.flush()
    except BaseException:  # noqa: S110 - a hook must never fail the host
        pass
    os._exit(0)
