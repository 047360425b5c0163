"""The hub's audit trail: one row per tools/call, never with the arguments."""

from __future__ import annotations

from typing import Any, Literal

from aletheia_mem.projects import normalize_project
from aletheia_mem.storage.base import AuditEntry
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import MAX_PROJECT_LENGTH, AppContext
from aletheia_mem.tools.registry import ToolResult

Outcome = Literal["ok", "error", "refused"]
REFUSED_SUFFIX = "is not allowed for this token."
# Tools that work on one project, the caller's default one when none is named.
SINGLE_PROJECT_TOOLS = frozenset(
    {"session_start_context", "save_memory", "work_state_read", "work_state_write"}
)
# These write their own audit row (with the item's project) when they succeed.
SELF_AUDITED_TOOLS = frozenset({"dismiss_memory", "restore_memory"})


def outcome_of(result: ToolResult, refused: bool) -> Outcome:
    """``refused`` for a scope or project refusal, ``error`` for any other failure, else ``ok``."""
    if refused or (result.is_error and result.text.endswith(REFUSED_SUFFIX)):
        return "refused"
    return "error" if result.is_error else "ok"


def call_project(app: AppContext, tool: str, arguments: dict[str, Any]) -> str | None:
    """The project a call is about: the one named, else the caller's default for one-project
    tools, else none (a search across the caller's projects)."""
    value = arguments.get("project")
    if isinstance(value, str) and value.strip():
        return normalize_project(value)[:MAX_PROJECT_LENGTH]
    if tool in SINGLE_PROJECT_TOOLS:
        return app.allowed_projects[0] if app.allowed_projects else app.default_project
    return None


def record_call(
    store: SqliteStore,
    *,
    at: int,
    actor: str,
    tool: str,
    project: str | None,
    outcome: Outcome,
) -> None:
    """Write the call's audit row; a successful dismiss or restore already wrote its own."""
    if outcome == "ok" and tool in SELF_AUDITED_TOOLS:
        return
    store.add_audit(AuditEntry(at=at, actor=actor, tool=tool, project=project, result=outcome))


def record_event(
    store: SqliteStore, *, at: int, actor: str, event: str, outcome: Outcome, detail: str | None
) -> None:
    """A hub event that is not a tool call (sync pages, 401 and 429 answers)."""
    store.add_audit(
        AuditEntry(at=at, actor=actor, tool=event, project=None, result=outcome, detail=detail)
    )
