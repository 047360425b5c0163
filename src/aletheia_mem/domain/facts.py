"""Facts that change over time: record, supersede, and look back."""

from __future__ import annotations

from aletheia_mem.domain.formatting import fact_is_current
from aletheia_mem.domain.limits import blank_fact_part, check_fact_parts, check_name_characters
from aletheia_mem.domain.redaction import redact_named_value, redact_secrets
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.base import Fact
from aletheia_mem.storage.contracts import Store
from aletheia_mem.storage.entries import NewFact


def record_fact(
    store: Store,
    *,
    project: str,
    subject: str,
    predicate: str,
    object: str,
    valid_from: int | None,
    source: str,
    now: int,
) -> tuple[Fact, bool]:
    """Write ``(project, subject, predicate) = object`` into the key's timeline at ``valid_from``.

    A different object than the fact valid then supersedes that fact from ``valid_from`` on, up
    to where it ended. Without ``valid_from`` it starts ``now``, or after the facts of its key
    written in that same millisecond (``NewFact.starts_when_written``). Returns the fact and
    whether it is new (the same object as the fact valid at its start changes nothing).
    """
    check_name_characters("project", project)
    blank = blank_fact_part(subject, predicate, object)
    if blank is not None:
        raise InvalidInputError(f"{blank} is required.")
    check_fact_parts(subject.strip(), predicate.strip(), object.strip())
    new = NewFact(
        project=project,
        subject=redact_secrets(subject.strip()),
        predicate=redact_secrets(predicate.strip()),
        object=redact_named_value(predicate, object.strip()),
        valid_from=now if valid_from is None else valid_from,
        recorded_at=now,
        source=source,
        starts_when_written=valid_from is None,
    )
    return store.add_fact(new)


def asked_subject(subject: str) -> str:
    """A subject a lookup names, as facts keep it (``record_fact``): trimmed, its secrets
    redacted. It finds the facts recorded with it, and an answer naming it echoes no secret."""
    return redact_secrets(subject.strip())


def asked_predicate(predicate: str | None) -> str | None:
    """A predicate a lookup names (None: any), as facts keep it: its secrets redacted."""
    return None if predicate is None else redact_secrets(predicate)


def fact_history(
    store: Store,
    *,
    subject: str,
    project: str | None,
    predicate: str | None,
    as_of: int | None,
    include_superseded: bool,
    now: int,
) -> list[Fact]:
    """Current facts by default; the whole history, or the facts valid at ``as_of``.

    Current means valid ``now``: a value written for a time still ahead is not current yet
    (the history shows it). ``as_of`` wins over ``include_superseded``. Newest validity first.
    """
    facts = store.facts_about(asked_subject(subject), project, asked_predicate(predicate))
    if as_of is None and include_superseded:
        return facts
    at = now if as_of is None else as_of
    return [fact for fact in facts if fact_is_current(fact, at)]
