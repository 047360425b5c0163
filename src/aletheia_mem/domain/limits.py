"""How much one item may hold, whoever writes it (a tool, the CLI, the JSON API, the web UI), so
that everything a store holds can be exported, imported and synced again."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from aletheia_mem.blank import is_blank
from aletheia_mem.errors import InvalidInputError

MAX_TEXT = 20_000  # a memory's text
MAX_LIST_JSON = 100_000  # characters of a work-state list's items as JSON
MAX_TITLE = 400
MAX_RULE = 800  # a rule's then and when
MAX_NAME = 200  # a project, a list, a situation
MAX_IDS = 100  # ids, facts or files in one call
MAX_PATH = 1000  # one file path
MAX_FACT_PART = 2000  # a fact's subject, predicate or object
# A memory keeps each fact it states as "subject predicate object".
MAX_STATEMENT = 3 * MAX_FACT_PART + 2

# What a store may hold, whoever wrote it: a synced record (``sync.validate``) may carry more
# than this version's writers take, as a peer of another version wrote it. Import takes as much,
# so that whatever a store holds imports again.
HELD_TEXT = 200_000  # a memory's text and narrative, a list's items, an episode's summary
HELD_TITLE = 1000  # a memory's title, a file path
HELD_FACT_PART = 10_000  # a fact's subject, predicate or object; a memory's statement of one
HELD_RULE = 1000  # a rule's then, when and scope name
HELD_REASON = 1000  # why an item was dismissed
HELD_ITEMS = 1000  # a memory's statements and files, a rule's evidence ids
HELD_KEY = 300  # a memory's dedupe key (a list's "list:" and name)


# What no name may hold (a project, a tool's or token's name), whoever writes it: control and
# format characters, which a terminal or a page would act on (escapes, newlines, bidi overrides)
# or hide (zero-width), so that two names that look the same are the same name.
UNPRINTED_NAME = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]")


# Half of a UTF-16 pair, alone: no store and no JSON writer can encode it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NESTING = (dict, list)  # a tuple: ``dict | list`` would be a new union object at each test


def shape_problem(values: Sequence[object], what: str, max_depth: int) -> str | None:
    """Why JSON values cannot reach a store, else None: a lone surrogate, which no store can
    encode, or lists and objects nested past ``max_depth`` levels (each of ``values`` at level
    1), which the recursive steps after this could not walk. Walked without recursion."""
    pending: list[tuple[object, int]] = []
    _walk_next(pending, values, 1)
    while pending:
        value, depth = pending.pop()
        if isinstance(value, str):
            if LONE_SURROGATE.search(value):
                return f"{what} must not contain lone surrogate characters."
            continue
        if depth > max_depth:
            return f"{what} must not nest more than {max_depth} levels deep."
        if isinstance(value, dict):
            _walk_next(pending, [*value, *value.values()], depth + 1)
        elif isinstance(value, list):
            _walk_next(pending, value, depth + 1)
    return None


def _walk_next(pending: list[tuple[object, int]], values: Iterable[object], depth: int) -> None:
    """Add to ``pending`` the ``values`` that may hold a problem (ASCII text, numbers and the
    like cannot), in their order: skipping the others changes nothing that is found first."""
    for value in values:  # a loop: fewer instructions than ``extend`` over a generator
        if (isinstance(value, str) and not value.isascii()) or isinstance(value, _NESTING):
            pending.append((value, depth))  # noqa: PERF401


def check_name_characters(name: str, value: str) -> None:
    """Raises InvalidInputError when ``value`` holds a control or format character."""
    if UNPRINTED_NAME.search(value):
        raise InvalidInputError(f"{name} must not contain control or format characters.")


def check_length(name: str, value: str, limit: int) -> None:
    """Raises InvalidInputError when ``value`` is longer than ``limit`` characters."""
    if len(value) > limit:
        raise InvalidInputError(f"{name} must be at most {limit} characters.")


def check_paths(files: Sequence[str]) -> None:
    """At most ``MAX_IDS`` paths of at most ``MAX_PATH`` characters each."""
    if len(files) > MAX_IDS:
        raise InvalidInputError(f"files must hold at most {MAX_IDS} items.")
    for path in files:
        check_length("each of files", path, MAX_PATH)


def check_fact_parts(*parts: str) -> None:
    """A fact's subject, predicate and object (or its statement), each at most
    ``MAX_FACT_PART`` characters and without NUL."""
    if any(len(part) > MAX_FACT_PART for part in parts):
        raise InvalidInputError(f"each part of a fact must be at most {MAX_FACT_PART} characters.")
    check_fact_text(*parts)


def blank_fact_part(
    subject: object, predicate: object, object_: object, blank: Callable[[str], bool] = is_blank
) -> str | None:
    """Which of a fact's subject, predicate and object is no text or ``blank`` (no door stores
    such a fact: a save says "each fact needs ...", the JSON API "subject is required."), the
    first one named; None when each is text."""
    parts = {"subject": subject, "predicate": predicate, "object": object_}
    return next((n for n, p in parts.items() if not isinstance(p, str) or blank(p)), None)


def check_fact_text(*parts: str) -> None:
    """No NUL in a fact: a store holding one could not be exported and imported again."""
    if any("\x00" in part for part in parts):
        raise InvalidInputError("each fact must not contain NUL characters.")
