"""What each JSON API route does: checked arguments in, domain calls, JSON-ready values out.

Handlers run in a worker thread and return ``(status, body)``. They use the domain functions and
the project-scope helpers of the MCP tools, so both see the same store the same way.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from aletheia_mem.blank import is_blank
from aletheia_mem.domain import facts, memories, recall, rules, worklists
from aletheia_mem.domain.context import build_context
from aletheia_mem.domain.vocabulary import ItemType
from aletheia_mem.errors import InvalidInputError, NotFoundError
from aletheia_mem.server.openapi import Reply
from aletheia_mem.storage.base import Fact, Memory
from aletheia_mem.storage.entries import Rule
from aletheia_mem.timefmt import parse_instant
from aletheia_mem.tools.app import (
    AppContext,
    target_project,
)
from aletheia_mem.tools.knowledge_tools import rule_input
from aletheia_mem.tools.memory_tools import search_request, timeline_around
from aletheia_mem.tools.write_tools import memory_input, set_dismissed

MAX_LISTS = 100


def iso(ms: int) -> str:
    """``2026-10-29T19:46:45.563Z``, with four-digit years."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


def _maybe_iso(ms: int | None) -> str | None:
    return None if ms is None else iso(ms)


def memory_json(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "uid": memory.uid,
        "project": memory.project,
        "type": memory.type,
        "kind": memory.kind,
        "title": memory.title,
        "text": memory.text,
        "narrative": memory.narrative,
        "facts": list(memory.facts),
        "files": list(memory.files),
        "tool": memory.tool,
        "pinned": memory.pinned,
        "created_at": iso(memory.created_at),
        "updated_at": iso(memory.updated_at),
        "dismissed_at": _maybe_iso(memory.dismissed_at),
        "dismiss_reason": memory.dismiss_reason,
    }


def fact_json(fact: Fact) -> dict[str, Any]:
    return {
        "id": fact.id,
        "uid": fact.uid,
        "project": fact.project,
        "subject": fact.subject,
        "predicate": fact.predicate,
        "object": fact.object,
        "valid_from": iso(fact.valid_from),
        "valid_to": _maybe_iso(fact.valid_to),
        "recorded_at": iso(fact.recorded_at),
        "superseded_by": fact.superseded_by,
        "source": fact.source,
        "memory_id": fact.memory_id,
        "dismissed_at": _maybe_iso(fact.dismissed_at),
    }


def rule_json(app: AppContext, rule: Rule, now: int) -> dict[str, Any]:
    return {
        "id": rule.id,
        "then": rule.then,
        "when": rule.when,
        "scope_tier": rule.scope_tier,
        "scope_name": rule.scope_name,
        "evidence_memory_ids": list(rule.evidence_memory_ids),
        "evidence_fact_ids": list(rule.evidence_fact_ids),
        "source": rule.source,
        "added_at": iso(rule.added_at),
        "last_confirmed_at": iso(rule.last_confirmed_at),
        "enabled": rule.enabled,
        "recheck_reason": rules.recheck_reason(app.store, rule, now) if rule.enabled else None,
    }


def _ok(body: Any) -> Reply:
    return 200, body


# -- memories -----------------------------------------------------------------------------------


def search_memories(app: AppContext, args: dict[str, Any]) -> Reply:
    """Every filter of the search tool; facts first, then one page of memories, of those up to
    ``upto`` ranked at ``at``; the answer names both, for the next pages to send."""
    now = app.clock()
    at = min(args["at"], now) if "at" in args else now  # never ranked at a time to come
    # Read before the page: a memory saved in between is above the bound, on no page.
    upto = args.get("upto") or app.store.newest_memory_id() or None
    request = replace(search_request(app, args, at), upto=upto)
    found = search_json(recall.search(app.store, request, at, app.semantic))
    return _ok({**found, "upto": upto, "at": at})


def search_json(result: recall.SearchResult[Memory]) -> dict[str, Any]:
    """A page of a search as the API answers it (the web UI's search pages read it too)."""
    return {
        "facts": [fact_json(fact) for fact in result.facts],
        "memories": [memory_json(memory) for memory in result.memories],
        "empty_reason": result.empty_reason,
    }


def _memory(app: AppContext, memory_id: int) -> Memory:
    memory = app.store.get_memory(memory_id)
    if memory is None or (
        app.allowed_projects is not None and memory.project not in app.allowed_projects
    ):
        raise NotFoundError(f"No memory #{memory_id}.")
    return memory


