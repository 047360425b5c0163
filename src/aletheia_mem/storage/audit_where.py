"""The condition of an audit query, written once for SQLite and PostgreSQL alike."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import AuditQuery


def audit_where(query: AuditQuery, mark: str) -> tuple[str, list[object]]:
    """The condition on audit rows of ``query``'s filters, with ``mark`` (``?`` or ``%s``) for
    each parameter, and the parameters."""
    where, params = "1 = 1", list[object]()
    filters = (("actor", query.actor), ("tool", query.tool), ("result", query.result))
    for column, value in filters:
        if value is not None:
            where += f" AND {column} = {mark}"
            params.append(value)
    if query.projects is not None:  # none: no row
        marks = ", ".join(mark for _ in query.projects)
        where += f" AND project IN ({marks})" if query.projects else " AND 1 = 0"
        params.extend(query.projects)
    if query.upto is not None:
        where += f" AND id <= {mark}"
        params.append(query.upto)
    return where, params
