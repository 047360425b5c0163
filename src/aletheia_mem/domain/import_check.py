"""Each record of an import checked as strictly as a tool call, and redacted like one.

An export file may come from anyone (a teammate, a download, an attacker), so every field must
have its column's type, stay within the tools' limits, hold no NUL character and name only
known enums, and no time of a past event may lie in the future (more than a day ahead of the
importing machine's clock; one less ahead is kept as that clock's time); unknown and missing
fields are refused. A note's dedupe key is made again from its words, as sync does. Free text
goes through the same redaction as every other write, and its length is checked once redacted;
a rule whose text redaction changed is kept under the id of its redacted text. What an import
keeps is what a hub takes from a push (``sync.validate``), so that the store syncs after it. A
problem is an :class:`InvalidInputError` naming the line and field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from aletheia_mem.blank import is_blank_as_before
from aletheia_mem.domain.limits import (
    HELD_FACT_PART,
    HELD_ITEMS,
    HELD_KEY,
    HELD_REASON,
    HELD_RULE,
    HELD_TEXT,
    HELD_TITLE,
    LONE_SURROGATE,
    MAX_FACT_PART,
    MAX_IDS,
    MAX_NAME,
    MAX_PATH,
    MAX_RULE,
    MAX_STATEMENT,
    MAX_TEXT,
    MAX_TITLE,
    UNPRINTED_NAME,
    blank_fact_part,
)
from aletheia_mem.domain.memories import (
    composed_note,
    dedupe_key,
    stored_paths,
    stored_statements,
    stored_title,
)
from aletheia_mem.domain.redaction import redact_named_value, redact_secrets
from aletheia_mem.domain.rules import rule_id, rule_scope_name, rule_words, stored_scope_name
from aletheia_mem.domain.vocabulary import MEMORY_KINDS, MEMORY_TYPES, SCOPE_TIERS
from aletheia_mem.domain.worklists import (
    WORK_STATE_KIND,
    list_fault,
    parse_items,
    redacted_json,
    stored_list_key,
    stored_list_title,
)
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.printable import printable_line
from aletheia_mem.projects import MAX_PROJECT_LENGTH, normalize_project, project_key
from aletheia_mem.storage.id_cap import MAX_ID
from aletheia_mem.timefmt import FIRST_MS, LAST_MS

# Whatever a store may hold, from its own writers or a synced peer (``limits.HELD_*``).
LONG_TEXT = max(MAX_TEXT, HELD_TEXT)  # a memory's text and narrative, a list, a summary
TITLE = max(MAX_TITLE, HELD_TITLE)
MAX_ITEM = max(MAX_PATH, HELD_TITLE)  # a file path, a dedupe key
MAX_ITEMS = max(MAX_IDS, HELD_ITEMS)
FACT_PART = max(MAX_FACT_PART, HELD_FACT_PART)
STATEMENT = max(MAX_STATEMENT, HELD_FACT_PART)
RULE_TEXT = max(MAX_RULE, HELD_RULE)
SCOPE_NAME = max(MAX_NAME, HELD_RULE)
# Ids and next-id sequences: at most 2^53, the largest integer every JSON reader keeps exactly
# (``id_cap``). A store never gives an id past it either, so whatever its export holds, an import
# takes; a store imported at the cap refuses to give the next id.
ALL_PROJECTS = "*"  # what a read means by every project: no item belongs to it
_RULE_ID = re.compile(r"r_[0-9a-f]{10}")
_UID = re.compile(r"[0-9a-f]{32}")

Check = Callable[[Any], Any]


class _Bad(Exception):
    """A field's problem, said as the end of a sentence that starts with its name."""


def whole(low: int = 1, high: int = MAX_ID) -> Check:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _Bad(f"must be a whole number, not {_kind(value)}")
        if not low <= value <= high:
            raise _Bad(f"must be from {low} to {high}")
        return value

    return check


