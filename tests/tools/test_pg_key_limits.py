"""Long fact keys and file paths save alike on both stores.

A PostgreSQL btree index row holds at most 2704 bytes; SQLite's indexes take any length. A
fact's subject and predicate (up to 2,000 characters each) and a file path (up to 1,000
characters: 4,000 bytes of UTF-8) that do not compress once made a save fail on PostgreSQL with
the database's own error ("index row size ... exceeds btree version 4 maximum 2704") where SQLite
saved them. Migration 0014 indexes a digest or a hash of such keys; these tests run on both
stores and expect the same answers.
"""

from __future__ import annotations

import random

import pytest

from aletheia_mem.domain.limits import MAX_FACT_PART, MAX_PATH
from tests.conftest import REFERENCE_NOW
from tests.tools.helpers import DAY_MS, body_lines, db_rows, saved_id

# Text that does not compress: PostgreSQL compresses a long index row before it checks its size.
ASCII = "abcdefghijklmnopqrstuvwxyz0123456789"
CJK = "".join(chr(code) for code in range(0x4E00, 0x4E00 + 2000))  # 3 bytes each in UTF-8
ASTRAL = "".join(chr(code) for code in range(0x20000, 0x20000 + 2000))  # 4 bytes each


def noise(alphabet: str, length: int, seed: int) -> str:
    picker = random.Random(seed)
    return "".join(picker.choice(alphabet) for _ in range(length))


@pytest.mark.parametrize("alphabet", [ASCII, CJK, ASTRAL], ids=["ascii", "cjk", "astral"])
def test_a_fact_with_the_longest_subject_and_predicate_saves_and_supersedes(
    app, call, clock, alphabet
):
    subject = noise(alphabet, MAX_FACT_PART, 1)
    predicate = noise(alphabet, MAX_FACT_PART, 2)

    def state(value: str, text: str = "the long key now holds"):
        return call(
            "save_memory",
            text=f"{text} {value}",
            facts=[{"subject": subject, "predicate": predicate, "object": value}],
        )

    first = state("one")
    clock.advance(DAY_MS)
    second = state("two")
    again = state("two", "still")
    rows = db_rows(
        app, "SELECT id, object, valid_to, superseded_by, subject_key FROM facts ORDER BY id"
    )

    assert saved_id(first) == 1, first.text
    assert saved_id(second) == 2, second.text
    assert saved_id(again) == 3, again.text  # another text: the same fact, kept as it was
    assert [row[:4] for row in rows] == [
        (1, "one", REFERENCE_NOW + DAY_MS, 2),
        (2, "two", None, None),
    ]
    assert rows[0][4] == subject.lower()


def test_fact_history_finds_a_fact_with_a_long_predicate_by_its_subject(call, clock):
    subject = noise(CJK, 400, 5)  # the longest subject fact_history takes
    predicate = noise(CJK, MAX_FACT_PART, 6)
    for value in ("one", "two"):
        call(
            "save_memory",
            text=f"the long key now holds {value}",
            facts=[{"subject": subject, "predicate": predicate, "object": value}],
        )
        clock.advance(DAY_MS)

    current = body_lines(call("fact_history", subject=subject))
    history = body_lines(call("fact_history", subject=subject, include_superseded=True))

    assert len(current) == 2
    assert current[1].startswith("- fact #2 ")
    assert current[1].endswith("= two  (shop, since 2026-10-30)")
    assert len(history) == 3
    assert history[2].endswith("= one  (shop, 2026-10-29 to 2026-10-30, superseded by #2)")


@pytest.mark.parametrize("alphabet", [ASCII, CJK, ASTRAL], ids=["ascii", "cjk", "astral"])
def test_the_longest_file_path_saves_and_is_found_by_path_and_by_suffix(call, alphabet):
    path = "src/" + noise(alphabet, MAX_PATH - 7, 3) + ".py"
    # Alike in their last 600 characters (what the suffix index holds of a path, and more),
    # apart before them.
    other = "lib/" + noise(alphabet, MAX_PATH - 607, 4) + path[-603:]
    assert len(path) == len(other) == MAX_PATH

    saved = call("save_memory", text="a very long path", files=[path, path])
    saved_other = call("save_memory", text="another long path", files=[other])
    exact = call("search", file=path)
    long_suffix = call("search", file=path[-900:], file_suffix=True)
    shared_suffix = call("search", file=path[-603:], file_suffix=True)
    short_suffix = call("search", file=".py", file_suffix=True)
    missing = call("search", file="x" + path[-900:], file_suffix=True)

    assert saved_id(saved) == 1
    assert saved_id(saved_other) == 2
    assert body_lines(exact) == ["#1 2026-10-29 [note] a very long path  (shop, cli)"]
    assert body_lines(long_suffix) == ["#1 2026-10-29 [note] a very long path  (shop, cli)"]
    assert body_lines(shared_suffix) == [
        "#2 2026-10-29 [note] another long path  (shop, cli)",
        "#1 2026-10-29 [note] a very long path  (shop, cli)",
    ]
    assert len(body_lines(short_suffix)) == 2
    assert not missing.is_error
    assert missing.text.startswith("No matches.")
