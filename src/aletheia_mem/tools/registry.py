"""The 13 tools: name, title, description, input schema, annotations and handler.

A handler is named (``"write_tools.save_memory"``) and imported on its first call: answering
``initialize`` and ``tools/list`` then never loads the domain (redaction, recall, rules), which
is a fifth of the stdio server's start.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from aletheia_mem.errors import AletheiaError
from aletheia_mem.tools import schemas, structured
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.arguments import applicable, check_arguments
from aletheia_mem.tools.structured import Output

logger = logging.getLogger(__name__)
# A write tool answers text; a read tool answers text and the same answer as data.
Arguments = dict[str, Any]
Handler = Callable[[AppContext, Arguments], str] | Callable[[AppContext, Arguments], Output]


@dataclass(frozen=True)
class ToolSpec:
    """An MCP tool: its name, texts and schemas, and the handler that answers it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    handler_name: str  # "module.function" in aletheia_mem.tools
    read_only: bool
    destructive: bool = False
    output_schema: dict[str, Any] | None = None
    # (argument, the others that apply when it is given): the rest are then ignored unchecked
    only_with: tuple[str, tuple[str, ...]] | None = None

    @property
    def handler(self) -> Handler:
        """The handler function, its module imported now if it was not yet."""
        return _resolve(self.handler_name)

    def definition(self, structured: bool = True) -> dict[str, Any]:
        """The tool as ``tools/list`` shows it; ``structured`` adds its outputSchema, if any."""
        annotations: dict[str, Any] = {"title": self.title, "readOnlyHint": self.read_only}
        if self.read_only:
            annotations["openWorldHint"] = False
        else:
            annotations.update(
                destructiveHint=self.destructive, idempotentHint=True, openWorldHint=False
            )
        definition = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
            "annotations": annotations,
        }
        if structured and self.output_schema is not None:
            definition["outputSchema"] = self.output_schema
        return definition


@cache
def _resolve(handler_name: str) -> Handler:
    module, function = handler_name.split(".")
    handler: Handler = getattr(importlib.import_module(f"{__package__}.{module}"), function)
    return handler


