"""What a sync record may hold, checked as strictly as a tool call, on both ends of a sync.

``check_records`` (records.py) checks the shape: fields and their JSON types. This module checks
the values: enums, lengths, names without control characters, times that are not in the future,
uids as a store makes them, rule ids that match their text; and it redacts secrets exactly as a
save does and keeps a note as a save and an import keep it (a blank title is its default title,
its files each once). The hub runs it on every pushed page and a store on every pulled page, so
neither a teammate nor a hub can put into a store what a tool call (or an import) could not.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from aletheia_mem.blank import is_blank_as_before
from aletheia_mem.canonical import canonical
from aletheia_mem.domain.import_check import ALL_PROJECTS, is_uid
from aletheia_mem.domain.limits import (
    HELD_FACT_PART,
    HELD_ITEMS,
    HELD_KEY,
    HELD_REASON,
    HELD_RULE,
    HELD_TEXT,
    HELD_TITLE,
    LONE_SURROGATE,
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
from aletheia_mem.projects import normalize_project, project_key
from aletheia_mem.storage.sync_records import MAX_RECORD_BYTES, json_bytes, newest_requests
from aletheia_mem.sync.records import MADE_ID
from aletheia_mem.timefmt import FIRST_MS, LAST_MS

# How far in the future a version or a time of change may be: the clocks of a team's machines
# differ by seconds; a later time would win every conflict for as long as it stays ahead.
MAX_SKEW_MS = 5 * 60 * 1000
MAX_NAME = 200  # tool, source
MAX_PROJECT_LENGTH = 200  # as a tool call's project argument
MAX_TITLE = HELD_TITLE
MAX_RULE_TEXT = HELD_RULE
MAX_FACT_PART = HELD_FACT_PART
MAX_REASON = HELD_REASON
MAX_ITEMS = HELD_ITEMS
MAX_TEXT = HELD_TEXT
MAX_REQUEST = 20_000
# Names: no control or format characters (newlines, escapes, bidi overrides).
_BAD_TEXT = re.compile("[\x00\ud800-\udfff]")
Record = dict[str, Any]
_FACT_REFS = ("superseded_by", "memory")  # a fact's references to other items


class _Checker:
    """Checks (and redacts) one record's data in place; each problem names the field."""

    def __init__(self, where: str, data: dict[str, Any], latest: int, pulled: bool) -> None:
        self.where = where
        self.data = data
        self.latest = latest
        self.pulled = pulled

    def fail(self, message: str) -> InvalidInputError:
        return InvalidInputError(f"{self.where}: {message}")

    def name(self, field: str, limit: int = MAX_NAME, *, empty: bool = False) -> None:
        value = self.data[field]
        if value is None:
            return
        if (not empty and not value.strip()) or len(value) > limit:
            raise self.fail(f"{field} must be 1 to {limit} characters.")
        if UNPRINTED_NAME.search(value) or LONE_SURROGATE.search(value):
            raise self.fail(f"{field} must not contain control or format characters.")

    def text(self, field: str, limit: int, *, redact: bool = True) -> None:
        value = self.data[field]
        if value is None:
            return
        self.data[field] = self._text(field, value, limit, redact)

    def _text(self, field: str, value: str, limit: int, redact: bool) -> str:
        """``value`` as it is stored: redacted, then held to ``limit`` (a redaction may
        lengthen it: ``-pab1`` becomes ``-p[REDACTED]``)."""
        if _BAD_TEXT.search(value):
            raise self.fail(f"{field} must not contain NUL or lone surrogate characters.")
        return self.fit(field, value, limit, redact_secrets if redact else _kept)

    def fit(self, field: str, value: str, limit: int, store: Callable[[str], str]) -> str:
        """``store(value)`` if it is at most ``limit`` characters long. A longer one is refused
        on push; on pull it is cut to at most the limit, where storing it again changes nothing
        (a cut may leave the start of a secret, or of a redaction's mark): a hub from before
        this check measured values before redacting them and may hold one longer, which no
        store could otherwise pull past."""
        if len(value) > limit and not self.pulled:  # refused before a redaction's cost
            raise self.fail(f"{field} must be at most {limit} characters.")
        stored = store(value)
        if len(stored) <= limit:
            return stored
        if not self.pulled:
            raise self.fail(
                f"{field} must be at most {limit} characters once its secrets are redacted."
            )
        end = limit
        while end > 0:  # a cut through a redaction's mark may be redacted again: cut earlier
            cut = store(stored[:end])
            if len(cut) <= limit and store(cut) == cut:
                return cut
            end -= max(1, limit - end) if limit - end >= 64 else 1
        return store("")

    def items(self, field: str) -> None:
        """A work-state list's text: a JSON list, redacted as ``work_state_write`` stores it."""
        items = parse_items(self._text(field, self.data[field], MAX_TEXT, False))
        if items is None:
            raise self.fail(f"{field} of a list must be a JSON list without Infinity or NaN.")
        stored = redacted_json(items)
        if len(stored) > MAX_TEXT and not self.pulled:  # a list cut short is no list: kept
            raise self.fail(f"{field} must be at most {MAX_TEXT} characters once redacted.")
        self.data[field] = stored

    def texts(self, field: str, limit: int, count: int = MAX_ITEMS) -> None:
        values = self.data[field]
        if len(values) > count:
            raise self.fail(f"{field} must hold at most {count} items.")
        self.data[field] = [self._text(field, value, limit, True) for value in values]

    def reason(self) -> None:
        """A dismissal's reason: none on an item that is not dismissed (a restore clears it)."""
        self.text("dismiss_reason", MAX_REASON)
        if self.data["dismissed_at"] is None:
            self.data["dismiss_reason"] = None

    def uids(self, field: str, count: int = MAX_ITEMS) -> None:
        """A list of references to items by uid (a rule's evidence)."""
        values = self.data[field]
        if len(values) > count:
            raise self.fail(f"{field} must hold at most {count} items.")
        if not all(map(is_uid, values)):
            raise self.fail(f"{field} must hold global ids (32 lowercase hex digits).")

    def uid(self, field: str) -> None:
        """A reference to an item by its uid, or None."""
        value = self.data[field]
        if value is not None and not is_uid(value):
            raise self.fail(f"{field} must be a global id (32 lowercase hex digits).")

    def past(self, *fields: str) -> None:
        """Times of things that happened: from 1970 on, and not beyond now plus the skew."""
        for field in fields:
            self.when(field, self.data[field])

    def when(self, name: str, value: int | None) -> None:
        """A time of something that happened: from 1970 on, and not beyond now plus the skew."""
        if value is not None and value < 0:
            raise self.fail(f"{name} must not be before 1970 (a negative time).")
        if value is not None and value > self.latest:
            raise self.fail(f"{name} must not be in the future.")

    def choice(self, field: str, allowed: tuple[str, ...]) -> None:
        if self.data[field] not in allowed:
            raise self.fail(f"{field} must be one of {', '.join(allowed)}.")

    def project(self) -> None:
        """A project key, a secret in it redacted as a tool's, within the limit once redacted
        (``fit``)."""
        value = self.data["project"]  # as a tool takes it; a hub may hold it longer (``fit``)
        self.name("project", MAX_TEXT if self.pulled else MAX_PROJECT_LENGTH)
        if value != value.strip().lower():  # NFD is let in: a release before NFC keys sent it
            raise self.fail("project must be a project key (lower-case, trimmed).")
        if value == ALL_PROJECTS:  # as import and a tool's write refuse it
            raise self.fail('project must not be "*", which means every project.')
        self.data["project"] = self.fit("project", value, MAX_PROJECT_LENGTH, normalize_project)

    def caller(self, field: str) -> None:
        """A tool's or token's name: checked as a name, a secret in it redacted (and cut back
        to the name's limit: a redaction may lengthen it, and a longer name this store sent on
        would be refused by the next). What does not print is dropped first, as a caller's name
        is stored now: release 0.4.1 stored ``ALETHEIA_TOOL`` with its control characters, and
        such a store must still sync."""
        if isinstance(self.data[field], str):
            self.data[field] = printable_line(self.data[field], MAX_NAME) or ""
        self.name(field)
        if self.data[field] is not None:
            self.data[field] = redact_secrets(self.data[field])[:MAX_NAME]


