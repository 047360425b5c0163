"""The hub's audit trail: one row per tools/call, naming the project it acted on, never with
the arguments' values."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any, Literal

from anyio import to_thread

from aletheia_mem.domain import dismissals
from aletheia_mem.errors import AletheiaError
from aletheia_mem.hub.write_turns import WriteTurns
from aletheia_mem.projects import normalize_project
from aletheia_mem.server.ratelimit import RateLimiter
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.contracts import AuditLog
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.tools.app import ALL_PROJECTS, MAX_PROJECT_LENGTH, AppContext, target_project
from aletheia_mem.tools.arguments import check_arguments
from aletheia_mem.tools.registry import TOOLS_BY_NAME, ToolResult

Outcome = Literal["ok", "error", "refused"]
REFUSED_SUFFIX = "is not allowed for this token."
# Tools that work on one project, the caller's default one when none is named.
SINGLE_PROJECT_TOOLS = frozenset(
    {"session_start_context", "save_memory", "work_state_read", "work_state_write"}
)
# These write their own audit row (with the item's project) when they succeed.
SELF_AUDITED_TOOLS = frozenset({"dismiss_memory", "restore_memory"})
# Audit rows of rate-limit refusals per token a minute, in each process: a client that ignores
# Retry-After would otherwise add a row (and a write) per refused request, hundreds a second.
LIMITED_AUDITED_PER_MINUTE = 20


def outcome_of(result: ToolResult, refused: bool) -> Outcome:
    """``refused`` for a scope or project refusal, ``error`` for any other failure, else ``ok``."""
    if refused or (result.is_error and result.text.endswith(REFUSED_SUFFIX)):
        return "refused"
    return "error" if result.is_error else "ok"


def outside_token(project: str | None, projects: tuple[str, ...] | None) -> bool:
    """Whether a call's project (``call_project``) is one the token may not touch: a failed
    call there is a refusal, whatever the caller was told (another project's id is answered as
    a missing one)."""
    if project is None or projects is None:
        return False
    return project not in (*projects, ",".join(projects), ALL_PROJECTS)  # see token_scope


def call_project(app: AppContext, tool: str, arguments: dict[str, Any]) -> str | None:
    """The project a call acted on, for its audit row: the one named, else the item's (a rule's
    scope, a dismissed item's project), else the caller's default one for a one-project call
    (a search, a save), else the token's projects (``*`` for every project) for a read across
    them (``fact_history``, ``list_rules``). None when the arguments name nothing that exists."""
    try:
        args = check_arguments(TOOLS_BY_NAME[tool].input_schema, arguments)
        return _bounded(_call_project(app, tool, args))
    except (AletheiaError, KeyError, TypeError, ValueError):
        return None


def _bounded(project: str | None) -> str | None:
    return None if project is None else project[:MAX_PROJECT_LENGTH]


def _call_project(app: AppContext, tool: str, args: dict[str, Any]) -> str | None:
    value = args.get("project")
    if isinstance(value, str) and value.strip():
        if value.strip() == ALL_PROJECTS:
            return token_scope(app.allowed_projects)
        return normalize_project(value)
    if tool == "add_rule":
        if args["scopeTier"] != "project":
            return ALL_PROJECTS
        name = (args.get("scopeName") or "").strip()
        return normalize_project(name) if name else target_project(app, None)
    if tool == "confirm_rule":
        rule = app.store.get_rule(args["id"].strip())
        if rule is None:
            return None
        return rule.scope_name if rule.scope_tier == "project" else ALL_PROJECTS
    if tool in ("dismiss_memory", "restore_memory"):
        return app.store.project_of(dismissals.table_for(args["type"]), int(args["id"]))
    if tool == "get_observations":
        found = {app.store.project_of("memories", int(n)) for n in args.get("ids", [])[:10]}
        return ",".join(sorted(name for name in found if name is not None)) or None
    if tool == "timeline" and args.get("anchor") is not None:
        return app.store.project_of("memories", int(args["anchor"]))
    if tool in SINGLE_PROJECT_TOOLS or tool in ("search", "timeline"):
        return target_project(app, None)  # a search without project reads this one alone
    # fact_history without a project, list_rules: a read across every project the token has
    return token_scope(app.allowed_projects)


def token_scope(projects: tuple[str, ...] | None) -> str:
    """A token's projects as an audit row names them: ``shop,billing``, or ``*`` for all."""
    return ALL_PROJECTS if projects is None else ",".join(projects)[:MAX_PROJECT_LENGTH]