def instant(value: Any) -> int:
    """When something happened, in epoch milliseconds: from 1970 on. How late it may be
    depends on the importing machine's clock (``_check_times``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad(f"must be a whole number, not {_kind(value)}")
    if value < 0:
        raise _Bad("must not be before 1970")
    return value


INSTANT: Check = instant
# A fact's validity may lie before 1970 or years ahead: any instant a save reads (years 1 to
# 9999), as sync takes it from a peer.
VALIDITY = whole(FIRST_MS, LAST_MS)
ID = whole()
# How far ahead of this machine's clock a past event's time may be: a day, for the clock of the
# machine that exported (a laptop's, a WSL guest's after sleep), where a hub allows a live peer
# minutes. A time further ahead would stay the newest (of a list, a search by date, a sync
# version) for as long as it stays ahead.
MAX_AHEAD_MS = 86_400_000


def flag(value: Any) -> int:
    if value in (0, 1) and not isinstance(value, float):
        return int(value)
    raise _Bad(f"must be 0 or 1, not {_kind(value)}")


def text(limit: int, *, redact: bool = True) -> Check:
    def check(value: Any) -> str:
        if not isinstance(value, str):
            raise _Bad(f"must be a string, not {_kind(value)}")
        if "\x00" in value:
            raise _Bad("must not contain NUL characters")
        if LONE_SURROGATE.search(value):  # SQLite stores UTF-8, which has no place for them
            raise _Bad("must not contain lone surrogate characters")
        return within(limit, value, redact_secrets(value) if redact else value)

    return check


def within(limit: int, given: str, stored: str) -> str:
    """``stored`` (``given`` as stored: redacted, keyed) if it is at most ``limit`` characters:
    the length a hub checks when this store pushes it (a redaction may lengthen text)."""
    if len(stored) > limit:
        after = " once its secrets are redacted" if len(given) <= limit else ""
        raise _Bad(f"must be at most {limit} characters{after} (it has {len(stored)})")
    return stored


def one_of(choices: tuple[str, ...]) -> Check:
    def check(value: Any) -> str:
        if value not in choices:
            raise _Bad(f"must be one of: {', '.join(choices)}")
        return str(value)

    return check


def list_of(item: Check) -> Check:
    def check(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _Bad(f"must be a list, not {_kind(value)}")
        if len(value) > MAX_ITEMS:
            raise _Bad(f"must have at most {MAX_ITEMS} items")
        return [item(entry) for entry in value]

    return check


def optional(check: Check) -> Check:
    def nullable(value: Any) -> Any:
        return None if value is None else check(value)

    nullable.optional = True  # type: ignore[attr-defined]
    nullable.inner = check  # type: ignore[attr-defined]
    return nullable


def _kind(value: Any) -> str:
    """What a value that does not fit is, said in a message: a number as the file gives it
    (``1.0``, ``2``: "a number" named no fault in it), cut to 40 characters."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        given = json.dumps(value)
        return given if len(given) <= 40 else f"{given[:40]}..."
    names = {bool: "true/false", str: "a string"}
    names.update({list: "a list", dict: "an object", type(None): "null"})
    return names.get(type(value), type(value).__name__)


NAME = text(MAX_NAME, redact=False)
SCOPE_TEXT = text(SCOPE_NAME, redact=False)
ID_LIST = list_of(ID)


def name(value: Any) -> str:
    """A name as a tool call gives it: 1 to ``MAX_NAME`` characters, no control characters."""
    checked = NAME(value)
    if not checked.strip():
        raise _Bad("must not be empty")
    if UNPRINTED_NAME.search(checked):
        raise _Bad("must not contain control or format characters")
    return str(checked)


def caller(value: Any) -> str:
    """A tool's or token's name, redacted like the caller of a tool call, with what does not
    print dropped as a caller's name is stored now (release 0.4.1 stored ``ALETHEIA_TOOL`` with
    its control characters, and such a store's export must import)."""
    return redact_secrets(name(printable_line(NAME(value), MAX_NAME) or ""))[:MAX_NAME]


CALLER = caller


def rule_key(value: Any) -> str:
    """A rule's id as ``add_rule`` makes it: shown in list_rules, so nothing else gets in."""
    if not _RULE_ID.fullmatch(NAME(value)):
        raise _Bad("must be r_ and 10 hexadecimal digits")
    return str(value)