def _kept(value: str) -> str:
    return value


def check_key(value: Any, fail: Callable[[str], InvalidInputError], problem: str) -> None:
    """A global id (or a store's id): 1 to 100 characters, no blanks around, no control
    characters, nothing a save would redact (an id is kept as sent, and every store it reaches
    keeps and passes it on: one holding a secret is refused); else ``fail(problem)`` is raised."""
    if not isinstance(value, str) or not 0 < len(value) <= 100 or UNPRINTED_NAME.search(value):
        raise fail(problem)
    if LONE_SURROGATE.search(value) or value != value.strip():
        raise fail(problem)
    if not MADE_ID.fullmatch(value) and redact_secrets(value) != value:
        raise fail(problem)


# Why a hub leaves a record out of every pull (``unsendable``): what an earlier release took.
SECRET_ID = "a global id in it holds what a save redacts"  # noqa: S105 - a reason
UNMADE_ID = "a global id in it is not one a store makes"
# Why a store drops a reference from a record it pushes (``dropped_reference``).
CITES_SECRET_ID = "it cites an item whose global id holds what a save redacts."  # noqa: S105
CITES_UNMADE_ID = "it cites an item whose global id is not one a store makes."


def _id_problem(value: Any, made: Callable[[Any], bool]) -> str | None:
    if isinstance(value, str) and not MADE_ID.fullmatch(value) and redact_secrets(value) != value:
        return SECRET_ID
    return None if made(value) else UNMADE_ID


