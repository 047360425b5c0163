"""OpenCode's capture: a plugin file, ``aletheia.js``, since OpenCode runs no command hooks.

OpenCode (1.18) loads every ``*.js``/``*.ts`` file in the ``plugins`` (or ``plugin``) folder of
its config folder (``~/.config/opencode``) and of a project's ``.opencode``. A plugin module's
export is an async function given ``{client, project, worktree, directory, $}`` that returns
its hooks. Ours runs ``aletheia-hook`` on:

* ``chat.message`` (the user's message, its text parts): ``user-prompt``;
* ``tool.execute.after`` (``{tool, sessionID, callID, args}``) of a file tool: ``post-tool-use``;
* the ``session.idle`` event (a turn is over; a later prompt reopens the session and its next
  end sums up all of it): ``session-end``;
* the first sight of a session (``session.created`` or one of the above): ``session-start``,
  whose context ``experimental.chat.system.transform`` adds to the system prompt.

Calls run one after another, each stopped after a timeout; errors are swallowed and nothing
but the context's first wait holds OpenCode up. ``dispose`` (OpenCode closing) waits, bounded,
for the calls still running, so a one-shot ``opencode run`` keeps its summary.
"""

from __future__ import annotations

import json
from pathlib import Path

from aletheia_mem.cli.clients import Action, Change, ConfigFileError, read_text
from aletheia_mem.cli.hosts import HOSTS_BY_NAME, Scope
from aletheia_mem.domain.kinds import OPENCODE_FILE_TOOLS, OPENCODE_PATCH_TOOL

PLUGIN_FILE = "aletheia.js"
PLUGIN_FOLDER = "plugins"
PLUGIN_MARK = "// aletheia-hook plugin: written by `aletheia install opencode --hooks`"
TIMEOUT_MS = 5000

PLUGIN_TEMPLATE = """\
{mark}; a later install replaces this file.
import {{ spawn }} from "node:child_process";

const PROGRAM = {program};
const ENV = {env};
const FILE_TOOLS = {tools};
const TIMEOUT_MS = {timeout};

function runHook(event, payload) {{
  return new Promise((resolve) => {{
    let out = "";
    let child;
    try {{
      child = spawn(PROGRAM[0], [...PROGRAM.slice(1), event], {{
        env: {{ ...process.env, ...ENV }},
        stdio: ["pipe", "pipe", "ignore"],
      }});
    }} catch {{
      resolve("");
      return;
    }}
    const timer = setTimeout(() => {{
      try {{ child.kill(); }} catch {{}}
      resolve(out);
    }}, TIMEOUT_MS);
    child.on("error", () => {{ clearTimeout(timer); resolve(""); }});
    child.on("close", () => {{ clearTimeout(timer); resolve(out); }});
    child.stdout.on("data", (data) => {{ out += data; }});
    child.stdin.on("error", () => {{}});
    child.stdin.end(JSON.stringify(payload));
  }});
}}

function bounded(promise, fallback) {{
  return new Promise((resolve) => {{
    const timer = setTimeout(() => resolve(fallback), TIMEOUT_MS);
    promise.then(
      (value) => {{ clearTimeout(timer); resolve(value); }},
      () => {{ clearTimeout(timer); resolve(fallback); }},
    );
  }});
}}

function contextOf(out) {{
  try {{
    return JSON.parse(out).hookSpecificOutput.additionalContext || "";
  }} catch {{
    return "";
  }}
}}

export default async function AletheiaPlugin({{ directory }}) {{
  let queue = Promise.resolve();
  const started = new Map();
  const cwd = directory || process.cwd();

  function call(event, sessionID, name, extra) {{
    const payload = {{ session_id: sessionID, cwd, hook_event_name: name, ...extra }};
    const done = queue.then(() => runHook(event, payload));
    queue = done.then(() => {{}}, () => {{}});
    return done;
  }}

  function start(sessionID) {{
    if (!sessionID) return Promise.resolve("");
    if (!started.has(sessionID)) {{
      const answer = call("session-start", sessionID, "session.created", {{}});
      started.set(sessionID, answer.then(contextOf));
    }}
    return started.get(sessionID);
  }}

  return {{
    event: async ({{ event }}) => {{
      try {{
        const properties = (event && event.properties) || {{}};
        if (event.type === "session.created") start(properties.info && properties.info.id);
        if (event.type === "session.idle" && started.has(properties.sessionID)) {{
          call("session-end", properties.sessionID, "session.idle", {{}});
        }}
      }} catch {{}}
    }},
    "chat.message": async (input, output) => {{
      try {{
        const parts = (output && output.parts) || [];
        const prompt = parts
          .filter((part) => part.type === "text" && !part.synthetic && !part.ignored)
          .map((part) => part.text)
          .join("\\n");
        start(input.sessionID);
        if (prompt.trim()) call("user-prompt", input.sessionID, "chat.message", {{ prompt }});
      }} catch {{}}
    }},
    "tool.execute.after": async (input) => {{
      try {{
        if (!FILE_TOOLS.includes(input.tool)) return;
        start(input.sessionID);
        call("post-tool-use", input.sessionID, "tool.execute.after", {{
          tool_name: input.tool,
          tool_input: input.args,
        }});
      }} catch {{}}
    }},
    "experimental.chat.system.transform": async (input, output) => {{
      try {{
        if (!input || !input.sessionID) return;
        const context = await bounded(start(input.sessionID), "");
        if (context) output.system.push(context);
      }} catch {{}}
    }},
    dispose: async () => {{
      await bounded(queue, undefined);
    }},
  }};
}}
"""


def plugin_path(scope: Scope, cwd: Path) -> Path:
    """``aletheia.js`` in the ``plugins`` folder beside the ``opencode.json`` of the MCP entry
    (``~/.config/opencode``; a project's ``.opencode``)."""
    config = HOSTS_BY_NAME["opencode"].config_path(scope, cwd)
    folder = config.parent / ".opencode" if scope == "project" else config.parent
    return folder / PLUGIN_FOLDER / PLUGIN_FILE


def plugin_text(program: list[str], env: dict[str, str]) -> str:
    """The plugin's source: ``program`` (``aletheia-hook``'s argv) run with ``env`` added."""
    return PLUGIN_TEMPLATE.format(
        mark=PLUGIN_MARK,
        program=json.dumps(program, ensure_ascii=False),
        env=json.dumps(env, ensure_ascii=False),
        tools=json.dumps([*OPENCODE_FILE_TOOLS, OPENCODE_PATCH_TOOL]),
        timeout=TIMEOUT_MS,
    )


class ForeignPlugin(ConfigFileError):
    """A plugin file of Aletheia's name that is the user's: a conflict, not a broken file."""


def plan_opencode_plugin(path: Path, program: list[str], env: dict[str, str]) -> Change:
    """Write (or rewrite) our plugin file; a file of that name without our mark is the user's.

    Raises:
        ForeignPlugin: the file is someone else's; the message names it.
        ConfigFileError: the file cannot be read; the message names it.
    """
    old = read_text(path)
    if old and PLUGIN_MARK not in old:
        raise ForeignPlugin(
            f"{path} is not Aletheia's plugin; move it away to install the capture plugin."
        )
    new = plugin_text(program, env)
    action: Action = "unchanged" if old == new else ("replace" if old else "add")
    return Change(path, action, old, new, None)
