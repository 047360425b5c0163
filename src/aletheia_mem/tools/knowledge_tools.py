"""Handlers of the fact and rule tools: fact_history, list_rules, add_rule, confirm_rule."""

from __future__ import annotations

from typing import Any

from aletheia_mem.domain import facts, rules
from aletheia_mem.domain.formatting import (
    fact_line,
    one_line,
    quoted,
    rule_scope,
    rule_text,
    wrap_recall,
)
from aletheia_mem.timefmt import format_date, format_instant, parse_instant
from aletheia_mem.tools import structured
from aletheia_mem.tools.app import AppContext, target_project
from aletheia_mem.tools.structured import Output


def fact_history(app: AppContext, args: dict[str, Any]) -> Output:
    """How the facts about one subject changed; current facts only by default."""
    subject = facts.asked_subject(args["subject"])
    project = args.get("project")
    as_of = parse_instant(args["as_of"], "as_of") if "as_of" in args else None
    now = app.clock()
    found = facts.fact_history(
        app.store,
        subject=subject,
        project=target_project(app, project) if project and project.strip() else None,
        predicate=args.get("predicate"),
        as_of=as_of,
        include_superseded=args["include_superseded"],
        now=now,
    )
    if app.allowed_projects is not None:
        found = [fact for fact in found if fact.project in app.allowed_projects]
    data = structured.recall(subject=subject, facts=[structured.fact(fact, now) for fact in found])
    if as_of is not None:
        data["as_of"] = format_instant(as_of)
    if not found:
        return Output(f"No facts found for subject {quoted(subject)}.", data)
    if as_of is not None:
        heading = f"Facts about {quoted(subject)} valid at {format_instant(as_of)}:"
    elif args["include_superseded"]:
        heading = f"History of the facts about {quoted(subject)}, newest first:"
    else:
        heading = f"Current facts about {quoted(subject)}:"
    text = wrap_recall("\n".join([heading, *(f"- {fact_line(fact, now)}" for fact in found)]))
    return Output(text, data)


def list_rules(app: AppContext, args: dict[str, Any]) -> Output:
    """Every enabled rule, one line each, flagged when it needs a re-check."""
    now = app.clock()
    visible = [  # one read: the disabled ones are only counted, for an empty answer
        rule
        for rule in app.store.list_rules(enabled_only=False)
        if rules.rule_visible(rule, app.allowed_projects)
    ]
    enabled = [rule for rule in visible if rule.enabled]
    if not enabled:
        return Output(_no_rules_line(len(visible)), structured.recall(rules=[]))
    lines, items = [], []
    for rule in enabled:
        line = (
            f"- {rule_text(rule)}  {rule_scope(rule)}  (id {one_line(rule.id)}, added"
            f" {format_date(rule.added_at)}, source: {one_line(rule.source)}, last confirmed"
            f" {format_date(rule.last_confirmed_at)})"
        )
        reason = rules.recheck_reason(app.store, rule, now)
        if reason is not None:
            line += f"  [re-check: {reason}]"
        lines.append(line)
        items.append(structured.rule(rule, reason))
    return Output(wrap_recall("\n".join(lines)), structured.recall(rules=items))


def _no_rules_line(disabled: int) -> str:
    """What list_rules says when no rule is enabled: some are disabled, or there are none."""
    if not disabled:
        return "No rules yet. add_rule adds one."
    return f"No enabled rules ({disabled} disabled by the owner)."


def rule_input(app: AppContext, args: dict[str, Any], source: str) -> rules.RuleInput:
    """The rule add_rule's checked arguments describe (the JSON API's too), made by ``source``:
    a project rule without a scopeName is the caller's project's (``target_project``)."""
    tier = args["scopeTier"]
    name = rules.rule_scope_name(
        tier, args.get("scopeName") or "", lambda given: target_project(app, given or None)
    )
    return rules.RuleInput(
        then=args["then"],
        when=args["when"],
        scope_tier=tier,
        scope_name=name,
        evidence_memory_ids=args.get("evidence_memory_ids", []),
        evidence_fact_ids=args.get("evidence_fact_ids", []),
        source=source,
    )


def add_rule(app: AppContext, args: dict[str, Any]) -> str:
    """Add one standing rule; an identical rule is not added twice."""
    rules.check_rule_tier(args["scopeTier"], app.allowed_projects)
    item = rule_input(app, args, app.caller)
    rule, added = rules.add_rule_telling(app.store, item, app.clock(), app.allowed_projects)
    if added != "created":  # an identical rule: said whether it was disabled and is enabled again
        return rules.already_saved(rule.id, added)
    return f"Rule saved ({rule.id}). The owner syncs rules to tools from the Rules page."


def confirm_rule(app: AppContext, args: dict[str, Any]) -> str:
    """Record that a rule was re-checked: only its last-confirmed date changes."""
    rule_id = args["id"].strip()
    now = app.clock()
    rules.confirm_rule(app.store, rule_id, now, app.allowed_projects)
    return (
        f"Confirmed rule {rule_id} on {format_date(now)}. It stays as it is; only the date it"
        " was last checked changed."
    )
