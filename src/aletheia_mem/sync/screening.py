"""One record a store or hub refuses holds back only itself, never the team's sync.

A pulled record this store refuses (``validate``; or one not shaped as a record) is held back:
it is not applied, and the pull cursor moves past it as past any other, so every later change
still arrives. It is not fetched again: a newer version of its item (an edit on any store, or
the record mended on the hub) comes in a later page and is checked afresh.

Before a push, this store checks its own records as the hub will: one the hub would refuse is
left out of the page (the rest go), and the push cursor moves past it too; a later change of
the item here is a newer version, checked again. A record whose only fault is a time ahead of
the clock is not held back on either side: it passes once the clock catches up (or is set
right), so the sync stops with the clock's message as before, rather than losing it for good.

A record of this store citing an item whose id no store takes (``validate.dropped_reference``)
goes without that reference, as the hub's pull sends such a record; the item is left out. An
item left out whose id cannot be shown (it holds a secret) is named by its ``#N`` here.

A work-state list whose key does not start with ``list:`` (an earlier build took one) has one
right form, its key as ``work_state_write`` makes it of its name: it is repaired, not held
back, on pull and on push.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from aletheia_mem.domain.worklists import rebuilt_list_key
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.sync.validate import validate_record

Record = dict[str, Any]
# Any time is "not in the future" with this skew: the check of everything else (a push is
# checked so: a version ahead of the hub's clock is the hub's to refuse, naming the clock).
ANY_TIME = 2**62
# "record 3 (memory <uid>): why", as validate names a record; "record 3: why" before its key.
_NAMED = re.compile(r"record \d+(?: \((?P<item>[^()]*)\))?: (?P<reason>.*)", re.DOTALL)


@dataclass
class Refusals:
    """Records left out of a sync, counted by reason, with the first item each reason named."""

    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, message: str, unnamed: Callable[[], str | None] = lambda: None) -> None:
        """Count a refusal (``record N (kind key): why``, as ``validate`` words it). One that
        names no item (its id could not be shown: it holds a secret) is named by ``unnamed``,
        asked only for the first of its reason."""
        named = _NAMED.fullmatch(message)
        reason = named["reason"] if named else message
        item = (named["item"] if named else None) or ""
        self.counts[reason] = self.counts.get(reason, 0) + 1
        if reason not in self.first:
            self.first[reason] = item or unnamed() or ""

    def as_json(self) -> list[dict[str, Any]]:
        """Each reason, how many records it held back, and the first of them (kind and id)."""
        return [
            {"reason": reason, "count": count, "first": self.first[reason] or None}
            for reason, count in self.counts.items()
        ]

    def summary(self) -> str:
        """The first reason with its item, and how many other reasons there were."""
        reason = next(iter(self.counts))
        item = self.first[reason]
        line = f"{item}: {reason}" if item else reason
        others = len(self.counts) - 1
        return line + (f" ({others} other reason(s): see --json.)" if others else "")


def repaired(record: Record) -> Record | None:
    """The record with what has one right form put right (a list's key rebuilt from its name,
    as ``work_state_write`` keys it); None when there is nothing to repair."""
    data = record.get("data")
    if record.get("kind") != "memory" or not isinstance(data, dict):
        return None
    rebuilt = rebuilt_list_key(data)
    return None if rebuilt is None else {**record, "data": {**data, "dedupe_key": rebuilt}}


@dataclass
class Screened:
    """A page's records that pass (as given or repaired, and as checked), the rest counted."""

    passed: list[tuple[Record, Record]] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)  # of those passed, in the page
    repaired: int = 0


def screen(
    records: list[tuple[int, Record]],
    now: int,
    skew_ms: int,
    refusals: Refusals,
    *,
    pulled: bool,
    number: Callable[[Record], str | None] = lambda record: None,
) -> Screened:
    """Each (position, record) checked by ``validate_record``: passed (repaired if that is
    what it lacks), or counted in ``refusals`` and left out. ``number``: how this store names
    an item whose id a refusal cannot show (``memory #12``), if it holds one.

    Raises:
        InvalidInputError: a record whose only fault is a time ahead of ``now`` plus the skew
            (the sync stops on it, as the clocks will agree later).
    """
    screened = Screened()
    for position, record in records:
        given = record
        mended = repaired(record)
        if mended is not None:
            try:
                checked = validate_record(mended, position, now, skew_ms, pulled=pulled)
            except InvalidInputError:
                pass  # refused as given, below, with the reason it was refused for
            else:
                screened.passed.append((mended, checked))
                screened.positions.append(position)
                screened.repaired += 1
                continue
        try:
            checked = validate_record(given, position, now, skew_ms, pulled=pulled)
        except InvalidInputError as error:
            try:
                validate_record(given, position, now, ANY_TIME, pulled=pulled)
            except InvalidInputError:
                refusals.add(error.message, partial(number, given))
                continue
            raise
        screened.passed.append((given, checked))
        screened.positions.append(position)
    return screened