def is_key(value: Any) -> bool:
    """Whether ``value`` passes ``check_key``."""
    try:
        check_key(value, InvalidInputError, "")
    except InvalidInputError:
        return False
    return True


def unsendable(record: Record) -> str | None:
    """Why no store would take a record for its global id or its version's origin, or None.
    A hub of an earlier release took such records on push; the hub leaves them out of its pull
    pages, where one would stop every pull at it (``sendable_references`` drops references to
    them)."""
    made = is_key if record["kind"] == "rule" else is_uid
    problems = {_id_problem(record["key"], made), _id_problem(record["v"][1], is_key)} - {None}
    return None if not problems else SECRET_ID if SECRET_ID in problems else UNMADE_ID


def sendable_references(record: Record) -> Record:
    """The record without its references to items no store would take (``unsendable``: the
    hub holds them back, so the reference could never be filled in); the same record if it
    has none."""
    kind, data = record["kind"], record["data"]
    if kind == "fact":
        kept = {field: data[field] for field in _FACT_REFS}
        kept = {k: v if v is None or is_uid(v) else None for k, v in kept.items()}
    elif kind == "rule":
        kept = {
            f: [v for v in data[f] if is_uid(v)] for f in ("evidence_memories", "evidence_facts")
        }
    else:
        return record
    if all(kept[field] == data[field] for field in kept):
        return record
    return {**record, "data": {**data, **kept}}


def dropped_reference(record: Record) -> str | None:
    """Why ``sendable_references`` drops a reference of the record (the item it names has an
    id no store takes), or None when it drops none: said of the item cited, as ``unsendable``
    says it of a record's own id."""
    data = record["data"]
    if record["kind"] == "fact":
        cited = [data[field] for field in _FACT_REFS if data[field] is not None]
    elif record["kind"] == "rule":
        cited = [*data["evidence_memories"], *data["evidence_facts"]]
    else:
        return None
    problems = {_id_problem(value, is_uid) for value in cited} - {None}
    if not problems:
        return None
    return CITES_SECRET_ID if SECRET_ID in problems else CITES_UNMADE_ID


def is_project_key(value: Any) -> bool:
    """Whether ``value`` is a project key as a token lists it: 1 to 200 characters, no control
    characters, already normalised (lower-case, trimmed) but for its Unicode form, which a
    release before NFC keys did not settle (``canonical`` makes it the key)."""
    if not isinstance(value, str) or not 0 < len(value) <= MAX_PROJECT_LENGTH:
        return False
    if UNPRINTED_NAME.search(value) or LONE_SURROGATE.search(value):
        return False
    return canonical(value) == normalize_project(value)