def project(value: Any) -> str:
    """A project as the tools key it: trimmed, lower-case, any secret in it redacted; never
    ``*`` (every project, to a read) nor empty, which no write can name."""
    given = name(value)
    key = within(MAX_NAME, given, normalize_project(given))
    if key == ALL_PROJECTS:
        raise _Bad('must not be "*", which means every project')
    return key


def is_uid(value: Any) -> bool:
    """Whether ``value`` is a uid as a store makes one (storage/uids.py, an episode's hash, an
    older store's uuid4): 32 lowercase hex digits."""
    return isinstance(value, str) and _UID.fullmatch(value) is not None


def uid(value: Any) -> str:
    """A uid as a store makes it (storage/uids.py, an episode's hash, an older store's uuid4):
    32 lowercase hex digits. Never redacted, so nothing else may get in."""
    if not is_uid(NAME(value)):
        raise _Bad("must be 32 lowercase hexadecimal digits")
    return str(value)


def scope_name(value: Any) -> str:
    """A rule's project or situation (empty for every project) as a store keeps it
    (``stored_scope_name``, as sync keeps it): without control characters, which a hub
    refuses and an earlier release let in; the rule is then kept under its id
    (``_check_whole``)."""
    given = SCOPE_TEXT(value)
    return within(SCOPE_NAME, given, stored_scope_name(given))


def ids(value: Any) -> list[int]:
    """A rule's evidence: ids, each once, as ``add_rule`` keeps them."""
    return list(dict.fromkeys(ID_LIST(value)))


REASON = optional(text(HELD_REASON))
FIELDS: dict[str, dict[str, Check]] = {
    "memory": {
        "id": ID, "uid": uid, "project": project, "type": one_of(MEMORY_TYPES),
        "kind": one_of(MEMORY_KINDS), "title": text(TITLE),
        "text": text(LONG_TEXT, redact=False), "narrative": optional(text(LONG_TEXT)),
        "facts": list_of(text(STATEMENT)), "files": list_of(text(MAX_ITEM)), "tool": CALLER,
        "pinned": flag, "created_at": INSTANT, "updated_at": INSTANT,
        "dismissed_at": optional(INSTANT), "dismiss_reason": REASON,
        "dedupe_key": optional(text(MAX_ITEM, redact=False)),
    },
    "fact": {
        "id": ID, "uid": uid, "project": project, "subject": text(FACT_PART),
        "predicate": text(FACT_PART), "object": text(FACT_PART), "valid_from": VALIDITY,
        "valid_to": optional(VALIDITY), "recorded_at": INSTANT, "superseded_by": optional(ID),
        "source": CALLER, "memory_id": optional(ID), "dismissed_at": optional(INSTANT),
        "dismiss_reason": REASON,
    },
    "rule": {
        "id": rule_key, "then_text": text(RULE_TEXT), "when_text": text(RULE_TEXT),
        "scope_tier": one_of(SCOPE_TIERS), "scope_name": scope_name,
        "evidence_memory_ids": ids, "evidence_fact_ids": ids, "source": CALLER,
        "added_at": INSTANT, "last_confirmed_at": INSTANT, "enabled": flag,
        "updated_at": INSTANT,
    },
    "episode": {
        "id": ID, "uid": uid, "project": project, "tool": CALLER,
        "started_at": INSTANT, "ended_at": optional(INSTANT), "summary": optional(text(LONG_TEXT)),
        "dismissed_at": optional(INSTANT), "dismiss_reason": REASON,
    },
    "request": {"id": ID, "episode_id": ID, "at": INSTANT, "text": text(MAX_TEXT)},
    "episode_memory": {"episode_id": ID, "memory_id": ID},
    "audit": {
        "id": ID, "at": INSTANT, "actor": CALLER, "tool": CALLER, "project": optional(project),
        "result": CALLER, "detail": optional(text(MAX_TEXT)),
    },
}  # fmt: skip
# Each kind's times of things that happened (its INSTANT fields): none may lie in the future.
PAST_FIELDS = {
    kind: tuple(name for name, check in fields.items() if getattr(check, "inner", check) is INSTANT)
    for kind, fields in FIELDS.items()
}


