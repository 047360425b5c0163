"""Checking tool arguments against the tool's own inputSchema, forgiving what models send.

Numbers may come as numeric strings (of ASCII digits: ``number_text``), booleans as
"true"/"false", arrays of ids as "1,2" or a single id, an array of paths as one string (one
path: a path may hold a comma) or as its JSON text, and null or blank text (``""``, what models
send for "nothing"; so is text of only whitespace and format characters, a zero-width space:
``is_blank``) means absent: an optional argument then gets its default, a required one is
missing. Anything else that does not fit is an ``InvalidInputError`` with a message that names
the argument.
"""

from __future__ import annotations

import json
import math
from typing import Any

from aletheia_mem.blank import is_blank
from aletheia_mem.domain.limits import LONE_SURROGATE
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.number_text import BLANKS, ascii_number

Schema = dict[str, Any]
MAX_WHOLE = 2**63 - 1
MIN_WHOLE = -(2**63)
_NUMBERS = (int, float)  # a tuple: ``int | float`` would be a new union object at each test
_TYPE_NAMES = {"string": "a string", "number": "a number", "boolean": "true or false"}


class CollapsedString(dict[str, Any]):
    """The schema of a string property its handler keeps with whitespace collapsed (one space
    between words), as add_rule keeps a rule: its ``maxLength`` bounds that text, the one
    stored. Published as the plain schema it is."""


class TrimmedString(dict[str, Any]):
    """The schema of a string property its handler keeps trimmed (a list name, a path, a
    scope name): its ``maxLength`` bounds the trimmed text, the one stored or matched.
    Published as the plain schema it is."""


class ItemId(dict[str, Any]):
    """The schema of an integer id, which text may give as the server prints it: one ``#``
    before it (``"#7"``). Published as the plain schema it is."""


def applicable(
    arguments: dict[str, Any], mode: tuple[str, tuple[str, ...]] | None
) -> dict[str, Any]:
    """The arguments that apply: with ``mode`` ``(name, others)`` and ``name`` given (not
    null or blank), ``name`` and ``others`` only, the rest neither read nor checked (search's
    ``file``: "Then only project, file_suffix and limit apply")."""
    if mode is None or _is_blank(arguments.get(mode[0])):
        return arguments
    kept = {mode[0], *mode[1]}
    return {name: value for name, value in arguments.items() if name in kept}


def check_arguments(
    schema: Schema, arguments: dict[str, Any], *, exact: bool = False
) -> dict[str, Any]:
    """Arguments with defaults filled in and values coerced to the declared types.

    ``exact``: a number given as text is read without the blanks around it a model's argument
    may carry (an address's ``/api/memories/%201%20`` is no id).
    """
    properties: dict[str, Schema] = schema.get("properties", {})
    clean: dict[str, Any] = {}
    for name, spec in properties.items():
        value = arguments.get(name)
        if value is None or (isinstance(value, str) and is_blank(value)):
            if "default" in spec:
                clean[name] = spec["default"]
            continue
        _check_encodable(name, value)
        clean[name] = _check_value(name, spec, value, exact)
    for name in schema.get("required", []):
        value = clean.get(name)
        if _is_blank(value) and not (value == [] and properties[name].get("minItems") == 0):
            raise InvalidInputError(f"{name} is required.")
    return clean


def check_value(name: str, spec: Schema, value: Any) -> Any:
    """One argument checked and coerced as ``check_arguments`` checks it, named ``name`` in
    its errors: the CLI gives a tool's argument as an option (``--older-than-days``)."""
    _check_encodable(name, value)
    return _check_value(name, spec, value)


