"""Export and import: the whole store as JSON Lines, a lossless round trip.

The first line is a header (``{"type": "header", "format": "aletheia-export", ...}``, with the
next ids and how many records of each type follow); then one record per stored row,
``{"type": ..., "data": {column: value}}`` with type ``memory``, ``fact``, ``rule``,
``episode``, ``request``, ``episode_memory`` (a memory a session's hooks saved) or ``audit``.
A memory, fact, rule or episode also carries the time of its sync version, ``"changed_at"``
beside its data (an export of an earlier release has none and still imports: the latest time
the item's data holds stands in), which the import keeps, so that a hub holding a later version
keeps it. A fact or rule whose references still wait for an item a sync has not brought yet (a
sync stopped midway) carries them too, ``"waiting": [[field, uid], ...]`` beside its data (a
fact's ``memory``, a rule's ``evidence_memory`` or ``evidence_fact``): the import keeps them
waiting, so that the store's first sync sends the item as the hub has it, not without them (it
would win half the time, the links lost on every store), and fills them in when their items
come. An earlier release ignores both keys. Records keep ids, uids, timestamps, dismissals,
supersession chains, disabled rules, those times and references, so importing into an empty
store and exporting again gives the same text.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from aletheia_mem import __version__
from aletheia_mem.domain.echoes import echoed
from aletheia_mem.domain.import_check import (
    checked_changed_at,
    checked_record,
    checked_waiting,
    is_uid,
)
from aletheia_mem.domain.worklists import quoted_name, rebuilt_list_key
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.json_objects import RepeatedKeyError, once
from aletheia_mem.storage.id_cap import MAX_ID

# Export and import copy a local store's rows as SQLite stores them: SQLite only.
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite import transfer as sqlite_transfer
from aletheia_mem.storage.sqlite.transfer import ImportRow, holds_data

FORMAT = "aletheia-export"
FORMAT_VERSION = 1
RECORD_TYPES = {
    "memories": "memory",
    "facts": "fact",
    "rules": "rule",
    "episodes": "episode",
    "episode_requests": "request",
    "episode_memories": "episode_memory",
    "audit": "audit",
}
TABLES_BY_TYPE = {kind: table for table, kind in RECORD_TYPES.items()}
# A line's objects each give a key once, as ``/sync/`` takes a body's (a repeated "id" was
# taken at its last value).
_DECODER = json.JSONDecoder(object_pairs_hook=once)
# The deepest a line may nest lists and objects: a record nests four levels (the record, its
# waiting references, one of them), and Python's parser stops near its recursion limit (1,000,
# less the stack below it), which a line deeper than this is never read to.
MAX_DEPTH = 100
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")
# Columns stored as JSON text; exported as real lists, stored again exactly as written.
JSON_COLUMNS = frozenset({"facts", "files", "evidence_memory_ids", "evidence_fact_ids"})

# The longest line an import reads (in characters). A memory at every limit holds about 822,000
# characters (100 facts of 6,002, 100 files of 1,000, a list's 100,000, a narrative's 20,000);
# JSON escapes a control character as 6 (\u0001), so its line stays under 5 million. 8 million
# leaves room and still bounds what an endless line (/dev/zero) can take in memory.
MAX_LINE = 8_000_000
# What the import stream (opened with errors="surrogateescape") made of bytes that are not UTF-8.
_UNDECODABLE = re.compile("[\udc80-\udcff]")

Progress = Callable[[int], None]


def _line(record: dict[str, Any]) -> str:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def count_records(store: SqliteStore) -> int:
    """How many data records an export would write (for a progress bar)."""
    return sum(store.count_rows(table) for table in RECORD_TYPES)


def export_lines(store: SqliteStore) -> Iterator[str]:
    """The export, line by line, from one consistent snapshot of the store."""
    with store.snapshot():
        header = {
            "type": "header",
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "aletheia": __version__,
            "schema": store.schema_version(),
            "sequences": dict(sorted(store.data_sequences().items())),
            # How many records follow, by type: an import refuses a file that holds fewer
            # (one cut short at the end of a line would otherwise load as a smaller store).
            "records": {kind: store.count_rows(table) for table, kind in RECORD_TYPES.items()},
        }
        yield _line(header)
        for table, kind in RECORD_TYPES.items():
            for row, changed_at, waiting in store.export_versioned_rows(table):
                data = {
                    name: json.loads(value)
                    if name in JSON_COLUMNS and isinstance(value, str)
                    else value
                    for name, value in row.items()
                }
                record: dict[str, Any] = {"type": kind, "data": data}
                if changed_at is not None:
                    record["changed_at"] = changed_at
                kept = [[field, target] for field, target in waiting if is_uid(target)]
                if kept:  # a uid no store makes can never arrive: it is not carried
                    record["waiting"] = kept
                yield _line(record)


def write_export(store: SqliteStore, out: IO[str], progress: Progress | None = None) -> int:
    """Stream the export to ``out``; returns the number of data records."""
    count = -1
    for line in export_lines(store):
        out.write(line)
        count += 1
        if progress is not None and count:
            progress(1)
    return count


def read_lines(stream: IO[str]) -> Iterator[str]:
    """The lines of an export, read at most :data:`MAX_LINE` characters at a time.

    ``stream`` decodes with ``errors="surrogateescape"``, so that bytes that are not UTF-8 are
    refused here by line number, not wherever the decoder's chunk happened to end.

    Raises:
        InvalidInputError: a line is longer than ``MAX_LINE`` or is not UTF-8.
    """
    number = 0
    while line := stream.readline(MAX_LINE + 1):
        number += 1
        if len(line) > MAX_LINE and not line.endswith("\n"):
            raise InvalidInputError(f"Line {number} is longer than {MAX_LINE:,} characters.")
        if _UNDECODABLE.search(line):
            raise InvalidInputError(f"Line {number} is not UTF-8 text.")
        yield line


def _parse(line: str, number: int) -> dict[str, Any]:
    too_deep = f"Line {number} nests lists and objects deeper than {MAX_DEPTH} levels."
    if _nests_too_deep(line):
        raise InvalidInputError(too_deep)
    try:
        record = _DECODER.decode(line)
    except RepeatedKeyError as error:  # the last would win here, maybe the first elsewhere
        key = echoed(error.key)
        raise InvalidInputError(f'Line {number}: the key "{key}" is given twice.') from None
    except RecursionError:  # past the parser's depth: only below a deep stack, as too_deep
        raise InvalidInputError(too_deep) from None
    except ValueError:
        raise InvalidInputError(f"Line {number} is not JSON.") from None
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise InvalidInputError(f"Line {number} is not an export record (no type).")
    return record


def _nests_too_deep(line: str) -> bool:
    """Whether ``line`` opens lists and objects more than ``MAX_DEPTH`` deep, outside its
    strings. Only a line holding that many brackets is scanned."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", line)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_DEPTH:
            return True
    return False


