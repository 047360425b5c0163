"""The 13 tools' input schemas, as the reference documents them, in the strict style clients lint:
whole numbers typed ``integer``, a description on every property (enums too), ``anyOf`` rather
than a list of types."""

from __future__ import annotations

from typing import Any

from aletheia_mem.domain.limits import (
    MAX_FACT_PART,
    MAX_IDS,
    MAX_LIST_JSON,
    MAX_NAME,
    MAX_PATH,
    MAX_RULE,
    MAX_TEXT,
    MAX_TITLE,
)
from aletheia_mem.domain.vocabulary import ITEM_TYPES, MEMORY_TYPES, SCOPE_TIERS
from aletheia_mem.projects import MAX_PROJECT_LENGTH
from aletheia_mem.tools.arguments import CollapsedString, ItemId, TrimmedString

Schema = dict[str, Any]

MAX_ROWS = 100  # search's limit
MAX_NEIGHBOURS = 50  # timeline's before and after
# get_observations takes every id one search or timeline lists ("Pass every id in one call"):
# the widest timeline lists 50 before, the anchor and 50 after.
MAX_FETCH = max(MAX_ROWS, 2 * MAX_NEIGHBOURS + 1)


def _project(description: str) -> Schema:
    """A ``project`` argument: its key is kept trimmed (and lower-case), 1 to 200 characters."""
    return TrimmedString(type="string", maxLength=MAX_PROJECT_LENGTH, description=description)


_PROJECT = _project("Default: the working directory's project, else default.")
_DATE = {"type": "string", "description": "ISO 8601 date, date-time or epoch milliseconds."}
_TYPE = {
    "type": "string",
    "enum": list(MEMORY_TYPES),
    "description": "The memory's type: " + ", ".join(MEMORY_TYPES) + ".",
}


def _whole(description: str, minimum: int, maximum: int, default: int | None = None) -> Schema:
    spec: Schema = {
        "type": "integer",
        "minimum": minimum,
        "maximum": maximum,
        "description": description,
    }
    if default is not None:
        spec["default"] = default
    return spec


def _ids(description: str, most: int = MAX_IDS) -> Schema:
    return {
        "type": "array",
        # No minimum: an id no item can have (0, -1) is an unknown id, answered as the tool
        # answers any unknown id (get_observations skips it, add_rule names it in its error).
        "items": ItemId(type="integer"),
        "maxItems": most,
        "description": description,
    }


SEARCH: Schema = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words to search for. Required unless file is set.",
        },
        "file": {
            "type": "string",
            "description": "Exact file path. Then only project, file_suffix and limit apply.",
        },
        "file_suffix": {
            "type": "boolean",
            "default": False,
            "description": "With file, match paths that end with the text.",
        },
        "project": _project(
            'Project key. Omitted: the working directory\'s project; "*": every project.'
        ),
        "type": {**_TYPE, "description": "Only memories of this type."},
        "kind": TrimmedString(
            type="string",
            maxLength=MAX_NAME,
            description="For example observation, summary or note.",
        ),
        "limit": _whole("Rows to return, 1 to 100.", 1, MAX_ROWS, 20),
        "offset": _whole("Rows to skip.", 0, 1_000_000, 0),
        "since": {
            **_DATE,
            "description": "Only results from this time on (ISO 8601 date, date-time or epoch ms).",
        },
        "until": {
            **_DATE,
            "description": "Only results up to this time; a bare date includes that day.",
        },
        "older_than_days": {
            "type": "number",
            "minimum": 0,
            "maximum": 1_000_000,
            "description": "Only results older than this many days. The earlier of this and until wins.",
        },
        "order": {
            "type": "string",
            "enum": ["relevance", "date_desc", "date_asc"],
            "default": "relevance",
            "description": "relevance (best match first), date_desc (newest first) or date_asc.",
        },
    },
}

TIMELINE: Schema = {
    "type": "object",
    "properties": {
        "anchor": ItemId(
            type="integer",
            description="Memory id from search. Takes priority over query.",
        ),
        "query": {"type": "string", "description": "Finds the anchor when anchor is not given."},
        "project": _project("Limits the lookup and the neighbours."),
        "before": _whole("Rows before the anchor.", 0, MAX_NEIGHBOURS, 5),
        "after": _whole("Rows after the anchor.", 0, MAX_NEIGHBOURS, 5),
    },
}

GET_OBSERVATIONS: Schema = {
    "type": "object",
    "properties": {
        "ids": _ids("Memory ids from search or timeline. Unknown ids are skipped.", MAX_FETCH),
    },
    "required": ["ids"],
}

SESSION_START_CONTEXT: Schema = {
    "type": "object",
    "properties": {
        "project": _project(
            "Default: the project of the server's working directory; for a"
            " project-limited token, its first allowed project."
        ),
        "limit": _whole("Recent unpinned memories, 1 to 100.", 1, 100, 20),
    },
}

