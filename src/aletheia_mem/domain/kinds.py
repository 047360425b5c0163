"""The memory kinds capture hooks make, and the host tools whose calls make observations: apart
from ``domain.observations`` so that session context and the installer name them without
loading what saves them."""

from __future__ import annotations

OBSERVATION_KIND = "observation"
SUMMARY_KIND = "summary"
# The tools whose calls change files (Claude Code's names); the install's PostToolUse matcher.
FILE_TOOLS = ("Write", "Edit", "MultiEdit", "NotebookEdit")
# Gemini CLI's tools that change files, and the Claude Code tool each is told as (same input
# fields: ``file_path`` and ``content``, or ``file_path``, ``old_string`` and ``new_string``).
GEMINI_FILE_TOOLS = {"write_file": "Write", "replace": "Edit"}
# Codex's tool that changes files: its ``tool_input.command`` is the patch text, whose
# ``*** Add File:``, ``*** Update File:`` and ``*** Delete File:`` lines name each file.
CODEX_FILE_TOOLS = ("apply_patch",)
# OpenCode's tools that change files, and the Claude Code tool each is told as; their input
# fields are renamed (``filePath``, ``content``, ``oldString``, ``newString``). Its
# ``apply_patch`` (for GPT models) holds Codex's patch text in ``patchText``.
OPENCODE_FILE_TOOLS = {"write": "Write", "edit": "Edit"}
OPENCODE_FIELDS = {
    "filePath": "file_path",
    "content": "content",
    "oldString": "old_string",
    "newString": "new_string",
}
OPENCODE_PATCH_TOOL = "apply_patch"
# The hook_event_name of the payloads OpenCode's plugin sends after a tool call.
OPENCODE_TOOL_EVENT = "tool.execute.after"
# Cursor's hook after the agent edited a file: ``file_path`` (absolute) and ``edits``, each
# ``old_string`` and ``new_string``, told as Claude Code's MultiEdit (one edit reads as an Edit).
CURSOR_EDIT_EVENT = "afterFileEdit"
# Cursor's hook events (camelCase, as its payloads' hook_event_name) -> the aletheia-hook event
# each runs. Its ``stop`` ends a turn and saves the summary of the conversation so far (a later
# one replaces it); ``sessionEnd`` comes when the conversation is closed, maybe long after.
CURSOR_EVENTS = {
    "sessionStart": "session-start",
    "beforeSubmitPrompt": "user-prompt",
    "afterFileEdit": "post-tool-use",
    "stop": "session-end",
    "sessionEnd": "session-end",
}