def _read_header(lines: Iterator[tuple[int, str]]) -> dict[str, Any]:
    for number, line in lines:
        if line.strip():
            header = _parse(line, number)
            if header.get("type") != "header" or header.get("format") != FORMAT:
                raise InvalidInputError("This is not an Aletheia export (no header line).")
            _check_version(header.get("version"))
            return header
    raise InvalidInputError("The export is empty.")


def _check_version(version: Any) -> None:
    """Refuse a header whose format version is not this one's, the number (``"1"``, ``true``
    and ``1.0`` are not it), showing the value as the file gives it."""
    if type(version) is int and version == FORMAT_VERSION:
        return
    reads = f"this Aletheia reads version {FORMAT_VERSION}, a whole number"
    if version is None:
        raise InvalidInputError(f"The export's header has no format version ({reads}).")
    given = json.dumps(version, ensure_ascii=True)
    given = given if len(given) <= 40 else f"{given[:40]}..."
    raise InvalidInputError(f"Export format version {given} is not supported ({reads}).")


def _repaired_list_key(data: dict[str, Any], line: int) -> str | None:
    """A work-state list whose key does not start with ``list:`` (an earlier build took one
    from a sync) keyed as ``work_state_write`` keys it, of the name its title holds; the line
    that says so, or None when the record is no such list (a blank title is refused later)."""
    rebuilt = rebuilt_list_key(data)
    if rebuilt is None:
        return None
    data["dedupe_key"] = rebuilt
    return (
        f"Line {line}: a list's dedupe key did not start with list: (an earlier build took"
        f" it); imported as {quoted_name(rebuilt)}, the key work_state_write gives its name."
    )


