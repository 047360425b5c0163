"""The JSON API's description: one ``Operation`` per route, and the OpenAPI 3.1 document.

Inputs are described by the same JSON Schemas the tools check their arguments with (numbers with
``multipleOf: 1`` are shown as integers), so the document, the validation and the MCP tools can
not drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aletheia_mem import __version__
from aletheia_mem.tools.app import AppContext

Schema = dict[str, Any]
Reply = tuple[int, Any]
Handler = Callable[[AppContext, dict[str, Any]], Reply]
MAX_ID = 2**63 - 1  # SQLite's largest integer

_TEXT: Schema = {"type": "string"}
_TIME: Schema = {"type": "string", "description": "UTC, ISO 8601 with milliseconds."}
_MAYBE_TIME: Schema = {"type": ["string", "null"]}
_ID: Schema = {"type": "integer"}


def _object(properties: dict[str, Schema]) -> Schema:
    return {"type": "object", "properties": properties, "required": list(properties)}


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def array_of(name: str) -> Schema:
    return {"type": "array", "items": ref(name)}


COMPONENTS: dict[str, Schema] = {
    "Error": _object(
        {
            "error": _object(
                {"code": {**_TEXT, "description": "Stable error code."}, "message": _TEXT}
            )
        }
    ),
    "Memory": _object(
        {
            "id": _ID,
            "uid": _TEXT,
            "project": _TEXT,
            "type": _TEXT,
            "kind": _TEXT,
            "title": _TEXT,
            "text": _TEXT,
            "narrative": {"type": ["string", "null"]},
            "facts": {"type": "array", "items": _TEXT},
            "files": {"type": "array", "items": _TEXT},
            "tool": _TEXT,
            "pinned": {"type": "boolean"},
            "created_at": _TIME,
            "updated_at": _TIME,
            "dismissed_at": _MAYBE_TIME,
            "dismiss_reason": {"type": ["string", "null"]},
        }
    ),
    "Fact": _object(
        {
            "id": _ID,
            "uid": _TEXT,
            "project": _TEXT,
            "subject": _TEXT,
            "predicate": _TEXT,
            "object": _TEXT,
            "valid_from": _TIME,
            "valid_to": _MAYBE_TIME,
            "recorded_at": _TIME,
            "superseded_by": {"type": ["integer", "null"]},
            "source": _TEXT,
            "memory_id": {"type": ["integer", "null"]},
            "dismissed_at": _MAYBE_TIME,
        }
    ),
    "Rule": _object(
        {
            "id": _TEXT,
            "then": _TEXT,
            "when": _TEXT,
            "scope_tier": _TEXT,
            "scope_name": _TEXT,
            "evidence_memory_ids": {"type": "array", "items": _ID},
            "evidence_fact_ids": {"type": "array", "items": _ID},
            "source": _TEXT,
            "added_at": _TIME,
            "last_confirmed_at": _TIME,
            "enabled": {"type": "boolean"},
            "recheck_reason": {
                "type": ["string", "null"],
                "description": "Why the rule needs a re-check; null when it does not.",
            },
        }
    ),
}
COMPONENTS.update(
    {
        "SearchResult": _object(
            {
                "facts": array_of("Fact"),
                "memories": array_of("Memory"),
                "empty_reason": {"type": ["string", "null"]},
                "upto": {
                    "type": ["integer", "null"],
                    "description": "The newest memory id this page could show (null: none"
                    " yet): send it as upto with the next pages.",
                },
                "at": {
                    "type": "integer",
                    "description": "The time it was ranked at (epoch ms): send it as at with"
                    " the next pages.",
                },
            }
        ),
        "SavedMemory": _object({"memory": ref("Memory"), "created": {"type": "boolean"}}),
        "Dismissal": _object(
            {"type": _TEXT, "id": _ID, "project": _TEXT, "dismissed": {"type": "boolean"}}
        ),
        "Timeline": _object(
            {"anchor": ref("Memory"), "before": array_of("Memory"), "after": array_of("Memory")}
        ),
        "FactHistory": _object({"subject": _TEXT, "facts": array_of("Fact")}),
        "SavedFact": _object({"fact": ref("Fact"), "created": {"type": "boolean"}}),
        "RuleList": _object(
            {
                "rules": array_of("Rule"),
                "upto": {
                    "type": ["integer", "null"],
                    "description": "The bound of this list (null: no rule yet): send it as"
                    " upto to list the same rules again.",
                },
            }
        ),
        "SavedRule": _object({"rule": ref("Rule"), "created": {"type": "boolean"}}),
        "WorkStateIndex": _object(
            {
                "project": _TEXT,
                "lists": {
                    "type": "array",
                    "items": _object({"name": _TEXT, "id": _ID, "count": _ID, "updated_at": _TIME}),
                },
            }
        ),
        "WorkStateList": _object(
            {
                "project": _TEXT,
                "name": _TEXT,
                "id": _ID,
                "items": {"type": "array"},
                "updated_at": _TIME,
                "version": _TEXT,
            }
        ),
        "SavedWorkState": _object({"project": _TEXT, "name": _TEXT, "id": _ID, "count": _ID}),
        "Context": _object({"project": _TEXT, "markdown": _TEXT}),
    }
)


@dataclass(frozen=True)
class Operation:
    """One JSON API route: where it is, what it takes, what it answers, who handles it.

    ``path``, ``query`` and ``body`` are object schemas checked with the tools' argument
    checker; the handler gets their merged, checked values.
    """

    method: str
    path: str
    operation_id: str
    summary: str
    handler: Handler
    response: str
    statuses: tuple[int, ...] = (200,)
    path_params: Schema | None = None
    query: Schema | None = None
    body: Schema | None = None
    body_required: bool = False


def bounded(schema: Schema) -> Schema:
    """The schema with every whole-number field capped at ``MAX_ID`` unless it has a cap."""
    out = dict(schema)
    whole = out.get("type") == "integer" or out.get("multipleOf") == 1
    if whole and "maximum" not in out:
        out["maximum"] = MAX_ID
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: bounded(spec) for name, spec in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = bounded(out["items"])
    return out


def shown(schema: Schema) -> Schema:
    """How a checked input schema reads in OpenAPI: whole numbers become integers."""
    out = {key: value for key, value in schema.items() if key != "description"}
    if out.get("type") == "number" and out.get("multipleOf") == 1:
        out["type"] = "integer"
        del out["multipleOf"]
    if isinstance(out.get("properties"), dict):
        out["properties"] = {name: shown(spec) for name, spec in out["properties"].items()}
    if isinstance(out.get("items"), dict):
        out["items"] = shown(out["items"])
    return out


def _parameters(where: str, schema: Schema | None) -> list[Schema]:
    if schema is None:
        return []
    required = set(schema.get("required", []))
    return [
        {
            "name": name,
            "in": where,
            "required": where == "path" or name in required,
            "schema": shown(spec),
            **({"description": spec["description"]} if "description" in spec else {}),
        }
        for name, spec in schema.get("properties", {}).items()
    ]


_QUERY_TAKEN = (
    "A query parameter not listed here is refused (400, invalid_input), and so is one given twice."
)
_QUERY_NONE = "Takes no query parameters: any is refused (400, invalid_input)."


def _json(schema: Schema) -> Schema:
    return {"application/json": {"schema": schema}}


def _operation(op: Operation, secured: bool) -> Schema:
    responses: Schema = {
        str(status): {"description": "Success.", "content": _json(ref(op.response))}
        for status in op.statuses
    }
    responses["default"] = {
        "description": "An error, with a stable code (invalid_input 400, unauthorized 401,"
        " forbidden 403, not_found 404, conflict 409, payload_too_large 413, ...).",
        "content": _json(ref("Error")),
    }
    out: Schema = {
        "operationId": op.operation_id,
        "summary": op.summary,
        # OpenAPI has no additionalProperties for parameters (``api.check_query``).
        "description": _QUERY_TAKEN if op.query else _QUERY_NONE,
        "parameters": _parameters("path", op.path_params) + _parameters("query", op.query),
        "responses": responses,
    }
    if op.body is not None:
        # A field the operation does not take is refused (``api.check_fields``).
        body = {**shown(op.body), "additionalProperties": False}
        out["requestBody"] = {"required": op.body_required, "content": _json(body)}
    if secured:
        out["security"] = [{"bearer": []}]
    return out


def build_document(operations: Sequence[Operation], *, secured: bool) -> Schema:
    """The OpenAPI 3.1 document of the JSON API; ``secured`` when an API key is required."""
    paths: dict[str, Schema] = {}
    for op in operations:
        paths.setdefault(op.path, {})[op.method.lower()] = _operation(op, secured)
    components: Schema = {"schemas": COMPONENTS}
    if secured:
        components["securitySchemes"] = {
            "bearer": {"type": "http", "scheme": "bearer", "description": "ALETHEIA_API_KEY"}
        }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Aletheia JSON API",
            "version": __version__,
            "description": "The shared memory for scripts and the web UI: the same domain"
            " functions as the MCP tools, JSON in and out. A query parameter or a body field"
            " an operation does not list is refused (400, invalid_input), never ignored, and so"
            " is a query parameter or a key of the body (at any depth) given twice.",
        },
        "paths": paths,
        "components": components,
    }