@dataclass(frozen=True)
class ToolResult:
    """A tool's answer: its text, whether it is an error, and any structured content."""

    text: str
    is_error: bool = False
    structured: dict[str, Any] | None = None  # structuredContent, for tools with an outputSchema


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "session_start_context",
        "Session-start context",
        "Call this first in every session. Loads what the shared memory knows about the"
        " project: pinned memories, recent memories by day, recent session requests, up to 10"
        " active facts and the enabled rules, cut to about 6000 characters. Then use search,"
        " timeline and get_observations for details. Read-only.",
        schemas.SESSION_START_CONTEXT,
        "session_tools.session_start_context",
        read_only=True,
        output_schema=structured.SESSION_START_CONTEXT,
    ),
    ToolSpec(
        "search",
        "Search memory",
        "Search memories and facts, or find memories by exact file path. Use it before you"
        " decide or change something, to recall earlier decisions, gotchas and bugfixes saved"
        " by any coding tool. Returns an index, one line per hit (#id date [type] title), with"
        " matching facts first; then call get_observations with the ids you need, or timeline"
        ' for context. An omitted project means the working directory\'s project; "*" means'
        " every project. Read-only.",
        schemas.SEARCH,
        "memory_tools.search",
        read_only=True,
        output_schema=structured.SEARCH,
        only_with=("file", ("project", "file_suffix", "limit")),
    ),
    ToolSpec(
        "timeline",
        "Timeline around a memory",
        "Show the memories before and after one memory, in time order, with an arrow on the"
        " anchor. Use it after search to see what happened around a hit. Read-only.",
        schemas.TIMELINE,
        "memory_tools.timeline",
        read_only=True,
        output_schema=structured.TIMELINE,
    ),
    ToolSpec(
        "get_observations",
        "Get full memories",
        "Fetch full text by id: title, project, time, source, narrative, facts and files."
        " Use it after search or timeline; pass every id in one call. Read-only.",
        schemas.GET_OBSERVATIONS,
        "memory_tools.get_observations",
        read_only=True,
        output_schema=structured.GET_OBSERVATIONS,
    ),
    ToolSpec(
        "fact_history",
        "Fact history",
        "Show how the facts about one subject (a service, a library, a setting) changed over"
        " time. Default: current facts only; include_superseded lists replaced ones; as_of"
        " shows the facts valid at a date. Read-only.",
        schemas.FACT_HISTORY,
        "knowledge_tools.fact_history",
        read_only=True,
        output_schema=structured.FACT_HISTORY,
    ),
    ToolSpec(
        "list_rules",
        "List rules",
        "List the enabled standing rules, one per line, with id, date added, source and"
        " last-confirmed date. A rule that needs a re-check ends with [re-check: reason]; it"
        " stays enabled. Check it before add_rule. Read-only. No input.",
        schemas.LIST_RULES,
        "knowledge_tools.list_rules",
        read_only=True,
        output_schema=structured.LIST_RULES,
    ),
    ToolSpec(
        "work_state_read",
        "Read a work-state list",
        "Read a named list written by work_state_write, such as a to-do list, as JSON. Read-only.",
        schemas.WORK_STATE_READ,
        "session_tools.work_state_read",
        read_only=True,
        output_schema=structured.WORK_STATE_READ,
    ),
    ToolSpec(
        "save_memory",
        "Save a memory",
        "Store one durable memory that other sessions and tools should recall: a decision, a"
        " gotcha, a bugfix, a discovery. Secrets are redacted first. Saving the same project,"
        " title and text again returns the existing id. Optional facts record values that"
        " change over time; optional files let search find it by path. Write.",
        schemas.SAVE_MEMORY,
        "write_tools.save_memory",
        read_only=False,
    ),
    ToolSpec(
        "add_rule",
        "Add a rule",
        "Add one standing rule that every tool should follow. Check list_rules first; an"
        " identical rule is not added twice. The owner then writes rules to each tool from the"
        " Rules page. Write.",
        schemas.ADD_RULE,
        "knowledge_tools.add_rule",
        read_only=False,
    ),
    ToolSpec(
        "confirm_rule",
        "Confirm a rule",
        "Record that a rule was re-checked and still holds: only its last-confirmed date"
        " changes. Use it on rules that list_rules flags with [re-check: ...]. Write.",
        schemas.CONFIRM_RULE,
        "knowledge_tools.confirm_rule",
        read_only=False,
    ),
    ToolSpec(
        "dismiss_memory",
        "Dismiss an item",
        "Hide a memory, observation, fact or episode from search and context without"
        " deleting it, for example a duplicate or something no longer true. Write, reversible"
        " with restore_memory.",
        schemas.DISMISS_MEMORY,
        "write_tools.dismiss_memory",
        read_only=False,
    ),
    ToolSpec(
        "restore_memory",
        "Restore an item",
        "Undo dismiss_memory: the item shows in search and context again. Write.",
        schemas.RESTORE_MEMORY,
        "write_tools.restore_memory",
        read_only=False,
    ),
    ToolSpec(
        "work_state_write",
        "Write a work-state list",
        "Save a named list for a project, such as a to-do list. Writing an existing name"
        " replaces all its items, so send the full list. Write.",
        schemas.WORK_STATE_WRITE,
        "session_tools.work_state_write",
        read_only=False,
        destructive=True,
    ),
)
TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
WRITE_TOOLS = frozenset(tool.name for tool in TOOLS if not tool.read_only)
# The writes that can leave a live memory without a current vector: a new or rewritten one, or
# one restored after it was dismissed before it was embedded. Semantic recall embeds it soon.
EMBEDDING_WRITES = frozenset({"save_memory", "work_state_write", "restore_memory"})


def call_tool(app: AppContext, spec: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
    """Run one tool; expected failures become error results with their message."""
    try:
        given = applicable(arguments, spec.only_with)
        answer = spec.handler(app, check_arguments(spec.input_schema, given))
    except AletheiaError as error:  # a damaged or read-only store too (StoreBrokenError...)
        return ToolResult(error.message, is_error=True)
    if app.semantic is not None and spec.name in EMBEDDING_WRITES:
        app.semantic.notice_saved()  # a signal to the embedding thread; the reply never waits
    if isinstance(answer, Output):
        return ToolResult(answer.text, structured=answer.structured)
    return ToolResult(answer)