def _records(
    lines: Iterator[tuple[int, str]],
    progress: Progress | None,
    expected: int | None,
    now: int,
    repairs: list[str],
) -> Iterator[ImportRow]:
    """The records after the header, checked, one at a time (nothing is kept from one to the
    next, so that a file of any size is read in the memory of its longest line); then, if the
    header counts them (``expected``), that none is missing. A list keyed as no list is keyed
    again, said in ``repairs``."""
    held = 0
    for number, line in lines:
        if progress is not None:
            progress(len(line.encode("utf-8")))
        if not line.strip():
            continue
        parsed = _parse(line, number)
        kind = parsed["type"]
        table = TABLES_BY_TYPE.get(kind)
        if table is None:
            raise InvalidInputError(f'Line {number} has an unknown type "{kind}".')
        data = parsed.get("data")
        if not isinstance(data, dict):
            raise InvalidInputError(f"Line {number} has no data object.")
        if kind == "memory" and (repair := _repaired_list_key(data, number)) is not None:
            repairs.append(repair)
        record = checked_record(kind, data, number, now=now)
        changed_at = checked_changed_at(kind, parsed.get("changed_at"), number, now=now)
        waiting = checked_waiting(kind, parsed.get("waiting"), record, number)
        for name in JSON_COLUMNS & record.keys():
            if isinstance(record[name], list):
                record[name] = json.dumps(record[name], ensure_ascii=False)
        held += 1
        yield table, record, number, changed_at, waiting
    if expected is not None and held < expected:
        raise InvalidInputError(
            f"The export holds {held:,} of the {expected:,} records its header counts:"
            " it was cut short."
        )


def _expected_records(header: dict[str, Any]) -> int | None:
    """How many records the header says follow (None from an export made before it said)."""
    raw = header.get("records")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not all(
        kind in TABLES_BY_TYPE
        and isinstance(value, int)
        and not isinstance(value, bool)
        and 0 <= value <= MAX_ID
        for kind, value in raw.items()
    ):
        raise InvalidInputError(
            'The header\'s "records" must map record types to whole numbers from 0.'
        )
    return sum(raw.values())


def _sequences(header: dict[str, Any]) -> dict[str, int]:
    """The header's next ids per table, checked like any field."""
    raw = header.get("sequences") or {}
    if not isinstance(raw, dict) or not all(
        name in RECORD_TYPES and isinstance(value, int) and not isinstance(value, bool)
        for name, value in raw.items()
    ):
        raise InvalidInputError('The header\'s "sequences" must map table names to whole numbers.')
    if not all(0 <= value <= MAX_ID for value in raw.values()):
        raise InvalidInputError(f'The header\'s "sequences" must be from 0 to {MAX_ID}.')
    return dict(raw)


def _spooled(spool: IO[str]) -> Iterator[ImportRow]:
    """The checked records ``_spool`` wrote, as ``_records`` yielded them."""
    spool.seek(0)
    for line in spool:
        table, record, number, changed_at, waiting = json.loads(line)
        yield table, record, number, changed_at, [(field, target) for field, target in waiting]


def _spool(records: Iterable[ImportRow], spool: IO[str]) -> None:
    """Write checked records to ``spool``, one JSON line each (ASCII: a value's every
    character comes back as it was)."""
    for table, record, number, changed_at, waiting in records:
        spool.write(json.dumps([table, record, number, changed_at, waiting]) + "\n")


def import_lines(
    store: SqliteStore,
    lines: Iterable[str],
    progress: Progress | None = None,
    *,
    now: int,
    repairs: list[str] | None = None,
) -> int:
    """Load an export into an empty store, exactly as it was; returns the records loaded. A
    work-state list whose key does not start with ``list:`` is keyed as ``work_state_write``
    keys its name, a line for each such record added to ``repairs``.

    The whole input is read and every record checked as strictly as a tool call (its text
    redacted) first, into a temporary file beside the store; only then are the records
    inserted, in one transaction (``SqliteTransfer.import_rows``), so the store's write lock is
    not held while a slow file or pipe is read and checked. A bad record stops the import and
    nothing is kept. The import holds one line at a time, whatever the file's size. ``now``
    (epoch ms, this machine's clock) bounds the times of past events.

    Raises:
        ConflictError: the store already holds data.
        InvalidInputError: the input is not an export this version reads, or a record is bad
            (the message names its line and field).
    """
    if not store.is_empty():
        raise holds_data(store.path)
    numbered = enumerate(lines, start=1)
    try:
        with tempfile.TemporaryFile(
            "w+", encoding="utf-8", dir=store.path.parent, prefix=".import-checked-"
        ) as spool:
            header = _read_header(numbered)
            sequences, expected = _sequences(header), _expected_records(header)
            said = [] if repairs is None else repairs
            _spool(_records(numbered, progress, expected, now, said), spool)
            return store.import_rows(_spooled(spool), sequences)
    except InvalidInputError as error:
        raise InvalidInputError(f"{error.message} Nothing was imported.") from None
    except (KeyError, TypeError, ValueError) as error:
        raise InvalidInputError(
            f"A record does not fit with the others: {error}. Nothing was imported."
        ) from None


def remove_unused_store(path: Path) -> bool:
    """Remove a store a failed import made, unless another process opened or saved to it
    (``storage.sqlite.transfer.remove_unused_store``); returns whether it did."""
    return sqlite_transfer.remove_unused_store(path)