def _safe(text: str | None) -> str | None:
    """Text either store can keep whatever a client sent: a lone surrogate (SQLite's UTF-8)
    and a NUL character (PostgreSQL's text) become ``?``."""
    if text is None:
        return None
    return text.encode("utf-8", "replace").decode("utf-8").replace("\x00", "?")


def record_call(
    store: AuditLog,
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
    store.add_audit(call_entry(at=at, actor=actor, tool=tool, project=project, outcome=outcome))


def call_entry(
    *, at: int, actor: str, tool: str, project: str | None, outcome: Outcome
) -> AuditEntry:
    """The audit row of one tools/call."""
    return AuditEntry(
        at=at, actor=actor, tool=_safe(tool) or "", project=_safe(project), result=outcome
    )


def record_refused_calls(
    store: AuditLog, *, at: int, actor: str, tools: list[str], status: int
) -> None:
    """One row per tools/call of a request refused before any tool ran (its session unknown or
    another token's, a header refused): ``refused``, with the HTTP status as the detail."""
    detail = f"{status} {HTTPStatus(status).phrase}"
    for tool in tools:
        store.add_audit(
            AuditEntry(
                at=at, actor=actor, tool=_safe(tool) or "", project=None, result="refused",
                detail=detail,
            )
        )  # fmt: skip


def record_event(
    store: AuditLog,
    *,
    at: int,
    actor: str,
    event: str,
    outcome: Outcome,
    detail: str | None,
    project: str | None = None,
) -> None:
    """A hub event that is not a tool call (sync pages, 401 and 429 answers); ``detail`` is
    the hub's own words (a count, an error code), never a client's."""
    store.add_audit(
        event_entry(
            at=at, actor=actor, event=event, outcome=outcome, detail=detail, project=project
        )
    )


def event_entry(
    *,
    at: int,
    actor: str,
    event: str,
    outcome: Outcome,
    detail: str | None,
    project: str | None = None,
) -> AuditEntry:
    """The audit row of a hub event (``record_event``)."""
    return AuditEntry(
        at=at,
        actor=_safe(actor) or "",
        tool=event,
        project=_safe(project),
        result=outcome,
        detail=_safe(detail),
    )


class RefusalLog:
    """Audit rows of requests refused before any tool ran (no token, rate limit), written on a
    worker thread so the event loop never waits for the store."""

    def __init__(self, hub: AppContext, writes: WriteTurns) -> None:
        self.hub = hub
        self.writes = writes
        self._limited_rows = RateLimiter(LIMITED_AUDITED_PER_MINUTE)

    async def refused(
        self, actor: str, event: str, detail: str, projects: tuple[str, ...] | _NoToken | None
    ) -> None:
        await to_thread.run_sync(self.write, actor, event, detail, projects)

    def write(
        self, actor: str, event: str, detail: str, projects: tuple[str, ...] | _NoToken | None
    ) -> None:
        """``refused`` from a worker thread."""
        with self.writes:
            record_event(
                hub_store(self.hub),
                at=self.hub.clock(),
                actor=actor,
                event=event,
                outcome="refused",
                detail=detail,
                project=None if isinstance(projects, _NoToken) else token_scope(projects),
            )

    async def limited(self, token: HubToken, wait: int) -> None:
        """The row of a request (or batch) the rate limit refused, while the token has had fewer
        than ``LIMITED_AUDITED_PER_MINUTE`` such rows in the last minute."""
        if self._limited_rows.hit(token.id) is not None:
            return
        await self.refused(token.name, "rate-limit", f"429 retry after {wait} s", token.projects)


class _NoToken:
    """A refusal of a request without a live token: no projects to name."""


NO_TOKEN = _NoToken()