def checked_record(kind: str, data: dict[str, Any], line: int, *, now: int) -> dict[str, Any]:
    """``data`` with every field checked and its free text redacted; ``now`` is the importing
    machine's clock (epoch ms), which no time of a past event may pass by more than
    ``MAX_AHEAD_MS``.

    Raises:
        InvalidInputError: a field is unknown, missing or wrong; the message names the line.
    """
    fields = FIELDS[kind]
    if kind == "memory" and data.get("kind") != WORK_STATE_KIND:  # composed, as a save
        data = composed_note(data)
    for name in data:
        if name not in fields:
            raise InvalidInputError(f'Line {line}: {kind} has an unknown field "{name}".')
    clean: dict[str, Any] = {}
    for name, check in fields.items():
        if name not in data and not getattr(check, "optional", False):
            raise InvalidInputError(f'Line {line}: {kind} field "{name}" is missing.')
        try:
            clean[name] = check(data.get(name))
        except _Bad as problem:
            raise InvalidInputError(f'Line {line}: {kind} field "{name}" {problem}.') from None
    try:
        _check_times(kind, clean, now)
        _check_whole(kind, clean, data)
    except _Bad as problem:
        raise InvalidInputError(f"Line {line}: {kind} field {problem}.") from None
    if kind == "memory":
        clean["text"] = _memory_text(clean, line)
        clean["facts"] = stored_statements(clean["facts"])
        clean["files"] = stored_paths(clean["files"])
        if clean["kind"] == WORK_STATE_KIND:
            _check_list(clean, line)
            _list_name_and_key(clean, line)  # named and keyed as work_state_write names it
        else:  # as a save and sync keep a note: a blank title is its default title
            clean["title"] = stored_title(clean["title"], clean["text"])
            # as sync takes a peer's note: the key is the hash of its words, so that a key
            # naming other words cannot answer their save "Already saved" with this record, and
            # none (null) cannot let a save of the same words make it again (of two notes with
            # the same words the import keys the first: storage/sqlite/transfer.py)
            clean["dedupe_key"] = dedupe_key(clean["title"], clean["text"])
    elif kind == "fact":  # as the fact tools store it: password = Tr0ub4dor&3 loses its value
        clean["object"] = redact_named_value(clean["predicate"], clean["object"])
    return clean


# The record types that are synced items, with a version of their own.
VERSIONED = frozenset({"memory", "fact", "rule", "episode"})


def checked_changed_at(kind: str, raw: Any, line: int, *, now: int) -> int | None:
    """The time of a record's sync version (``"changed_at"`` beside its data, epoch ms),
    checked: None when it has none (an export of an earlier release). It may not be more than
    ``MAX_AHEAD_MS`` ahead of ``now``, and one less ahead is kept as ``now``: a hub refuses a
    version minutes ahead of its clock, and one far ahead would win every conflict.

    Raises:
        InvalidInputError: it is not a time, or it is on a record that is no synced item.
    """
    if raw is None:
        return None
    if kind not in VERSIONED:
        raise InvalidInputError(
            f'Line {line}: "changed_at" is for memory, fact, rule and episode records, not {kind}.'
        )
    try:
        changed_at = instant(raw)
    except _Bad as problem:
        raise InvalidInputError(f'Line {line}: {kind} "changed_at" {problem}.') from None
    if changed_at > now + MAX_AHEAD_MS:
        raise InvalidInputError(
            f'Line {line}: {kind} "changed_at" must not be in the future (more than a day'
            " ahead of this machine's clock)."
        )
    return min(changed_at, now)


# The references of a synced item that may wait for their item (a sync stopped before it
# came), by record type, and how many of each one record holds at most: as a sync record
# carries them (a fact's one memory, a rule's at most 100 evidence ids of each kind).
WAITING = {"fact": {"memory": 1}, "rule": {"evidence_memory": 100, "evidence_fact": 100}}


