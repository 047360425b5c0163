"""A one-time step that redacts the secrets earlier releases kept in audit rows' ``tool``
column: a call to an unknown tool named ``ghp_...`` stored the name as sent, where a row
written now holds ``[REDACTED]`` (``domain.echoes.echoed``, which every audited tool name goes
through). The other columns hold the hub's own words, a token's name, a checked project or a
reason redacted when it was saved.

The one module of storage that imports the domain, and only here: the redactor is the one
rule for what a secret is (docs/architecture.md). Runs inside the migration's transaction,
for both dialects; the audit table is not synced.
"""

from __future__ import annotations

from typing import Any, Protocol

_BATCH = 100  # rewritten names per statement: one pass over the table each


class _Conn(Protocol):
    def execute(self, sql: str, parameters: Any = (), /) -> Any: ...


def redact_audit_tools(conn: _Conn, mark: str = "?") -> int:
    """Rewrite each audit row's tool name through the redactor; ``mark``: the database's
    placeholder. Returns how many names it rewrote (0 on a new store: one read of an empty
    table). Each distinct name is redacted once, whatever the rows holding it."""
    names = [row[0] for row in conn.execute("SELECT DISTINCT tool FROM audit").fetchall()]
    if not names:
        return 0
    from aletheia_mem.domain.redaction import redact_secrets  # see the module's docstring

    changed = [(name, shown) for name in names if (shown := redact_secrets(name)) != name]
    for start in range(0, len(changed), _BATCH):
        batch = changed[start : start + _BATCH]
        cases = " ".join(f"WHEN {mark} THEN {mark}" for _ in batch)
        olds = ", ".join(mark for _ in batch)
        conn.execute(
            f"UPDATE audit SET tool = CASE tool {cases} END WHERE tool IN ({olds})",
            (*(value for pair in batch for value in pair), *(old for old, _ in batch)),
        )
    return len(changed)
