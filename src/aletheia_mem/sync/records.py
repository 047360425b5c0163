"""The wire form of sync records, checked field by field before a store applies them."""

from __future__ import annotations

import re
from typing import Any

from aletheia_mem.errors import InvalidInputError

MAX_TEXT = 200_000
MAX_KEY = 100
MAX_LIST = 10_000
# Field types: s text, s? text or null, i integer, i? integer or null, b boolean,
# ls list of texts, rq list of [integer, text] (an episode's requests).
_FIELDS: dict[str, dict[str, str]] = {
    "memory": {
        "project": "s",
        "type": "s",
        "kind": "s",
        "title": "s",
        "text": "s",
        "narrative": "s?",
        "facts": "ls",
        "files": "ls",
        "tool": "s",
        "pinned": "b",
        "created_at": "i",
        "updated_at": "i",
        "dismissed_at": "i?",
        "dismiss_reason": "s?",
        "dedupe_key": "s?",
    },
    "fact": {
        "project": "s",
        "subject": "s",
        "predicate": "s",
        "object": "s",
        "valid_from": "i",
        "valid_to": "i?",
        "recorded_at": "i",
        "superseded_by": "s?",
        "source": "s",
        "memory": "s?",
        "dismissed_at": "i?",
        "dismiss_reason": "s?",
    },
    "rule": {
        "then": "s",
        "when": "s",
        "scope_tier": "s",
        "scope_name": "s",
        "evidence_memories": "ls",
        "evidence_facts": "ls",
        "source": "s",
        "added_at": "i",
        "last_confirmed_at": "i",
        "enabled": "b",
        "updated_at": "i",
    },
    "episode": {
        "project": "s",
        "tool": "s",
        "started_at": "i",
        "ended_at": "i?",
        "summary": "s?",
        "dismissed_at": "i?",
        "dismiss_reason": "s?",
        "requests": "rq",
    },
}
_SCOPE_TIERS = ("everywhere", "project", "situation")
# The ids stores make (a uid or a store id: 32 hex digits; a rule's id), which hold no secret.
MADE_ID = re.compile("[0-9a-f]{32}|r_[0-9a-f]{10}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**62


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _is_text_list(value: Any) -> bool:
    return isinstance(value, list) and all(map(_is_text, value))


def _is_requests(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, list) and len(item) == 2 and _is_int(item[0]) and _is_text(item[1])
        for item in value
    )


def _texts(code: str, value: Any) -> list[str]:
    """The texts of a field of type ``code`` (shape-checked)."""
    if code in ("s", "s?"):
        return [] if value is None else [value]
    if code == "ls":
        return list(value)
    return [text for _, text in value] if code == "rq" else []


_CHECKS = {
    "s": _is_text,
    "s?": lambda value: value is None or _is_text(value),
    "i": _is_int,
    "i?": lambda value: value is None or _is_int(value),
    "b": lambda value: isinstance(value, bool),
    "ls": _is_text_list,
    "rq": _is_requests,
}


def check_record(value: Any, position: int) -> dict[str, Any]:
    """The record if it is well formed.

    Raises:
        InvalidInputError: naming the record's position and what is wrong with it.
    """
    where = f"record {position}"
    if not isinstance(value, dict) or set(value) != {"kind", "key", "v", "data"}:
        raise InvalidInputError(f"{where} must have exactly kind, key, v and data.")
    kind, key, version, data = value["kind"], value["key"], value["v"], value["data"]
    if not isinstance(kind, str) or kind not in _FIELDS:  # a list or an object: no dict key
        raise InvalidInputError(f"{where}: kind must be one of {', '.join(_FIELDS)}.")
    if not isinstance(key, str) or not key or len(key) > MAX_KEY:
        raise InvalidInputError(f"{where}: key must be a global id.")
    if not (
        isinstance(version, list)
        and len(version) == 2
        and _is_int(version[0])
        and isinstance(version[1], str)
        and 0 < len(version[1]) <= MAX_KEY
    ):
        raise InvalidInputError(f"{where}: v must be [changed_at, origin].")
    fields = _FIELDS[kind]
    if not isinstance(data, dict) or set(data) != set(fields):
        raise InvalidInputError(f"{where}: data must have exactly {', '.join(fields)}.")
    for name, code in fields.items():
        _check_field(where, kind, key, name, code, data[name])
    for name, code in fields.items():
        # no text any store holds is longer (each field's own limit is ``validate``'s)
        if any(len(text) > MAX_TEXT for text in _texts(code, data[name])):
            each = "" if code in ("s", "s?") else "each of "
            raise InvalidInputError(
                f"{_named(where, kind, key)}: {each}{name} must be at most {MAX_TEXT} characters."
            )
    if kind == "rule" and data["scope_tier"] not in _SCOPE_TIERS:
        raise InvalidInputError(f"{where}: scope_tier must be one of {', '.join(_SCOPE_TIERS)}.")
    if kind in ("memory", "fact", "episode") and not data["project"].strip():
        raise InvalidInputError(f"{where}: project must not be empty.")
    return value


def _check_field(where: str, kind: str, key: str, name: str, code: str, value: Any) -> None:
    """A field of the type ``code``: a list of more items than any store holds said so, before
    any item is read."""
    if isinstance(value, list) and len(value) > MAX_LIST:
        raise InvalidInputError(
            f"{_named(where, kind, key)}: {name} must hold at most {MAX_LIST} items."
        )
    if not _CHECKS[code](value):
        raise InvalidInputError(f"{where}: {name} has the wrong type.")


def _named(where: str, kind: str, key: str) -> str:
    """``record N (kind key)``, as ``validate`` names a record, when its key is one a store
    makes (no control characters to echo); else ``record N``."""
    if MADE_ID.fullmatch(key):
        return f"{where} ({kind} {key})"
    return where


def check_records(value: Any, max_count: int) -> list[dict[str, Any]]:
    """A list of at most ``max_count`` well-formed records."""
    if not isinstance(value, list):
        raise InvalidInputError("records must be a list.")
    if len(value) > max_count:
        raise InvalidInputError(f"at most {max_count} records per page.")
    return [check_record(item, position) for position, item in enumerate(value)]