def checked_waiting(
    kind: str, raw: Any, record: dict[str, Any], line: int
) -> list[tuple[str, str]]:
    """A record's references still waiting for their items (``"waiting"`` beside its data:
    ``[[field, uid], ...]``), checked against the record (``record``, checked): [] when it has
    none (an export of an earlier release, or nothing waits).

    Raises:
        InvalidInputError: it is not a list of ``[field, uid]`` pairs of its type's fields, it
            names one twice or more than a sync record holds, it is on a record that is no
            fact or rule, or a fact waits for a memory while it has one.
    """
    if raw is None:
        return []
    fields = WAITING.get(kind)
    if fields is None:
        raise InvalidInputError(f'Line {line}: "waiting" is for fact and rule records, not {kind}.')
    where = f'Line {line}: {kind} "waiting"'
    if not isinstance(raw, list) or not all(
        isinstance(pair, list) and len(pair) == 2 for pair in raw
    ):
        raise InvalidInputError(f"{where} must be a list of [field, uid] pairs.")
    pairs: list[tuple[str, str]] = []
    for field, target in raw:
        if not isinstance(field, str) or field not in fields:
            raise InvalidInputError(f"{where} field must be one of: {', '.join(fields)}.")
        if not is_uid(target):
            raise InvalidInputError(
                f"{where} must name each item by its uid (32 lowercase hexadecimal digits)."
            )
        pairs.append((field, target))
    if len(set(pairs)) < len(pairs):
        raise InvalidInputError(f"{where} names a reference twice.")
    for field, most in fields.items():
        if sum(1 for name, _ in pairs if name == field) > most:
            raise InvalidInputError(f"{where} must hold at most {most} {field} references.")
    if kind == "fact" and pairs and record["memory_id"] is not None:
        raise InvalidInputError(f'{where} names a memory, but the fact has one ("memory_id").')
    return pairs


def _check_times(kind: str, record: dict[str, Any], now: int) -> None:
    """No time of a past event more than ``MAX_AHEAD_MS`` after ``now``; one ahead of ``now``
    (a day at most) is kept as ``now``: a hub takes a time at most minutes ahead of its clock,
    and would refuse every push of this store until its clock passed it."""
    for name in PAST_FIELDS[kind]:
        if record[name] is not None and record[name] > now + MAX_AHEAD_MS:
            raise _Bad(
                f'"{name}" must not be in the future (more than a day ahead of this machine\'s'
                " clock)"
            )
        if record[name] is not None:
            record[name] = min(record[name], now)


def _check_whole(kind: str, record: dict[str, Any], given: dict[str, Any]) -> None:
    """What fields say together; a problem starts with the quoted name of the field at fault.
    A rule's id is checked against its text as given, before this version's redaction, which
    may differ from the one that saved it; then it becomes the id of the text as redacted."""
    if kind == "fact":
        # as a save and a sync refuse it (``blank_fact_part``): no fact_history could name it
        blank = blank_fact_part(
            record["subject"], record["predicate"], record["object"], is_blank_as_before
        )
        if blank is not None:
            raise _Bad(f'"{blank}" must not be blank')
        if record["superseded_by"] == record["id"]:
            raise _Bad('"superseded_by" must not be the fact\'s own id')
        if record["valid_to"] is not None and record["valid_to"] < record["valid_from"]:
            raise _Bad('"valid_to" must not be before "valid_from"')
    elif kind == "rule":
        parts = ("then_text", "when_text", "scope_tier", "scope_name")
        if record["id"] != rule_id(*(given[part] for part in parts)):
            raise _Bad('"id" must be the id add_rule gives its text and scope')
        _rule_as_added(record, given)
        # redacted and in add_rule's one form here, the rule is kept under the id of what it
        # now says, as add_rule would key it: a hub refuses a rule whose id is not its text's
        record["id"] = rule_id(*(record[part] for part in parts))
    elif kind == "episode":
        # as sync keeps it: no store ends an episode before it starts (a clock set back during
        # the session, a hand-made record), so such an end is kept as its start
        if record["ended_at"] is not None and record["ended_at"] < record["started_at"]:
            record["ended_at"] = record["started_at"]
    elif kind == "memory":
        # no save updates a memory before it was made: kept as its making, as sync keeps it
        record["updated_at"] = max(record["updated_at"], record["created_at"])


