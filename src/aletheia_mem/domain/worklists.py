"""Named work-state lists (to-do lists and the like), replaced whole on every write."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aletheia_mem.blank import is_blank_as_before
from aletheia_mem.canonical import canonical
from aletheia_mem.clock import Clock
from aletheia_mem.domain.limits import (
    HELD_ITEMS,
    MAX_LIST_JSON,
    MAX_NAME,
    check_length,
    check_name_characters,
    shape_problem,
)
from aletheia_mem.domain.recall_tag import neutralize
from aletheia_mem.domain.redaction import redact_named_value, redact_secrets
from aletheia_mem.errors import ConflictError, InvalidInputError, NotFoundError, StaleListError
from aletheia_mem.storage.base import ListCheck, Memory, renamed_reason
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.entries import AuditEntry, NewMemory

WORK_STATE_KIND = "work_state"
# Levels of lists and objects in one item, the item's own included: what the tool takes (its
# arguments nest at most 32 levels, the arguments object and the items list among them).
MAX_ITEM_DEPTH = 30


def list_name(name: str) -> str:
    """The name a list is stored under: in NFC (``canonical``) with secrets in it redacted, the
    same for writes and reads."""
    return canonical(redact_secrets(canonical(name)))


def quoted_name(name: str) -> str:
    """A list's name in quotes as it is stored, inner spaces kept (names match exactly after
    trimming): its JSON string, so a quote or a line break in it is escaped, the reply stays
    one line and the name can be sent back as shown."""
    shown = json.dumps(name, ensure_ascii=False)
    if not shown.isprintable():  # a line or paragraph separator, a format character
        shown = "".join(char if char.isprintable() else json.dumps(char)[1:-1] for char in shown)
    return neutralize(shown)


def no_such_list(name: str) -> str:
    """The answer for a list name that names no list, quoted as stored."""
    return f"No list named {quoted_name(list_name(name))}."


# What a list's dedupe key starts with (a note's is the hash of its words).
LIST_KEY_PREFIX = "list:"


def list_key(name: str) -> str:
    return LIST_KEY_PREFIX + list_name(name)


def list_title(name: str) -> str:
    return f"{list_name(name)} list"


def list_fault(title: str, key: str | None) -> tuple[str, str] | None:
    """What is wrong with a list's title and key from another store or an export, as
    ``(field, problem)``, or None: its title is its name, which a list always has, and its key
    is ``list:`` and that name (a key of another shape, a note's hash, would answer the save of
    that note "Already saved" with this list; another name would be a second list of the
    title's name). Sync and import each word it their own way."""
    if is_blank_as_before(title):  # as an earlier release, which may have made it, kept it
        return "title", "must not be blank"
    if key is None or not key.startswith(LIST_KEY_PREFIX):
        return "dedupe_key", f"must start with {LIST_KEY_PREFIX}"
    # both as this store keeps them (a name redacted alone), as work_state_write makes them of
    # the one name: a key naming another list would make two lists of one name here
    name = stored_list_title(title).removesuffix(" list")
    if stored_list_key(key) != LIST_KEY_PREFIX + name:
        return "dedupe_key", f"must be {LIST_KEY_PREFIX} and the name its title holds"
    return None


def stored_list_title(title: str) -> str:
    """A list's title from another store or an export as this store titles the list: its name
    redacted alone, as ``list_title`` redacts it (a secret may show only so: a ``.pgpass`` line
    ends the name, not the title). A title without `` list`` (none is written so) is redacted
    whole."""
    name = title.removesuffix(" list")
    return redact_secrets(title) if name == title else list_title(name)


def stored_list_key(key: str) -> str:
    """A list's key from another store or an export as this store keys the list: ``list_key``
    of the name after ``list:``, so a secret in the name is redacted as in the list's title and
    work_state_write finds the list by that name; the same list is one list on every machine.
    A key without ``list:`` (none is written so) is redacted whole."""
    name = key.removeprefix(list_key(""))
    return redact_secrets(key) if name == key else list_key(name)


def rebuilt_list_key(data: dict[str, Any]) -> str | None:
    """The key ``work_state_write`` gives the list whose fields (a sync record's data, an
    export's memory) are ``data``: ``list:`` and the name its title holds, for a list whose key
    does not start with ``list:`` (an earlier build took one from a sync or an import). None
    for a note, for a key of that form already, and for a blank title, which names no list."""
    title, key = data.get("title"), data.get("dedupe_key")
    if data.get("kind") != WORK_STATE_KIND or not isinstance(title, str):
        return None
    if key is not None and (not isinstance(key, str) or key.startswith(LIST_KEY_PREFIX)):
        return None
    name = title.removesuffix(" list").strip()
    return list_key(name) if name else None


def _list_memory(
    clock: Clock, *, project: str, name: str, items: Sequence[object], tool: str
) -> NewMemory:
    """The memory a list is stored as, its items checked (see ``write_list``)."""
    check_name_characters("project", project)
    check_length("list", name, MAX_NAME)
    check_items(items)
    return NewMemory(
        project=project,
        type="note",
        kind=WORK_STATE_KIND,
        title=list_title(name),
        text=redacted_json(list(items)),
        tool=tool,
        created_at=clock(),
        dedupe_key=list_key(name),
    )


def unchanged_since(name: str, based_on: str | None) -> ListCheck | None:
    """The check that refuses a write based on a reading of list ``name`` (its ``version``,
    ``based_on``) once the list changed or is gone; None when the write is based on none. The
    store runs it in the write's transaction, so no write can slip in between."""
    if based_on is None:
        return None
    seen = based_on.strip()

    def check(text: str | None) -> None:
        if text is None or items_version(stored_items(text)) != seen:
            raise StaleListError(
                f"The list {quoted_name(list_name(name))} changed since it was read: read it"
                " again and send its new version as based_on."
            )

    return check


def stored_items(text: str) -> list[Any]:
    """A list's items from its stored JSON (text that is not a JSON list: one item)."""
    try:
        items = json.loads(text)
    except ValueError:
        return [text]
    return items if isinstance(items, list) else [items]


def write_list(
    store: Store,
    clock: Clock,
    *,
    project: str,
    name: str,
    items: Sequence[object],
    tool: str,
    based_on: str | None = None,
) -> int:
    """Replace the list's items; returns the list's memory id (stable across rewrites).
    ``based_on``: the version of the list the write was made from (see ``unchanged_since``).

    Raises:
        StaleListError: the list changed, or is gone, since the reading ``based_on`` names.
        InvalidInputError: more than ``HELD_ITEMS`` items (the tool's ``maxItems``), an item is
            not a string, number, boolean or plain object, a number is not finite (JSON has no
            Infinity or NaN), or the items are too long as JSON.
    """
    new = _list_memory(clock, project=project, name=name, items=items, tool=tool)
    return store.put_work_state(new, unchanged_since(name, based_on))


RENAME_TOOL = "rename_list"  # the audit trail's name for a rename (no tool of its own)


def rename_list(
    store: Store,
    clock: Clock,
    *,
    project: str,
    name: str,
    new_name: str,
    items: Sequence[object],
    tool: str,
    based_on: str | None = None,
) -> int:
    """Rename a live list and replace its items, in one transaction with an audit row: the
    list is saved under the new name with its pin, and the old one is dismissed (restore brings
    it back), so that a synced store merges the rename as ordinary writes. A dismissed list of
    the new name comes back with these items, as writing that name brings it back (a rename
    undone is a rename back). Returns the new list's memory id. ``based_on``: as
    ``write_list``'s, of the list renamed.

    Raises:
        StaleListError: as ``write_list``'s, for ``based_on``.
        NotFoundError: no live list has the old name.
        ConflictError: a live list has the new name; nothing changed.
        InvalidInputError: as ``write_list``.
    """
    new = _list_memory(clock, project=project, name=new_name, items=items, tool=tool)
    check = unchanged_since(name, based_on)
    if list_key(name) == new.dedupe_key:
        return store.put_work_state(new, check)
    audit = AuditEntry(
        at=new.created_at, actor=tool, tool=RENAME_TOOL, project=project, result="ok", detail=None
    )
    moved = store.rename_work_state(list_key(name), new, audit, check)
    if moved == "missing":
        raise NotFoundError(no_such_list(name))
    if moved == "taken":
        raise ConflictError(
            f"A list named {quoted_name(list_name(new_name))} exists; nothing was renamed."
        )
    return moved


def dismissed_list(store: Store, *, project: str, name: str) -> Memory | None:
    """The dismissed list of this name (Restore brings it back), or None: no list has the
    name, or a live one does."""
    memory = store.find_memory(project, list_key(name))
    if memory is None or memory.kind != WORK_STATE_KIND or memory.dismissed_at is None:
        return None
    return memory


def renamed_to(memory: Memory, name: str) -> bool:
    """Whether the dismissed list ``memory`` was renamed to the list called ``name``: renaming
    that list back to it undoes the rename."""
    return memory.dismiss_reason == renamed_reason(f"{list_name(name)} list")


def items_version(items: Sequence[object]) -> str:
    """A list's version as a reader saw it: a hash of its items, which a write based on that
    reading sends back (``based_on``) to be refused if the list changed meanwhile."""
    text = json.dumps(list(items), ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def check_items(items: Sequence[object]) -> None:
    """Refuse what a list cannot hold: see ``write_list``."""
    if len(items) > HELD_ITEMS:  # the CLI and the JSON API refuse what the tool's schema does
        raise InvalidInputError(f"items must hold at most {HELD_ITEMS} items.")
    for item in items:
        if item is None or isinstance(item, list):
            raise InvalidInputError(
                "items must hold only strings, numbers, booleans or plain objects."
            )
    if (problem := shape_problem(items, "items", MAX_ITEM_DEPTH)) is not None:
        raise InvalidInputError(problem)
    try:
        size = len(json.dumps(items, ensure_ascii=False, allow_nan=False))
    except ValueError:
        raise InvalidInputError("items must hold only finite numbers.") from None
    if size > MAX_LIST_JSON:
        raise InvalidInputError(f"items must be at most {MAX_LIST_JSON} characters as JSON.")


_PAIR_NAMES = ("name", "key")


def _redact_strings(item: object) -> object:
    if isinstance(item, str):
        return redact_secrets(item)
    if isinstance(item, dict):
        redacted = {redact_secrets(str(k)): _redact_strings(v) for k, v in item.items()}
        # {"name": "DB_PASSWORD", "value": "..."}: the value is judged by the name it is given
        name = next((item[k] for k in _PAIR_NAMES if isinstance(item.get(k), str)), None)
        if name is not None and isinstance(item.get("value"), str):
            redacted["value"] = redact_named_value(name, item["value"])
        return redacted
    if isinstance(item, list):
        return [_redact_strings(value) for value in item]
    return item


def redacted_json(items: list[object]) -> str:
    """Compact JSON with secrets redacted inside strings and in ``"password": "..."`` pairs."""
    text = json.dumps(_redact_strings(items), ensure_ascii=False, separators=(",", ":"))
    paired = redact_secrets(text)
    try:
        json.loads(paired)
    except ValueError:  # a redaction cut through a JSON escape: keep the per-string result
        return text
    return paired


def parse_items(text: str) -> list[Any] | None:
    """A list's items from their JSON text (a synced or imported list's); None when the text is
    not a JSON list or holds a number JSON has no place for (Infinity, NaN, 1e309)."""
    try:
        items = json.loads(text)
        json.dumps(items, allow_nan=False)
    except (ValueError, RecursionError):
        return None
    return items if isinstance(items, list) else None


def read_list(store: Store, *, project: str, name: str) -> str | None:
    """The list's items as compact JSON, or None when there is no such live list."""
    memory = store.find_memory(project, list_key(name))
    if memory is None or memory.kind != WORK_STATE_KIND or memory.dismissed_at is not None:
        return None
    return memory.text


@dataclass(frozen=True)
class ListSummary:
    """One live list as an index shows it: its name, item count and last write."""

    project: str
    name: str
    id: int
    items: int
    updated_at: int


def item_count(text: str) -> int:
    """How many items a list's stored JSON holds (text that is not a JSON list: one)."""
    try:
        items = json.loads(text)
    except (ValueError, RecursionError):
        return 1
    return len(items) if isinstance(items, list) else 1


def list_index(store: Store, projects: Sequence[str], limit: int) -> list[ListSummary]:
    """The live lists of ``projects``, most recently written first, at most ``limit``."""
    found = [
        memory
        for project in projects
        for memory in store.keyed_memories(project, list_key(""), WORK_STATE_KIND, limit)
    ]
    found.sort(key=lambda memory: (memory.updated_at, memory.id), reverse=True)
    return [
        ListSummary(
            project=memory.project,
            name=memory.title.removesuffix(" list"),
            id=memory.id,
            items=item_count(memory.text),
            updated_at=memory.updated_at,
        )
        for memory in found[:limit]
    ]
