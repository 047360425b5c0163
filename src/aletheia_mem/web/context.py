"""The Context page: exactly what session_start_context returns, and its size on the budget."""

from __future__ import annotations

from typing import Any

from aletheia_mem.domain.context import CHARACTER_BUDGET
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from aletheia_mem.web.calls import call


def session_context(app: AppContext, project: str) -> dict[str, Any]:
    """The tool's own answer, and the size of the block it wraps against the budget."""
    arguments = {"project": project} if project else {}
    result = call_tool(app, TOOLS_BY_NAME["session_start_context"], arguments)
    preview = call(app, "sessionContext", query=arguments)
    size = len(preview["markdown"])
    return {
        "text": result.text,
        "is_error": result.is_error,
        "project": preview["project"],
        "size": size,
        "budget": CHARACTER_BUDGET,
        "percent": min(100, round(100 * size / CHARACTER_BUDGET)),
    }
