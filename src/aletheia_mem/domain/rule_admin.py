"""Switching rules off and on: a disabled rule is kept but no longer listed or synced."""

from __future__ import annotations

from aletheia_mem.domain.rules import no_such_rule
from aletheia_mem.storage.contracts import RuleStore


def set_rule_enabled(store: RuleStore, rule_id: str, enabled: bool, now: int) -> None:
    """Disable (or enable again) one rule.

    Raises:
        NotFoundError: there is no rule with that id.
    """
    if not store.set_rule_enabled(rule_id, enabled, now):
        raise no_such_rule(rule_id)
