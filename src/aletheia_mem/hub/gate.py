"""What a token may do through MCP: its scope picks the tools, its projects the data.

The gate runs each allowed call itself, so that every ``tools/call`` leaves one audit row with
its outcome.
"""

from __future__ import annotations

import logging
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from aletheia_mem.hub import audit
from aletheia_mem.hub.audit_queue import AuditQueue
from aletheia_mem.hub.tokens import can_write
from aletheia_mem.hub.write_turns import WriteTurns
from aletheia_mem.server.mcp import ToolGate, UnrunCall, argument_problem
from aletheia_mem.server.wiring import hub_store
from aletheia_mem.storage.contracts import AuditsWithWrites, WrittenAudit
from aletheia_mem.storage.hub_rows import HubToken
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import WRITE_TOOLS, ToolResult, ToolSpec, call_tool

logger = logging.getLogger(__name__)


def token_app(hub: AppContext, token: HubToken) -> AppContext:
    """The hub's store as one token sees it: its name as the caller, its projects only."""
    return replace(hub, caller=token.name, allowed_projects=token.projects)


def refusal(spec: ToolSpec, token: HubToken) -> ToolResult | None:
    """The scope check: ``mcp`` and ``read`` tokens call only the read tools."""
    if spec.name in WRITE_TOOLS and not can_write(token.scope):
        return ToolResult(f"This token cannot call {spec.name}.", is_error=True)
    return None


def audit_riding_store(store: object, spec: ToolSpec) -> AuditsWithWrites | None:
    """The store when a call's audit row goes in the call's own write transaction: a write
    tool (one not writing its own row) on a store that can (both do); else None."""
    if spec.read_only or spec.name in audit.SELF_AUDITED_TOOLS:
        return None
    return store if isinstance(store, AuditsWithWrites) else None


def run_tool(app: AppContext, spec: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
    """The tool's result; an unexpected failure becomes an error result (and a log entry)."""
    try:
        return call_tool(app, spec, arguments)
    except Exception:
        logger.exception("tool %s failed", spec.name)
        return ToolResult(f"{spec.name} failed with an internal error; see the server log.", True)


def make_gate(
    hub: AppContext, token: HubToken, writes: WriteTurns, audits: AuditQueue | None = None
) -> ToolGate:
    """A gate for the MCP sessions of one token.

    ``writes`` makes the hub's writing threads take turns where the store needs it (SQLite; see
    ``write_turns``). A write call's audit row is committed with its write, as "ok" (so a kill
    between two commits never leaves a write without its row), and corrected in the rare case
    the call fails after that commit; a call that commits no write (a read) gets its row
    afterwards through ``audits``: at once while the writers' turn is free, else moments
    later, so that a read never waits behind the writers for its row.
    """
    app = token_app(hub, token)
    store = hub_store(app)
    audits = audits or AuditQueue(store, writes)

    def gate(spec: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        problem = argument_problem(arguments)  # before anything reads them, the audit included
        refused = refusal(spec, token) if problem is None else None
        result = ToolResult(problem, True) if problem is not None else refused
        riding = None if result is not None else audit_riding_store(store, spec)
        project = None if riding is None else audit.call_project(app, spec.name, arguments)
        written: WrittenAudit | None = None
        if result is None and riding is not None:
            entry = audit.call_entry(
                at=app.clock(), actor=token.name, tool=spec.name, project=project, outcome="ok"
            )
            with writes, riding.audit_with_next_write(entry) as written:
                result = run_tool(app, spec, arguments)
        elif result is None:
            with nullcontext() if spec.read_only else writes:
                result = run_tool(app, spec, arguments)
        outcome = audit.outcome_of(result, refused is not None)
        if riding is not None and written is not None and written.result is not None:
            if outcome != "ok":  # the call failed after its write committed
                riding.set_audit_result(written.result, outcome)
            return result
        if riding is None and problem is None:
            project = audit.call_project(app, spec.name, arguments)
        if outcome == "error" and audit.outside_token(project, token.projects):
            outcome = "refused"  # answered as a missing item, audited as the refusal it is
        if not (outcome == "ok" and spec.name in audit.SELF_AUDITED_TOOLS):  # wrote its own
            audits.write(
                audit.call_entry(
                    at=app.clock(), actor=token.name, tool=spec.name, project=project,
                    outcome=outcome,
                )
            )  # fmt: skip
        return result

    return gate


def make_unrun_audit(hub: AppContext, token: HubToken, writes: WriteTurns) -> UnrunCall:
    """The audit of one token's calls that no tool ran (an unknown tool, arguments that are
    not an object): one row each, "error", as for any call."""
    store = hub_store(hub)

    def audit_unrun(name: str) -> None:
        with writes:
            audit.record_call(
                store, at=hub.clock(), actor=token.name, tool=name, project=None, outcome="error"
            )

    return audit_unrun
