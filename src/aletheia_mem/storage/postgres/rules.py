"""Standing rules on PostgreSQL, by their content id."""

from __future__ import annotations

import json

from aletheia_mem.storage.entries import Rule
from aletheia_mem.storage.postgres.database import PgPart, Row

_COLUMNS = (
    "id, then_text, when_text, scope_tier, scope_name, evidence_memory_ids, evidence_fact_ids,"
    " source, added_at, last_confirmed_at, enabled"
)


def _rule(row: Row) -> Rule:
    """A rule from a row of ``_COLUMNS``: its fields in their order, the lists decoded."""
    values = list(row)
    values[5:7] = (tuple(json.loads(values[5])), tuple(json.loads(values[6])))
    values[10] = bool(values[10])
    return Rule(*values)


class PgRules(PgPart):
    """``RuleStore``: a rule's id is a digest of its content, so an identical rule is one row."""

    def add_rule(self, rule: Rule) -> tuple[Rule, bool]:
        """Insert a rule; an identical one (same id) is enabled again and returned (as it was
        stored), with True when it had been disabled."""
        with self._db.write() as conn:
            inserted = conn.execute(
                "INSERT INTO rules (id, then_text, when_text, scope_tier, scope_name,"
                " evidence_memory_ids, evidence_fact_ids, source, added_at, last_confirmed_at,"
                " enabled, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO NOTHING RETURNING id",
                (
                    rule.id,
                    rule.then,
                    rule.when,
                    rule.scope_tier,
                    rule.scope_name,
                    json.dumps(list(rule.evidence_memory_ids)),
                    json.dumps(list(rule.evidence_fact_ids)),
                    rule.source,
                    rule.added_at,
                    rule.last_confirmed_at,
                    int(rule.enabled),
                    rule.added_at,
                ),
            ).fetchone()
            if inserted is not None:
                return rule, True
            [row] = conn.execute(
                f"SELECT {_COLUMNS} FROM rules WHERE id = %s FOR UPDATE", (rule.id,)
            ).fetchall()
            if row["enabled"]:
                return _rule(row), False
            conn.execute(
                "UPDATE rules SET enabled = 1, updated_at = %s WHERE id = %s",
                (rule.added_at, rule.id),
            )
            return _rule(row), True

    def get_rule(self, rule_id: str) -> Rule | None:
        with self._db.read() as conn:
            row = conn.execute(f"SELECT {_COLUMNS} FROM rules WHERE id = %s", (rule_id,))
            found = row.fetchone()
        return None if found is None else _rule(found)

    def list_rules(self, *, enabled_only: bool = True, upto: int | None = None) -> list[Rule]:
        where = " AND enabled = 1" if enabled_only else ""
        bound = upto if upto is not None else 2**63 - 1
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {_COLUMNS} FROM rules WHERE seq <= %s{where} ORDER BY added_at, seq",
                (bound,),
            )
            return [_rule(row) for row in rows.fetchall()]

    def newest_rule_seq(self) -> int:
        """The highest ``seq`` of the rules (SQLite's rowid, see ``list_rules``)."""
        with self._db.read() as conn:
            row = conn.execute("SELECT coalesce(max(seq), 0) FROM rules").fetchone()
        return int(row[0]) if row is not None else 0

    def confirm_rule(self, rule_id: str, at: int) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET last_confirmed_at = %s, updated_at = %s WHERE id = %s",
                (at, at, rule_id),
            )
            return cursor.rowcount > 0

    def set_rule_enabled(self, rule_id: str, enabled: bool, at: int) -> bool:
        with self._db.write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET enabled = %s, updated_at = %s WHERE id = %s",
                (int(enabled), at, rule_id),
            )
            return cursor.rowcount > 0
