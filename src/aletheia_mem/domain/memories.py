"""Saving, finding and hiding memories."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from aletheia_mem.blank import is_blank
from aletheia_mem.canonical import canonical, decomposed, fact_key
from aletheia_mem.clock import Clock
from aletheia_mem.domain.formatting import quoted
from aletheia_mem.domain.limits import (
    MAX_STATEMENT,
    MAX_TEXT,
    MAX_TITLE,
    blank_fact_part,
    check_fact_parts,
    check_fact_text,
    check_length,
    check_name_characters,
    check_paths,
)
from aletheia_mem.domain.redaction import redact_named_value, redact_secrets
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.base import Memory
from aletheia_mem.storage.entries import NewFact, NewMemory
from aletheia_mem.timefmt import parse_instant

if TYPE_CHECKING:  # protocols: typing only, off the start path
    from aletheia_mem.storage.contracts import Store

DEFAULT_TITLE_LENGTH = 100


@dataclass(frozen=True)
class FactInput:
    """A fact stated alongside a memory: ``(subject, predicate) = object`` from ``valid_from``."""

    subject: str
    predicate: str
    object: str
    valid_from: int | None = None


@dataclass(frozen=True, init=False)
class MemoryInput:
    """A memory as a caller asks to save it, before it is checked and redacted.

    Its ``__init__`` is written out: a frozen dataclass's own sets each field through
    ``object.__setattr__``, twice the instructions (a save builds one).
    """

    text: str
    project: str
    tool: str
    title: str | None = None
    type: str = "note"
    kind: str = "note"
    pinned: bool = False
    narrative: str | None = None
    facts: Sequence[FactInput | str] = ()
    files: Sequence[str] = ()

    def __init__(
        self,
        text: str,
        project: str,
        tool: str,
        title: str | None = None,
        type: str = "note",
        kind: str = "note",
        pinned: bool = False,
        narrative: str | None = None,
        facts: Sequence[FactInput | str] = (),
        files: Sequence[str] = (),
    ) -> None:
        fill = self.__dict__  # frozen: set past ``__setattr__``, as dataclasses do
        fill["text"] = text
        fill["project"] = project
        fill["tool"] = tool
        fill["title"] = title
        fill["type"] = type
        fill["kind"] = kind
        fill["pinned"] = pinned
        fill["narrative"] = narrative
        fill["facts"] = facts
        fill["files"] = files


def dedupe_key(title: str, text: str) -> str:
    """Same project, title and text means the same memory."""
    import hashlib  # OpenSSL: loaded by the first save, not by the start of a server

    return hashlib.sha256(f"{title}\x00{text}".encode()).hexdigest()


def default_title(text: str) -> str:
    """The first 100 characters of the text, on one line."""
    return " ".join(text.split())[:DEFAULT_TITLE_LENGTH] or "(untitled)"


def stored_title(title: str, text: str) -> str:
    """A note's title as a store keeps it, whoever wrote it (a save, an import, a synced
    peer): a blank one (``is_blank``: spaces, or a zero-width space) is the default title of its
    text (as stored, redacted)."""
    return default_title(text) if is_blank(title) else title


def composed_note(data: dict[str, Any]) -> dict[str, Any]:
    """A note's fields (an import's memory, a sync record's data) with its title and text in
    NFC (``canonical``), as a save keeps them: the same words however they were encoded are
    one memory (its dedupe key is theirs). Not for a list: its title is its name, which
    ``stored_list_title`` composes, and its text is its items as JSON."""
    return {
        **data,
        **{f: canonical(data[f]) for f in ("title", "text") if isinstance(data.get(f), str)},
    }


def stored_paths(paths: Sequence[str]) -> list[str]:
    """A memory's files as a store keeps them, whoever wrote them: each once, in their order,
    none blank (a save drops a blank path and one given twice)."""
    return list(dict.fromkeys(path for path in paths if path.strip()))


def stored_statements(statements: Sequence[str]) -> list[str]:
    """The facts a memory states as a store keeps them, whoever wrote them: none blank (a save
    refuses a blank one)."""
    return [statement for statement in statements if statement.strip()]


class Saved(NamedTuple):
    """What a save did: the memory, whether it is new, and whether a fact it stated changed
    the fact timeline (a memory saved before still records its facts)."""

    memory: Memory
    created: bool
    facts_changed: bool


def _key_given_before(
    store: Store, project: str, composed_key: str, typed: tuple[str, str], composed: tuple[str, str]
) -> str:
    """``composed_key``, or the dedupe key a release before notes were kept in NFC gave these
    words, when the store holds that note and none by ``composed_key``: first as typed (``e``
    and an accent), then fully decomposed (NFD), as that release kept them when they were
    typed so. Saving the same words again, in either spelling, finds the note saved then
    (``Already saved``), not a second one. ``typed`` and ``composed`` are (title, text)."""
    spellings = dict.fromkeys((typed, (decomposed(composed[0]), decomposed(composed[1]))))
    spellings.pop(composed, None)  # no composable character: nothing stored otherwise
    keys: dict[str, None] = {}
    for title, words in spellings:
        text = redact_secrets(words)
        keys[dedupe_key(stored_title(redact_secrets(title), text), text)] = None
    keys.pop(composed_key, None)
    for key in keys:  # a new note costs one look-up per other spelling, a found one one more
        if store.find_memory(project, key) is not None:  # a composed twin wins
            return key if store.find_memory(project, composed_key) is None else composed_key
    return composed_key


def save_memory(store: Store, clock: Clock, item: MemoryInput) -> tuple[Memory, bool]:
    """Compose (NFC) the title and text, redact secrets, then store the memory and its facts
    in one transaction.

    Returns the memory and whether it is new (False: the same one was saved before).
    """
    saved = save_memory_noting(store, clock, item)
    return saved.memory, saved.created


def save_memory_noting(store: Store, clock: Clock, item: MemoryInput) -> Saved:
    """``save_memory``, also telling whether the facts it stated changed the fact timeline."""
    check_name_characters("project", item.project)
    # one spelling: the same words however encoded (``e`` and an accent, or ``é``) are one
    # memory, composed before they are measured, redacted and keyed
    words = canonical(item.text)
    check_length("text", words, MAX_TEXT)
    typed_title = (item.title or "").strip()  # measured and kept trimmed, as a list's name
    given = canonical(typed_title)
    check_length("title", given, MAX_TITLE)
    check_paths(item.files)
    now = clock()
    text = redact_secrets(words)
    title = stored_title(redact_secrets(given), text)
    key = dedupe_key(title, text)
    if not (item.text.isascii() and typed_title.isascii()):  # ASCII has one spelling
        key = _key_given_before(store, item.project, key, (typed_title, item.text), (given, words))
    structured: list[FactInput] = []
    statements: list[str] = []
    if item.facts:  # most saves state none: no lists built over nothing
        structured = [fact for fact in item.facts if isinstance(fact, FactInput)]
        statements = [
            redact_secrets(fact if isinstance(fact, str) else _statement(fact))
            for fact in item.facts
        ]
    new = NewMemory(
        project=item.project,
        type=item.type,
        kind=item.kind,
        title=title,
        text=text,
        tool=item.tool,
        created_at=now,
        dedupe_key=key,
        narrative=redact_secrets(item.narrative) if item.narrative else None,
        facts=tuple(statements),
        files=tuple(stored_paths([redact_secrets(path) for path in item.files]))
        if item.files
        else (),
        pinned=item.pinned,
    )
    facts = [
        NewFact(
            project=item.project,
            subject=redact_secrets(fact.subject),
            predicate=redact_secrets(fact.predicate),
            object=redact_named_value(fact.predicate, fact.object),
            valid_from=now if fact.valid_from is None else fact.valid_from,
            recorded_at=now,
            source=item.tool,
            starts_when_written=fact.valid_from is None,
        )
        for fact in structured
    ]
    if len(facts) > 1:
        _check_one_value_each(item.facts, facts)
    return Saved(*store.add_memory_noting(new, facts))


def _check_one_value_each(given: Sequence[FactInput | str], facts: Sequence[NewFact]) -> None:
    """One value per subject and predicate at each instant: two at the same ``valid_from``
    would store the first valid from that instant to itself, a fact ``as_of`` never finds.
    Subjects and predicates compare as the store keys them (``fact_key``), objects as stored;
    the same value twice is one fact, and later ``valid_from`` values record a change.

    Raises:
        InvalidInputError: two entries give one subject and predicate two values at once,
            named by their places in ``given`` (the caller's ``facts``).
    """
    places = [place for place, fact in enumerate(given) if isinstance(fact, FactInput)]
    seen: dict[tuple[str, str, int], tuple[int, str]] = {}
    for place, fact in zip(places, facts, strict=True):
        key = (fact_key(fact.subject), fact_key(fact.predicate), fact.valid_from)
        first = seen.setdefault(key, (place, fact.object))
        if first[1] != fact.object:
            raise InvalidInputError(
                f"facts[{place}] gives subject {quoted(fact.subject)} and predicate"
                f" {quoted(fact.predicate)} another value than facts[{first[0]}] from the same"
                " time: one call states one value for each (a later valid_from records a"
                " change)."
            )


def not_applied_again(memory: Memory, item: MemoryInput) -> list[str]:
    """What a save answered "Already saved" asked for and did not get: the existing memory
    keeps its type, pin and files. A type counts only when it is not the default ``note``
    (an omitted type cannot be told from ``note``); an unpinned save asks for nothing."""
    kept: list[str] = []
    if item.type != "note" and item.type != memory.type:
        kept.append("type")
    if item.pinned and not memory.pinned:
        kept.append("pin")
    if {redact_secrets(path) for path in item.files} - set(memory.files):
        kept.append("files")
    return kept


def _statement(fact: FactInput) -> str:
    """The fact as a line of the memory, each part redacted alone as the facts table keeps it
    (joined first, a secret ending the subject would run into the predicate and survive)."""
    subject, predicate = redact_secrets(fact.subject), redact_secrets(fact.predicate)
    return f"{subject} {predicate} {redact_named_value(fact.predicate, fact.object)}"


def parse_fact_inputs(raw: Sequence[Any]) -> list[FactInput | str]:
    """Facts as callers send them: ``{subject, predicate, object, valid_from?}`` or plain text.

    Raises:
        InvalidInputError: an entry is neither, or a part is missing or too long.
    """
    facts: list[FactInput | str] = []
    for entry in raw:
        if isinstance(entry, str) and entry.strip():
            check_fact_text(entry)
            check_length("each fact", entry.strip(), MAX_STATEMENT)
            facts.append(entry.strip())
            continue
        if not isinstance(entry, dict):
            raise InvalidInputError("each fact must be an object {subject, predicate, object}.")
        parts = [entry.get(key) for key in ("subject", "predicate", "object")]
        if blank_fact_part(parts[0], parts[1], parts[2]) is not None:
            raise InvalidInputError("each fact needs subject, predicate and object as text.")
        check_fact_parts(*(str(part).strip() for part in parts))  # as they are stored
        valid_from = entry.get("valid_from")
        facts.append(
            FactInput(
                subject=str(parts[0]).strip(),
                predicate=str(parts[1]).strip(),
                object=str(parts[2]).strip(),
                valid_from=None if valid_from is None else parse_instant(valid_from, "valid_from"),
            )
        )
    return facts
