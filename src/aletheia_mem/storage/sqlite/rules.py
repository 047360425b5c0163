"""Standing rules of the SQLite store."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

from aletheia_mem.storage.sqlite.database import SqliteDatabase
from aletheia_mem.storage.sqlite.rows import (
    json_list,
)

if TYPE_CHECKING:  # the rows a search does not read: off the start path
    from aletheia_mem.storage.entries import Rule


def rule_from_row(row: sqlite3.Row) -> Rule:
    from aletheia_mem.storage.entries import Rule

    return Rule(
        id=row["id"],
        then=row["then_text"],
        when=row["when_text"],
        scope_tier=row["scope_tier"],
        scope_name=row["scope_name"],
        evidence_memory_ids=tuple(json.loads(row["evidence_memory_ids"])),
        evidence_fact_ids=tuple(json.loads(row["evidence_fact_ids"])),
        source=row["source"],
        added_at=row["added_at"],
        last_confirmed_at=row["last_confirmed_at"],
        enabled=bool(row["enabled"]),
    )


class SqliteRules(SqliteDatabase):
    """Standing rules, by their content id."""

    def add_rule(self, rule: Rule) -> tuple[Rule, bool]:
        """Insert a rule; an identical one (same id) is enabled again and returned."""
        with self._write() as conn:
            row = conn.execute("SELECT * FROM rules WHERE id = ?", (rule.id,)).fetchone()
            if row is not None:
                if not row["enabled"]:
                    conn.execute(
                        "UPDATE rules SET enabled = 1, updated_at = ? WHERE id = ?",
                        (rule.added_at, rule.id),
                    )
                    return rule_from_row(row), True
                return rule_from_row(row), False
            conn.execute(
                "INSERT INTO rules (id, then_text, when_text, scope_tier, scope_name,"
                " evidence_memory_ids, evidence_fact_ids, source, added_at, last_confirmed_at,"
                " enabled, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    rule.id,
                    rule.then,
                    rule.when,
                    rule.scope_tier,
                    rule.scope_name,
                    json_list(rule.evidence_memory_ids),
                    json_list(rule.evidence_fact_ids),
                    rule.source,
                    rule.added_at,
                    rule.last_confirmed_at,
                    int(rule.enabled),
                    rule.added_at,
                ),
            )
            return rule, True

    def get_rule(self, rule_id: str) -> Rule | None:
        row = self._conn.execute("SELECT * FROM rules WHERE id = ?", (rule_id,)).fetchone()
        return None if row is None else rule_from_row(row)

    def list_rules(self, *, enabled_only: bool = True, upto: int | None = None) -> list[Rule]:
        sql = "SELECT * FROM rules WHERE rowid <= ?"
        if enabled_only:
            sql += " AND enabled = 1"
        bound = upto if upto is not None else 2**63 - 1
        rows = self._conn.execute(sql + " ORDER BY added_at, rowid", (bound,)).fetchall()
        return [rule_from_row(row) for row in rows]

    def newest_rule_seq(self) -> int:
        """The highest rowid of the rules: an insert (a pull's too) takes a higher one, and a
        pull's update of a rule keeps its row."""
        return int(self._conn.execute("SELECT coalesce(max(rowid), 0) FROM rules").fetchone()[0])

    def confirm_rule(self, rule_id: str, at: int) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET last_confirmed_at = ?, updated_at = ? WHERE id = ?",
                (at, at, rule_id),
            )
            return cursor.rowcount > 0

    def set_rule_enabled(self, rule_id: str, enabled: bool, at: int) -> bool:
        with self._write() as conn:
            cursor = conn.execute(
                "UPDATE rules SET enabled = ?, updated_at = ? WHERE id = ?",
                (int(enabled), at, rule_id),
            )
            return cursor.rowcount > 0
