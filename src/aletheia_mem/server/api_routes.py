"""The JSON API's routes: method, path, inputs (the tools' schemas where they exist) and handler."""

from __future__ import annotations

from aletheia_mem.domain.dismissals import MAX_REASON_LENGTH
from aletheia_mem.domain.limits import MAX_NAME, MAX_TITLE
from aletheia_mem.server import api_handlers as h
from aletheia_mem.server.openapi import Operation, Schema
from aletheia_mem.tools import schemas


def _params(**properties: Schema) -> Schema:
    return {"type": "object", "properties": properties, "required": list(properties)}


def _whole_id(name: str) -> Schema:
    return _params(**{name: {"type": "number", "multipleOf": 1, "minimum": 1}})


_MEMORY_ID = _whole_id("memory_id")
_FACT_ID = _whole_id("fact_id")
_RULE_ID = _params(rule_id={"type": "string", "maxLength": MAX_NAME})
_LIST_NAME = _params(name={"type": "string", "maxLength": MAX_NAME})
_PROJECT_ONLY: Schema = {
    "type": "object",
    "properties": {"project": schemas.WORK_STATE_READ["properties"]["project"]},
}
# The tool cuts a longer reason (the reference's words); a program is told instead.
_DISMISS_BODY: Schema = {
    "type": "object",
    "properties": {
        "reason": {
            "type": "string",
            "maxLength": MAX_REASON_LENGTH,
            "description": f"Kept in the audit trail; at most {MAX_REASON_LENGTH} characters.",
        }
    },
}
_PIN_BODY: Schema = {
    "type": "object",
    "properties": {"pinned": {"type": "boolean", "default": True}},
}
_ADD_FACT: Schema = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "maxLength": MAX_TITLE},
        "predicate": {"type": "string", "maxLength": MAX_TITLE},
        "object": {"type": "string", "maxLength": 2000},
        "project": schemas.SAVE_MEMORY["properties"]["project"],
        "valid_from": {
            "type": "string",
            "description": "When it became true: ISO 8601 date, date-time or epoch ms."
            " Default: now.",
        },
    },
    "required": ["subject", "predicate", "object"],
}
_RULES_QUERY: Schema = {
    "type": "object",
    "properties": {
        "include_disabled": {"type": "boolean", "default": False},
        "upto": {
            "type": "integer",
            "minimum": 1,
            "maximum": 2**63 - 1,
            "description": "Only the rules this store held when an earlier answer named this"
            " upto (omitted: every rule, as now): a rule a sync brings in meanwhile, older ones"
            " included, is left out, so pages cut from the list keep their places.",
        },
    },
}
_WORK_STATE_BODY: Schema = {
    "type": "object",
    "properties": {
        **{key: schemas.WORK_STATE_WRITE["properties"][key] for key in ("items", "project")},
        "based_on": {
            "type": "string",
            "maxLength": 64,
            "description": "The version a read of the list answered: the write is refused"
            " (409) if the list changed since (omitted: written whatever it holds).",
        },
    },
    "required": ["items"],
}
_RENAME_BODY: Schema = {
    "type": "object",
    "properties": {
        "to": {"type": "string", "maxLength": MAX_NAME, "description": "The list's new name."},
        **_WORK_STATE_BODY["properties"],
    },
    "required": ["to", "items"],
}
_SAVED = (201, 200)
# The search tool's arguments, and the bounds that keep a listing's later pages on the first
# page's view (the web UI's Memories page carries the same).
_API_SEARCH: Schema = {
    **schemas.SEARCH,
    "properties": {
        **schemas.SEARCH["properties"],
        "upto": {
            "type": "integer",
            "minimum": 1,
            "maximum": 10**15 - 1,
            "description": "Only memories with ids up to this: send the upto of the first"
            " page's answer with each later page, so that memories saved meanwhile shift"
            " no page (omitted: every memory, as saved now).",
        },
        "at": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10**15 - 1,
            "description": "Rank as at this time (epoch ms; never later than now): send the"
            " at of the first page's answer with each later page (omitted: now).",
        },
    },
}

OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "GET",
        "/api/memories",
        "searchMemories",
        "Search memories and facts (every filter of the search tool), or find memories by file.",
        h.search_memories,
        "SearchResult",
        query=_API_SEARCH,
    ),
    Operation(
        "POST",
        "/api/memories",
        "saveMemory",
        "Save a memory: 201 when new, 200 with the existing one when saved before.",
        h.save_memory,
        "SavedMemory",
        _SAVED,
        body=schemas.SAVE_MEMORY,
        body_required=True,
    ),
    Operation(
        "GET",
        "/api/memories/{memory_id}",
        "getMemory",
        "One memory in full, dismissed or not.",
        h.get_memory,
        "Memory",
        path_params=_MEMORY_ID,
    ),
    Operation(
        "POST",
        "/api/memories/{memory_id}/dismiss",
        "dismissMemory",
        "Hide a memory from search and context without deleting it.",
        h.dismiss_memory,
        "Dismissal",
        path_params=_MEMORY_ID,
        body=_DISMISS_BODY,
    ),
    Operation(
        "POST",
        "/api/memories/{memory_id}/restore",
        "restoreMemory",
        "Undo a memory's dismissal.",
        h.restore_memory,
        "Dismissal",
        path_params=_MEMORY_ID,
    ),
    Operation(
        "POST",
        "/api/memories/{memory_id}/pin",
        "pinMemory",
        "Pin a memory (listed under Pinned in session context), or unpin it with pinned: false.",
        h.pin_memory,
        "Memory",
        path_params=_MEMORY_ID,
        body=_PIN_BODY,
    ),
    Operation(
        "GET",
        "/api/timeline",
        "timeline",
        "The memories before and after one memory, in time order.",
        h.timeline,
        "Timeline",
        query=schemas.TIMELINE,
    ),
    Operation(
        "GET",
        "/api/facts",
        "factHistory",
        "How the facts about one subject changed; current facts by default.",
        h.fact_history,
        "FactHistory",
        query=schemas.FACT_HISTORY,
    ),
    Operation(
        "POST",
        "/api/facts",
        "addFact",
        "Record a fact: 201 when new, 200 when the same object is already current.",
        h.add_fact,
        "SavedFact",
        _SAVED,
        body=_ADD_FACT,
        body_required=True,
    ),
    Operation(
        "POST",
        "/api/facts/{fact_id}/dismiss",
        "dismissFact",
        "Hide a fact from search and context.",
        h.dismiss_fact,
        "Dismissal",
        path_params=_FACT_ID,
        body=_DISMISS_BODY,
    ),
    Operation(
        "POST",
        "/api/facts/{fact_id}/restore",
        "restoreFact",
        "Undo a fact's dismissal.",
        h.restore_fact,
        "Dismissal",
        path_params=_FACT_ID,
    ),
    Operation(
        "GET",
        "/api/rules",
        "listRules",
        "The enabled rules (all with include_disabled), with re-check reasons.",
        h.list_rules,
        "RuleList",
        query=_RULES_QUERY,
    ),
    Operation(
        "POST",
        "/api/rules",
        "addRule",
        "Add a standing rule: 201 when new, 200 when the identical rule exists.",
        h.add_rule,
        "SavedRule",
        _SAVED,
        body=schemas.ADD_RULE,
        body_required=True,
    ),
    Operation(
        "POST",
        "/api/rules/{rule_id}/confirm",
        "confirmRule",
        "Record that a rule was re-checked: only its last-confirmed date changes.",
        h.confirm_rule,
        "Rule",
        path_params=_RULE_ID,
    ),
    Operation(
        "POST",
        "/api/rules/{rule_id}/disable",
        "disableRule",
        "Disable a rule; adding the identical rule again enables it.",
        h.disable_rule,
        "Rule",
        path_params=_RULE_ID,
    ),
    Operation(
        "GET",
        "/api/work-state",
        "listWorkStates",
        "A project's work-state lists, most recently written first.",
        h.list_work_states,
        "WorkStateIndex",
        query=_PROJECT_ONLY,
    ),
    Operation(
        "GET",
        "/api/work-state/{name}",
        "readWorkState",
        "One work-state list with its items.",
        h.read_work_state,
        "WorkStateList",
        path_params=_LIST_NAME,
        query=_PROJECT_ONLY,
    ),
    Operation(
        "PUT",
        "/api/work-state/{name}",
        "writeWorkState",
        "Replace a work-state list's items (send the whole list).",
        h.write_work_state,
        "SavedWorkState",
        path_params=_LIST_NAME,
        body=_WORK_STATE_BODY,
        body_required=True,
    ),
    Operation(
        "POST",
        "/api/work-state/{name}/rename",
        "renameWorkState",
        "Rename a work-state list and replace its items (send the whole list), in one"
        " transaction: 409 when another list has the new name.",
        h.rename_work_state,
        "SavedWorkState",
        path_params=_LIST_NAME,
        body=_RENAME_BODY,
        body_required=True,
    ),
    Operation(
        "GET",
        "/api/context",
        "sessionContext",
        "Preview of the session-start context of a project, as Markdown.",
        h.session_context,
        "Context",
        query=schemas.SESSION_START_CONTEXT,
    ),
)