def get_memory(app: AppContext, args: dict[str, Any]) -> Reply:
    return _ok(memory_json(_memory(app, args["memory_id"])))


def save_memory(app: AppContext, args: dict[str, Any]) -> Reply:
    """Store one memory: 201 when new, 200 with the existing one when saved before."""
    memory, created = memories.save_memory(app.store, app.clock, memory_input(app, args))
    return (201 if created else 200), {"memory": memory_json(memory), "created": created}


def _set_dismissed(app: AppContext, item_type: ItemType, args: dict[str, Any]) -> Reply:
    item_id, dismiss = args["item_id"], args["dismiss"]
    project = set_dismissed(app, item_type, item_id, dismiss=dismiss, reason=args.get("reason"))
    return _ok({"type": item_type, "id": item_id, "project": project, "dismissed": dismiss})


def dismiss_memory(app: AppContext, args: dict[str, Any]) -> Reply:
    return _set_dismissed(app, "memory", {**args, "item_id": args["memory_id"], "dismiss": True})


def restore_memory(app: AppContext, args: dict[str, Any]) -> Reply:
    return _set_dismissed(app, "memory", {**args, "item_id": args["memory_id"], "dismiss": False})


def pin_memory(app: AppContext, args: dict[str, Any]) -> Reply:
    """Pin (or with ``pinned: false`` unpin) a memory."""
    memory_id = _memory(app, args["memory_id"]).id
    memory = app.store.set_pinned(memory_id, args["pinned"], app.clock())
    if memory is None:
        raise NotFoundError(f"No memory #{memory_id}.")
    return _ok(memory_json(memory))


def timeline(app: AppContext, args: dict[str, Any]) -> Reply:
    """The anchor memory with its neighbours in time, as the timeline tool finds them."""
    anchor_id, query = args.get("anchor"), args.get("query")
    if anchor_id is None and not (isinstance(query, str) and query.strip()):
        raise InvalidInputError("Nothing to anchor on. Give anchor (a memory id) or query.")
    found = timeline_around(
        app, anchor_id, query, args.get("project"), args["before"], args["after"]
    )
    if found is None:
        raise NotFoundError("Nothing to anchor on.")
    return _ok(
        {
            "anchor": memory_json(found.anchor),
            "before": [memory_json(memory) for memory in found.before],
            "after": [memory_json(memory) for memory in found.after],
        }
    )


# -- facts and rules ----------------------------------------------------------------------------


def fact_history(app: AppContext, args: dict[str, Any]) -> Reply:
    subject = facts.asked_subject(args["subject"])
    project = args.get("project")
    found = facts.fact_history(
        app.store,
        subject=subject,
        project=target_project(app, project) if project and project.strip() else None,
        predicate=args.get("predicate"),
        as_of=parse_instant(args["as_of"], "as_of") if "as_of" in args else None,
        include_superseded=args["include_superseded"],
        now=app.clock(),
    )
    if app.allowed_projects is not None:
        found = [fact for fact in found if fact.project in app.allowed_projects]
    return _ok({"subject": subject, "facts": [fact_json(fact) for fact in found]})


def add_fact(app: AppContext, args: dict[str, Any]) -> Reply:
    """Record a fact; a new object for the same subject and predicate supersedes the old."""
    valid_from = args.get("valid_from")
    fact, created = facts.record_fact(
        app.store,
        project=target_project(app, args.get("project")),
        subject=args["subject"],
        predicate=args["predicate"],
        object=args["object"],
        valid_from=None if valid_from is None else parse_instant(valid_from, "valid_from"),
        source=app.caller,
        now=app.clock(),
    )
    return (201 if created else 200), {"fact": fact_json(fact), "created": created}


def dismiss_fact(app: AppContext, args: dict[str, Any]) -> Reply:
    return _set_dismissed(app, "fact", {**args, "item_id": args["fact_id"], "dismiss": True})


def restore_fact(app: AppContext, args: dict[str, Any]) -> Reply:
    return _set_dismissed(app, "fact", {**args, "item_id": args["fact_id"], "dismiss": False})