def _rule_as_added(record: dict[str, Any], given: dict[str, Any]) -> None:
    """A rule's words and scope as ``add_rule`` (and a sync, ``sync.validate``) keeps them,
    with the same checks (``rule_words``, ``rule_scope_name``, ``project_key``): a blank
    ``then``, a situation without a name and a project rule naming no project (or ``*``)
    refused; a blank ``when`` is "always", words one space apart (before redaction, as
    add_rule redacts them), a project its key and an everywhere rule's name none."""
    try:
        then, when = rule_words(given["then_text"], given["when_text"], is_blank_as_before)
    except InvalidInputError:
        raise _Bad('"then_text" must not be blank') from None
    for field, words in (("then_text", then), ("when_text", when)):
        try:
            record[field] = within(RULE_TEXT, words, redact_secrets(words))
        except _Bad as problem:
            raise _Bad(f'"{field}" {problem}') from None
    tier = record["scope_tier"]
    try:
        record["scope_name"] = rule_scope_name(
            tier, record["scope_name"], _scope_project, stray_name_dropped=True
        )
    except InvalidInputError:  # a situation's blank name: a project's says why itself
        raise _Bad(f'"scope_name" of a {tier} rule must not be blank') from None


def _scope_project(name: str) -> str:
    """A project rule's project as a tool keys it (``project_key``), or why it cannot be."""
    try:
        return project_key(name, "scope_name")
    except InvalidInputError:
        if name.strip() == ALL_PROJECTS:
            problem = 'must name one project, not "*" (every project)'
        elif not name.strip():
            problem = "must not be blank"
        else:
            problem = f"must be at most {MAX_PROJECT_LENGTH} characters"
        raise _Bad(f'"scope_name" of a project rule {problem}') from None


def _check_list(memory: dict[str, Any], line: int) -> None:
    """A work-state list's title and key, as sync takes them (``list_fault``), its key within
    what a store holds."""
    fault = list_fault(memory["title"], memory["dedupe_key"])
    if fault is not None:
        raise InvalidInputError(f'Line {line}: memory field "{fault[0]}" of a list {fault[1]}.')
    if len(memory["dedupe_key"]) > HELD_KEY:
        raise InvalidInputError(
            f'Line {line}: memory field "dedupe_key" of a list must be at most {HELD_KEY}'
            " characters."
        )


def _list_name_and_key(memory: dict[str, Any], line: int) -> None:
    """A list's title and key as work_state_write makes them of its name, which is redacted
    alone (a ``.pgpass`` line ends the name, not the title nor the key)."""
    memory["title"] = stored_list_title(memory["title"])
    if len(memory["title"]) > TITLE:
        raise InvalidInputError(
            f'Line {line}: memory field "title" must be at most {TITLE} characters once its'
            " secrets are redacted."
        )
    if memory["dedupe_key"] is not None:
        memory["dedupe_key"] = stored_list_key(memory["dedupe_key"])


def _memory_text(memory: dict[str, Any], line: int) -> str:
    """A note's text, redacted, or a work-state list's items as JSON."""
    value: str = memory["text"]
    if memory["kind"] != WORK_STATE_KIND:
        stored = redact_secrets(value)
    else:
        items = parse_items(value)
        if items is None:
            raise InvalidInputError(
                f'Line {line}: memory field "text" of a list must be a JSON list'
                " without Infinity or NaN."
            )
        # As given (an earlier release spaced its JSON), unless redacting its parse changes it,
        # or the text says more than its parse: a key given twice keeps only its last value,
        # and the first, never checked, would be stored.
        redacted = redacted_json(items)
        same = redacted == _compact(items) and not _repeats_a_key(value)
        stored = value if same else redacted
    try:
        return within(LONG_TEXT, value, stored)
    except _Bad as problem:
        raise InvalidInputError(f'Line {line}: memory field "text" {problem}.') from None


def _compact(items: list[Any]) -> str:
    return json.dumps(items, ensure_ascii=False, separators=(",", ":"))


def _repeats_a_key(text: str) -> bool:
    """Whether a JSON text (one that parses) gives some object a key twice."""
    repeated = False

    def pairs(found: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal repeated
        keys = [key for key, _ in found]
        repeated = repeated or len(set(keys)) != len(keys)
        return dict(found)

    json.loads(text, object_pairs_hook=pairs)
    return repeated
