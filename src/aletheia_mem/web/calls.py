"""The UI's one way to the store: the JSON API's operations, run in process.

Each call checks its arguments against the operation's own schemas, then runs the same handler
``/api/`` runs, so a page shows exactly what the API (and through it the tools) would answer, and
a write tells semantic recall what the API's would (the served handler sends that notice).
"""

from __future__ import annotations

from typing import Any

from aletheia_mem.errors import InvalidInputError
from aletheia_mem.server.api import OPERATIONS, check_fields, check_query
from aletheia_mem.server.mcp import argument_problem
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.arguments import check_arguments

_BY_ID = {op.operation_id: op for op in OPERATIONS}


def call(
    app: AppContext,
    operation_id: str,
    *,
    query: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
    path: dict[str, Any] | None = None,
) -> Any:
    """The body the operation answers with.

    Raises:
        AletheiaError: the arguments are refused or the operation fails as the API would say.
    """
    args = checked(operation_id, query=query, body=body, path=path)
    return _BY_ID[operation_id].handler(app, args)[1]


def checked(
    operation_id: str,
    *,
    query: dict[str, Any] | None = None,
    body: dict[str, Any] | None = None,
    path: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The operation's arguments as its schemas check them (``call`` without the handler).

    Raises:
        InvalidInputError: the arguments are refused, as the API would say.
    """
    op = _BY_ID[operation_id]
    check_fields(op, body or {})  # a form sends only what the API takes, as a script must
    check_query(op, query or {})  # and a page asks only what it takes
    args: dict[str, Any] = {}
    for schema, given in ((op.query, query), (op.body, body), (op.path_params, path)):
        if schema is not None:
            args.update(check_arguments(schema, given or {}))
    problem = argument_problem(body or {})  # as /api/ checks a body: no deep nests, surrogates
    if problem is not None:
        raise InvalidInputError(f"The form is refused: {problem}")
    return args