FACT_HISTORY: Schema = {
    "type": "object",
    "properties": {
        "subject": TrimmedString(
            type="string",
            maxLength=MAX_FACT_PART,  # any subject a fact can have
            description="For example a service or library name.",
        ),
        "project": _project("Narrow the match to one project."),
        "predicate": {
            "type": "string",
            "maxLength": MAX_TITLE,
            "description": "Narrow the match to one predicate.",
        },
        "as_of": {
            **_DATE,
            "description": "Facts valid at this ISO 8601 date or epoch milliseconds. Takes priority over include_superseded.",
        },
        "include_superseded": {
            "type": "boolean",
            "default": False,
            "description": "Also list replaced facts.",
        },
    },
    "required": ["subject"],
}

LIST_RULES: Schema = {"type": "object", "properties": {}, "additionalProperties": False}

WORK_STATE_READ: Schema = {
    "type": "object",
    "properties": {
        "list": TrimmedString(type="string", maxLength=MAX_NAME, description="The list name."),
        "project": _PROJECT,
    },
    "required": ["list"],
}

_FACT_ITEM: Schema = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "description": "What the fact is about."},
        "predicate": {"type": "string", "description": "Which property of the subject."},
        "object": {"type": "string", "description": "Its value."},
        "valid_from": {**_DATE, "description": "Valid from (ISO 8601 or epoch ms). Default: now."},
    },
    "required": ["subject", "predicate", "object"],
}

SAVE_MEMORY: Schema = {
    "type": "object",
    "properties": {
        "text": {
            "type": "string",
            "maxLength": MAX_TEXT,
            "description": "The memory, up to 20000 characters.",
        },
        "title": TrimmedString(
            type="string",
            maxLength=MAX_TITLE,
            description="Up to 400 characters, trimmed. Default: the first 100 characters of text.",
        ),
        "project": _PROJECT,
        "type": {**_TYPE, "default": "note", "description": "The memory's type. Default: note."},
        "pinned": {
            "type": "boolean",
            "default": False,
            "description": "List it under Pinned in session_start_context.",
        },
        "facts": {
            "type": "array",
            "maxItems": MAX_IDS,
            "items": _FACT_ITEM,
            "description": "Optional facts this memory states: {subject, predicate, object, valid_from?}. A new object for the same subject and predicate supersedes the old one; one call gives each subject and predicate one object per valid_from (two are refused, the same one twice is one fact).",
        },
        "files": {
            "type": "array",
            "maxItems": MAX_IDS,
            "items": TrimmedString(type="string", maxLength=MAX_PATH),
            "description": "Optional file paths this memory is about, so search with file finds it.",
        },
    },
    "required": ["text"],
}

ADD_RULE: Schema = {
    "type": "object",
    "properties": {
        # The limits are the stored rule's, its whitespace collapsed (DESIGN: "then (at most
        # 800 chars)").
        "then": CollapsedString(
            {
                "type": "string",
                "maxLength": MAX_RULE,
                "description": "The rule, at most 800 characters.",
            }
        ),
        "when": CollapsedString(
            {
                "type": "string",
                "maxLength": MAX_RULE,
                "default": "always",
                "description": "The situation. Default: always.",
            }
        ),
        "scopeTier": {
            "type": "string",
            "enum": list(SCOPE_TIERS),
            "default": "everywhere",
            "description": "Where the rule applies: everywhere, one project or one situation.",
        },
        "scopeName": TrimmedString(
            type="string",
            maxLength=MAX_NAME,
            description="The project or situation name.",
        ),
        "evidence_memory_ids": _ids("Memory ids the rule rests on. An unknown id is an error."),
        "evidence_fact_ids": _ids("Fact ids the rule rests on. An unknown id is an error."),
    },
    "required": ["then"],
}

CONFIRM_RULE: Schema = {
    "type": "object",
    "properties": {
        "id": TrimmedString(
            type="string", maxLength=MAX_NAME, description="A rule id from list_rules."
        )
    },
    "required": ["id"],
}

_ITEM_ID = ItemId(type="integer", minimum=1, description="The item id.")
_ITEM_TYPE = {
    "type": "string",
    "enum": list(ITEM_TYPES),
    "default": "memory",
    "description": "What the id names: " + ", ".join(ITEM_TYPES) + ". Default: memory.",
}

DISMISS_MEMORY: Schema = {
    "type": "object",
    "properties": {
        "id": _ITEM_ID,
        "type": _ITEM_TYPE,
        "reason": {
            "type": "string",
            "description": "Kept in the audit trail, cut to 300 characters.",
        },
    },
    "required": ["id"],
}

RESTORE_MEMORY: Schema = {
    "type": "object",
    "properties": {"id": _ITEM_ID, "type": _ITEM_TYPE},
    "required": ["id"],
}

WORK_STATE_WRITE: Schema = {
    "type": "object",
    "properties": {
        "list": TrimmedString(
            type="string",
            maxLength=MAX_NAME,
            description="The list name, matched exactly after trimming.",
        ),
        "items": {
            "type": "array",
            "minItems": 0,
            "maxItems": 1000,
            "items": {
                "anyOf": [
                    {"type": "string"},
                    {"type": "number"},
                    {"type": "boolean"},
                    {"type": "object"},
                ]
            },
            "description": "The whole list: strings, numbers, booleans or plain objects; at most"
            f" {MAX_LIST_JSON} characters as JSON.",
        },
        "project": _PROJECT,
    },
    "required": ["list", "items"],
}