def _check_encodable(name: str, value: Any) -> None:
    """No text anywhere in ``value`` (an item, a key) holds a lone surrogate, which no store
    can encode as UTF-8; a loop, not recursion: a value may nest deep."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii() and LONE_SURROGATE.search(item):
                raise InvalidInputError(f"{name} must not contain lone surrogate characters.")
        elif isinstance(item, dict):
            pending += [*item, *item.values()]
        elif isinstance(item, list):
            pending += item


def _is_blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and is_blank(value)) or value == []


def _check_value(name: str, spec: Schema, value: Any, exact: bool = False) -> Any:
    kind = spec.get("type")
    if kind == "string":
        return _check_string(name, spec, value)
    if kind in ("number", "integer"):
        return _check_number(name, spec, value, exact)
    if kind == "boolean":
        return _check_boolean(name, value)
    if kind == "array":
        return _check_array(name, spec, value)
    return value


def _check_string(name: str, spec: Schema, raw: Any) -> str:
    if isinstance(raw, _NUMBERS) and not isinstance(raw, bool):
        raw = str(raw)
    if not isinstance(raw, str):
        raise InvalidInputError(f"{name} must be a string.")
    value: str = raw
    if "\x00" in value:
        raise InvalidInputError(f"{name} must not contain NUL characters.")
    enum = spec.get("enum")
    if enum is not None:
        value = value.strip().lower()
        if value not in enum:
            raise InvalidInputError(f"{name} must be one of: {', '.join(enum)}.")
    limit = spec.get("maxLength")
    measured = value
    if isinstance(spec, CollapsedString):
        measured = " ".join(value.split())
    elif isinstance(spec, TrimmedString):
        measured = value.strip()
    if limit is not None and len(measured) > limit:
        raise InvalidInputError(f"{name} must be at most {limit} characters.")
    return value


def _check_number(name: str, spec: Schema, value: Any, exact: bool = False) -> int | float:
    number: int | float
    if isinstance(value, bool):
        raise InvalidInputError(f"{name} must be a number.")
    if isinstance(value, _NUMBERS):
        number = value
    elif isinstance(value, str):
        number = _number_text(name, spec, value if exact else value.strip(BLANKS))
    else:
        raise InvalidInputError(f"{name} must be a number.")
    if not math.isfinite(number):
        raise InvalidInputError(f"{name} must be a number.")
    if spec.get("type") == "integer" or spec.get("multipleOf") == 1:
        if number != int(number):
            raise InvalidInputError(f"{name} must be a whole number.")
        number = int(number)
    low, high = spec.get("minimum"), spec.get("maximum")
    if (low is not None and number < low) or (high is not None and number > high):
        if low is None:
            bounds = f"at most {high}"
        else:
            bounds = f"from {low} to {high}" if high is not None else f"at least {low}"
        raise InvalidInputError(f"{name} must be {bounds}.")
    if isinstance(number, int) and number > MAX_WHOLE:  # beyond SQLite's INTEGER range
        raise InvalidInputError(f"{name} must be at most {MAX_WHOLE}.")
    if isinstance(number, int) and number < MIN_WHOLE:
        raise InvalidInputError(f"{name} must be at least {MIN_WHOLE}.")
    return number


def _number_text(name: str, spec: Schema, text: str) -> int | float:
    """The number ``text`` writes in ASCII (``ascii_number``: "\uff11", "\u0663" and "1_0"
    are none); for an id, also as the server prints it (``#7``)."""
    if isinstance(spec, ItemId) and text.startswith("#"):
        text = text[1:]  # one "#" only: "##7", "# 7" and "#-7" stay refused
        if not text[:1].isdigit():
            raise InvalidInputError(f"{name} must be a number.")
    number = ascii_number(text)
    if number is None:
        raise InvalidInputError(f"{name} must be a number.")
    return number


def _check_boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    raise InvalidInputError(f"{name} must be true or false.")


def _check_array(name: str, spec: Schema, value: Any) -> list[Any]:
    item_spec: Schema = spec.get("items", {})
    if isinstance(value, str) and item_spec.get("type") in ("number", "integer", "string"):
        value = _json_array(name, value)
    if isinstance(value, str) and item_spec.get("type") in ("number", "integer"):
        value = [part for part in value.replace(" ", ",").split(",") if part]
    elif isinstance(value, str) and item_spec.get("type") == "string":
        value = [value]  # one path: a path may hold a comma ("data/a,b.csv")
    elif isinstance(value, _NUMBERS) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list):
        raise InvalidInputError(f"{name} must be an array.")
    limit = spec.get("maxItems")
    if limit is not None and len(value) > limit:
        raise InvalidInputError(f"{name} must hold at most {limit} items.")
    if not item_spec.get("type"):
        return value
    return [_check_value(f"each of {name}", item_spec, item) for item in value]


def _json_array(name: str, text: str) -> Any:
    """The array a client sent as its JSON text (``'["a.py", "b.py"]'``, ``"[1, 2]"``), else
    ``text``: split at its commas, it would give ``'["a.py"'``. Only for arrays of numbers or
    strings, whose items are checked one by one after (no nesting to guard)."""
    if not text.lstrip().startswith("["):
        return text
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if not isinstance(value, list):
        return text
    _check_encodable(name, value)  # "\\ud800" in the text is a lone surrogate once read
    return value