def _memory(check: _Checker) -> None:
    if check.data["kind"] != WORK_STATE_KIND:  # composed before it is checked, as a save
        check.data = composed_note(check.data)
    data = check.data
    check.project()
    check.choice("type", MEMORY_TYPES)
    check.choice("kind", MEMORY_KINDS)
    check.caller("tool")
    check.text("title", MAX_TITLE)
    if data["kind"] == WORK_STATE_KIND:
        data["title"] = check.fit("title", data["title"], MAX_TITLE, stored_list_title)
        check.items("text")
    else:
        check.text("text", MAX_TEXT)
        if is_blank_as_before(data["text"]):  # as a save refused it in the peer's release
            raise check.fail("text is required.")
    check.text("narrative", MAX_TEXT)
    check.texts("facts", MAX_FACT_PART)
    data["facts"] = stored_statements(data["facts"])
    check.texts("files", MAX_TITLE)
    data["files"] = stored_paths(data["files"])
    check.reason()
    check.text("dedupe_key", HELD_KEY, redact=False)
    if data["kind"] == WORK_STATE_KIND:
        _list(check)
        # "list:" and the name, redacted as work_state_write keys it (and the title holds it)
        data["dedupe_key"] = check.fit("dedupe_key", data["dedupe_key"], HELD_KEY, stored_list_key)
    else:
        # a blank title is the default title a save (and an import) gives a note
        data["title"] = stored_title(data["title"], data["text"])
        # a save's key is the hash of its title and text: a key naming other words would
        # answer the save of those words "Already saved" with this record's words, and none
        # (null) would let a save of the same words make it again
        data["dedupe_key"] = dedupe_key(data["title"], data["text"])
    check.past("created_at", "updated_at", "dismissed_at")
    # no save updates a memory before it was made: such a time (a hand-made record, an
    # import) is kept as its creation's
    data["updated_at"] = max(data["updated_at"], data["created_at"])


def _list(check: _Checker) -> None:
    """A work-state list's title and key (``list_fault``)."""
    fault = list_fault(check.data["title"], check.data["dedupe_key"])
    if fault is not None:
        raise check.fail(f"{fault[0]} of a list {fault[1]}.")


def _fact(check: _Checker, key: str) -> None:
    check.project()
    blank = blank_fact_part(
        check.data["subject"], check.data["predicate"], check.data["object"], is_blank_as_before
    )
    if blank is not None:  # as a save refuses it: no fact_history could name it
        raise check.fail(f"{blank} is required.")
    for field in ("subject", "predicate", "object"):
        check.text(field, MAX_FACT_PART)
    # as a save stores it: a literal under a secret-looking predicate is replaced whole
    check.data["object"] = redact_named_value(check.data["predicate"], check.data["object"])
    check.caller("source")
    check.reason()
    for field in _FACT_REFS:
        check.uid(field)
    check.past("recorded_at", "dismissed_at")
    for field in ("valid_from", "valid_to"):  # as a save reads them: years 1 to 9999
        value = check.data[field]
        if value is not None and not FIRST_MS <= value <= LAST_MS:
            raise check.fail(f"{field} must be an instant of the years 1 to 9999.")
    # as import refuses them (the receiver tiles the key's timeline again anyway)
    valid_to = check.data["valid_to"]
    if valid_to is not None and valid_to < check.data["valid_from"]:
        raise check.fail("valid_to must not be before valid_from.")
    if check.data["superseded_by"] == key:
        raise check.fail("superseded_by must not be the fact's own id.")


def _rule(check: _Checker, key: str) -> str:
    """Checks a rule; its key: the id of its text as stored, redacted. A release that redacts
    less (or a hand-made record) may send a secret this one finds, or (before ``add_rule``
    refused them) control characters in its scope name: the rule is kept under the id of its
    text as ``add_rule`` keeps it, so that one such rule stops no sync for good. So is one whose
    words or scope ``add_rule`` would have put in their one form (``_rule_as_added``)."""
    data = check.data
    check.choice("scope_tier", SCOPE_TIERS)
    check.caller("source")
    check.text("scope_name", MAX_RULE_TEXT, redact=False)
    check.uids("evidence_memories", 100)
    check.uids("evidence_facts", 100)
    check.past("added_at", "last_confirmed_at", "updated_at")
    parts = (data["then"], data["when"], data["scope_tier"], data["scope_name"])
    if key != rule_id(*parts):
        raise check.fail("a rule's key must be the id of its text and scope.")
    _rule_as_added(check)
    for field in ("then", "when"):
        check.text(field, MAX_RULE_TEXT)
    return rule_id(data["then"], data["when"], data["scope_tier"], data["scope_name"])


