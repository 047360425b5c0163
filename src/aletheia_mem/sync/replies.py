"""A hub's hello and pull pages, checked before a store acts on them.

A hub that is not what it says must not make ``aletheia sync`` loop for ever (a cursor that
never moves, a page size of 0), crash (numbers no store column holds) or print what a terminal
would obey (control characters in a token's name or projects).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aletheia_mem.canonical import canonical
from aletheia_mem.errors import AletheiaError, InvalidInputError
from aletheia_mem.printable import printable_line
from aletheia_mem.sync.records import check_record
from aletheia_mem.sync.validate import is_key, is_project_key

MAX_WHOLE = 2**62  # what every store's integer columns hold
MAX_PROJECTS = 1000


@dataclass(frozen=True)
class Hello:
    """What a hub says of itself and of the token."""

    hub_id: str
    token_id: int
    token_name: str
    projects: tuple[str, ...] | None
    max_records: int


@dataclass(frozen=True)
class PullPage:
    """One pull page: its shape-checked records by position in the page, and why each other
    record was refused (held back: one bad record stops no sync)."""

    records: list[tuple[int, dict[str, Any]]]
    cursor: int
    more: bool
    refused: list[str]
    withheld: dict[str, int]  # records the hub held back, by its reason (``withheld_of``)


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < MAX_WHOLE


def _projects(value: Any) -> tuple[str, ...] | None:
    """The token's projects: None (every project) or a list of project keys; else ValueError."""
    if value is None:
        return None
    if not isinstance(value, list) or not 0 < len(value) <= MAX_PROJECTS:
        raise ValueError("projects")
    if not all(is_project_key(name) for name in value):
        raise ValueError("projects")
    return tuple(dict.fromkeys(canonical(name) for name in value))  # an older hub's NFD key


def _hello_of(answer: dict[str, Any]) -> Hello:
    token = answer["token"]
    if not isinstance(token, dict):
        raise ValueError("token")
    fields = {
        "hub_id": (answer["hub_id"], is_key),
        "token id": (token["id"], _is_whole),
        "token name": (token["name"], is_key),
        "max_records": (answer["max_records"], lambda value: _is_whole(value) and value > 0),
    }
    for name, (value, valid) in fields.items():
        if not valid(value):
            raise ValueError(name)
    return Hello(
        hub_id=answer["hub_id"],
        token_id=token["id"],
        token_name=token["name"],
        projects=_projects(token["projects"]),
        max_records=answer["max_records"],
    )


def read_hello(url: str, answer: dict[str, Any]) -> Hello:
    """A hub's answer to ``/sync/hello``.

    Raises:
        AletheiaError: a field is missing or holds what no hub sends.
    """
    try:
        return _hello_of(answer)
    except (KeyError, TypeError, ValueError) as error:
        detail = f" (its hello's {error.args[0]})" if isinstance(error, ValueError) else ""
        raise AletheiaError(f"{url} does not speak the Aletheia sync API{detail}.") from None


def read_pull_page(url: str, answer: dict[str, Any], after: int, page_size: int) -> PullPage:
    """A hub's answer to ``/sync/pull`` from cursor ``after``: its cursor never goes back, and
    moves on when more pages follow (else the next pull would ask for this one again). A
    record not shaped as one is left out, its problem in ``refused``.

    Raises:
        AletheiaError: not a pull page, or a bad one as a whole (nothing of it is applied).
    """
    try:
        records, cursor, more = answer["records"], answer["cursor"], answer["more"]
    except KeyError:
        raise AletheiaError(f"{url} sent a pull page that is not sync JSON.") from None
    if not _is_whole(cursor) or not isinstance(more, bool):
        raise AletheiaError(f"{url} sent a pull page that is not sync JSON.")
    if cursor < after or (more and cursor == after):
        raise AletheiaError(
            f"{url} sent a bad pull page: its cursor {cursor} does not move on from {after}."
        )
    if not isinstance(records, list) or len(records) > page_size:
        problem = "records must be a list" if not isinstance(records, list) else "too many records"
        raise AletheiaError(f"{url} sent a bad pull page: {problem}.")
    checked: list[tuple[int, dict[str, Any]]] = []
    refused: list[str] = []
    for position, record in enumerate(records):
        try:
            checked.append((position, check_record(record, position)))
        except InvalidInputError as error:
            refused.append(error.message)
    return PullPage(checked, cursor, more, refused, withheld_of(answer.get("withheld")))


MAX_REASONS = 10
MAX_REASON = 200


def withheld_of(value: Any) -> dict[str, int]:
    """What a hub says it held back of a pull page (``{reason: count}``; a hub of an earlier
    build says nothing): reasons printed without what a terminal would obey, counts whole
    numbers; anything else is no reason to stop a sync, and counts as nothing."""
    if not isinstance(value, dict) or len(value) > MAX_REASONS:
        return {}
    found: dict[str, int] = {}
    for reason, count in value.items():
        line = printable_line(reason, MAX_REASON) if isinstance(reason, str) else None
        if line and _is_whole(count) and count > 0:
            found[line] = found.get(line, 0) + count
    return found


def read_push_merged(answer: dict[str, Any], sent: int) -> int:
    """How many of the ``sent`` records a hub says it merged (``/sync/push``'s ``merged``):
    only a whole number from 0 to ``sent`` counts; anything else counts as none (the push
    itself was answered, and a count is no reason to stop a sync)."""
    merged: Any = answer.get("merged")
    return int(merged) if _is_whole(merged) and merged <= sent else 0