def list_rules(app: AppContext, args: dict[str, Any]) -> Reply:
    """The rules, oldest first, of those this store held at ``upto`` (read now if not sent: a
    rule taken in between is after it), which the answer names."""
    now = app.clock()
    upto = args.get("upto") or app.store.newest_rule_seq() or None
    found = app.store.list_rules(enabled_only=not args["include_disabled"], upto=upto)
    return _ok({"rules": [rule_json(app, rule, now) for rule in found], "upto": upto})


def add_rule(app: AppContext, args: dict[str, Any]) -> Reply:
    """Add a rule as the add_rule tool does; an identical rule is not added twice."""
    item = rule_input(app, args, rules.OWNER_SOURCE)
    now = app.clock()
    rule, created = rules.add_rule(app.store, item, now)
    return (201 if created else 200), {"rule": rule_json(app, rule, now), "created": created}


def _rule(app: AppContext, rule_id: str, now: int) -> Reply:
    rule = app.store.get_rule(rule_id)
    if rule is None:
        raise rules.no_such_rule(rule_id)
    return _ok(rule_json(app, rule, now))


def confirm_rule(app: AppContext, args: dict[str, Any]) -> Reply:
    now = app.clock()
    rule_id = args["rule_id"].strip()
    rules.confirm_rule(app.store, rule_id, now)
    return _rule(app, rule_id, now)


def disable_rule(app: AppContext, args: dict[str, Any]) -> Reply:
    now = app.clock()
    rule_id = args["rule_id"].strip()
    if not app.store.set_rule_enabled(rule_id, False, now):
        raise rules.no_such_rule(rule_id)
    return _rule(app, rule_id, now)


# -- work state and context ---------------------------------------------------------------------


def list_work_states(app: AppContext, args: dict[str, Any]) -> Reply:
    """The project's work-state lists, most recently written first."""
    project = target_project(app, args.get("project"))
    lists = [
        {"name": s.name, "id": s.id, "count": s.items, "updated_at": iso(s.updated_at)}
        for s in worklists.list_index(app.store, (project,), MAX_LISTS)
    ]
    return _ok({"project": project, "lists": lists})


def read_work_state(app: AppContext, args: dict[str, Any]) -> Reply:
    name = args["name"].strip()
    project = target_project(app, args.get("project"))
    memory = app.store.find_memory(project, worklists.list_key(name))
    if worklists.read_list(app.store, project=project, name=name) is None or memory is None:
        raise NotFoundError(worklists.no_such_list(name))
    return _ok(
        {
            "project": project,
            "name": name,
            "id": memory.id,
            "items": worklists.stored_items(memory.text),
            "updated_at": iso(memory.updated_at),
            "version": worklists.items_version(worklists.stored_items(memory.text)),
        }
    )


def write_work_state(app: AppContext, args: dict[str, Any]) -> Reply:
    """Replace a list's items, as work_state_write does."""
    name, items = args["name"].strip(), args["items"]
    if is_blank(name):
        raise InvalidInputError("list is required.")
    project = target_project(app, args.get("project"))
    written = worklists.write_list(
        app.store,
        app.clock,
        project=project,
        name=name,
        items=items,
        tool=app.caller,
        based_on=args.get("based_on"),  # checked in the write's transaction
    )
    stored = worklists.list_name(name)
    return _ok({"project": project, "name": stored, "id": written, "count": len(items)})


def rename_work_state(app: AppContext, args: dict[str, Any]) -> Reply:
    """Rename a list and replace its items (send the whole list) in one transaction: no list
    is left under the old name; another list under the new one refuses it (409)."""
    name, to, items = args["name"].strip(), args["to"].strip(), args["items"]
    if not to:
        raise InvalidInputError("to is required.")
    project = target_project(app, args.get("project"))
    moved = worklists.rename_list(
        app.store,
        app.clock,
        project=project,
        name=name,
        new_name=to,
        items=items,
        tool=app.caller,
        based_on=args.get("based_on"),
    )
    stored = worklists.list_name(to)
    return _ok({"project": project, "name": stored, "id": moved, "count": len(items)})


def session_context(app: AppContext, args: dict[str, Any]) -> Reply:
    """The session-start block the session_start_context tool would give, as Markdown, for the
    owner's pages: without the recall wrapper that marks it as data for an agent."""
    project = target_project(app, args.get("project"))
    return _ok(
        {
            "project": project,
            "markdown": build_context(app.store, project, args["limit"], now=app.clock()),
        }
    )