def _rule_as_added(check: _Checker) -> None:
    """A rule's words and scope as ``add_rule`` keeps them (``rule_words``,
    ``rule_scope_name``): a blank ``then``, a situation without a name and a project rule
    naming no project (or ``*``) refused as add_rule refuses them; a blank ``when`` is
    "always", a project its key, an everywhere rule's name none. The scope name is kept
    without what does not print (an earlier release let it in)."""
    data = check.data
    try:
        data["then"], data["when"] = rule_words(data["then"], data["when"], is_blank_as_before)
        data["scope_name"] = rule_scope_name(
            data["scope_tier"],
            stored_scope_name(data["scope_name"]),
            _scope_project,
            ("scope_tier", "scope_name"),
            stray_name_dropped=True,
        )
    except InvalidInputError as error:
        raise check.fail(error.message) from None


def _scope_project(name: str) -> str:
    """A project rule's project as a tool keys it (a sync record has no default project)."""
    return project_key(name, "scope_name")


def _episode(check: _Checker) -> None:
    check.project()
    check.caller("tool")
    check.text("summary", MAX_TEXT)
    check.reason()
    check.past("started_at", "ended_at", "dismissed_at")
    # no store ends an episode before it starts: such an end (a clock set back during the
    # session, a hand-made record) is kept as its start, as a memory's update before its making
    ended_at = check.data["ended_at"]
    if ended_at is not None and ended_at < check.data["started_at"]:
        check.data["ended_at"] = check.data["started_at"]
    requests = check.data["requests"]
    if len(requests) > 10 * MAX_ITEMS:
        raise check.fail("requests must hold at most 10000 items.")
    for at, _ in requests:
        check.when("a request", at)
    requests = [[at, check._text("requests", text, MAX_REQUEST, True)] for at, text in requests]
    # the newest that fit a record (``newest_requests``), as a merge keeps them: a record of
    # more would be more than a pull page may carry
    check.data["requests"] = [requests[n] for n in newest_requests(requests)]


def _within_record(check: _Checker) -> None:
    """No record larger than ``MAX_RECORD_BYTES`` of JSON: a pull page carries at most 4 MiB,
    and a hub holding a larger one could send it to no store."""
    if json_bytes(check.data) > MAX_RECORD_BYTES:
        raise check.fail(
            f"it is larger than the {MAX_RECORD_BYTES // 1024} KiB of JSON one synced item may"
            " hold (a sync page carries at most 4 MiB)."
        )


def validate_record(
    record: Record, position: int, now: int, skew_ms: int = MAX_SKEW_MS, *, pulled: bool = False
) -> Record:
    """A copy of a shape-checked record with its values checked and its secrets redacted.
    ``pulled``: a store checks what a hub sent, and cuts a text that redaction left over its
    limit instead of refusing it (``_Checker.fit``).

    Raises:
        InvalidInputError: naming the record's position and the field at fault.
    """
    where = f"record {position}"
    latest = now + skew_ms
    check = _Checker(where, dict(record["data"]), latest, pulled)
    check_key(record["key"], check.fail, "key must be a global id.")
    # named by its kind and global id too: the page's position alone does not tell the store's
    # user which item a hub refused (and every later push stops at it)
    check.where = f"{where} ({record['kind']} {record['key']})"
    if record["kind"] != "rule" and not is_uid(record["key"]):  # as every store makes one
        raise check.fail("key must be a global id (32 lowercase hex digits).")
    changed_at, origin = record["v"]
    if changed_at < 0:
        raise check.fail(
            "its version's time (the first item of v) is negative: it must be the time of"
            " the change, in milliseconds since 1970."
        )
    if changed_at > latest:
        raise check.fail(
            "its version is in the future: check this machine's clock (at most"
            f" {skew_ms // 1000} s ahead of the receiver's)."
        )
    check_key(origin, check.fail, "v must name the store that made the version.")
    kind, key = record["kind"], record["key"]
    if kind == "memory":
        _memory(check)
    elif kind == "fact":
        _fact(check, key)
    elif kind == "rule":
        key = _rule(check, key)
    else:
        _episode(check)
    _within_record(check)
    return {**record, "key": key, "data": check.data}


def validate_records(
    records: list[Record], now: int, skew_ms: int = MAX_SKEW_MS, *, pulled: bool = False
) -> list[Record]:
    """Every record of a page checked and redacted (see ``validate_record``)."""
    return [
        validate_record(record, n, now, skew_ms, pulled=pulled) for n, record in enumerate(records)
    ]
