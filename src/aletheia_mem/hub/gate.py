"""What a token may do through MCP: its scope picks the tools, its projects the data.

The gate runs each allowed call itself, so that every ``tools/call`` leaves one audit row with
its outcome.
"""

from __future__ import annotations

import logging
import threading
from contextlib import nullcontext
from dataclasses import replace
from typing import Any

from aletheia_mem.hub import audit
from aletheia_mem.hub.tokens import can_write
from aletheia_mem.server.mcp import ToolGate, argument_problem
from aletheia_mem.server.wiring import hub_store
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


def make_gate(hub: AppContext, token: HubToken, writes: threading.Lock) -> ToolGate:
    """A gate for the MCP sessions of one token.

    ``writes`` lets one thread of the hub write at a time: threads then queue on a lock that
    wakes them at once, instead of in SQLite's busy handler, which sleeps in steps of milliseconds.
    """
    app = token_app(hub, token)

    def gate(spec: ToolSpec, arguments: dict[str, Any]) -> ToolResult:
        problem = argument_problem(arguments)  # before anything reads them, the audit included
        refused = refusal(spec, token) if problem is None else None
        result = ToolResult(problem, True) if problem is not None else refused
        if result is None:
            try:
                with nullcontext() if spec.read_only else writes:
                    result = call_tool(app, spec, arguments)
            except Exception:
                logger.exception("tool %s failed", spec.name)
                result = ToolResult(
                    f"{spec.name} failed with an internal error; see the server log.", True
                )
        project = None if problem is not None else audit.call_project(app, spec.name, arguments)
        with writes:
            audit.record_call(
                hub_store(app),
                at=app.clock(),
                actor=token.name,
                tool=spec.name,
                project=project,
                outcome=audit.outcome_of(result, refused is not None),
            )
        return result

    return gate
