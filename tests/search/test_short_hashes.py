"""A git short SHA (the 7 or more leading characters git prints) finds the memory that names the
full commit hash, on both stores; a prefix that starts no saved hash still finds nothing."""

from __future__ import annotations

import pytest

from aletheia_mem.search.query import hash_prefixes
from tests.search.test_ranking import _ids, _save

FULL_SHA = "3f9a8c1d2e4b5a6978cd0e1f2a3b4c5d6e7f8091"


@pytest.fixture
def saved(call) -> dict[str, int]:
    texts = {
        "full": f"Reverted commit {FULL_SHA} because it broke the checkout page",
        "other": "Reverted commit 9b07e2f4c1d3a5b6c7d8e9f0a1b2c3d4e5f60718 for the login bug",
        "prose": "The checkout page needs a retry on payment timeouts",
    }
    return {key: _save(call, text) for key, text in texts.items()}


@pytest.mark.parametrize("prefix", [FULL_SHA[:7], FULL_SHA[:10].upper(), FULL_SHA[:12]])
def test_a_short_sha_finds_the_memory_naming_the_full_sha(call, saved, prefix) -> None:
    assert _ids(call("search", query=prefix).text) == [saved["full"]]


def test_a_short_sha_in_a_sentence_ranks_its_commit_first(call, saved) -> None:
    assert _ids(call("search", query=f"why was {FULL_SHA[:7]} reverted").text)[0] == saved["full"]


def test_a_memory_naming_the_short_sha_is_found_with_the_full_one(call, saved) -> None:
    short = _save(call, f"Cherry-picked {FULL_SHA[:7]} onto the release branch")

    assert set(_ids(call("search", query=FULL_SHA[:7]).text)) == {saved["full"], short}


@pytest.mark.parametrize("prefix", ["3f9a8c2", "3f9a8c1d2e4c", "9b07e2f5"])
def test_a_short_sha_that_starts_no_saved_hash_gives_no_matches(call, saved, prefix) -> None:
    assert call("search", query=prefix).text == (
        f'No matches. Nothing in project "shop" matches "{prefix}".'
    )


def test_a_short_sha_finds_the_full_sha_with_filters_and_date_order(call, saved) -> None:
    found = call("search", query=FULL_SHA[:7], order="date_asc", since="2026-10-29")

    assert _ids(found.text) == [saved["full"]]


def test_a_short_sha_anchors_a_timeline_on_its_commit(call, saved) -> None:
    text = call("timeline", query=FULL_SHA[:8], before=0, after=0).text

    assert f"→ #{saved['full']} " in text


def test_six_hex_characters_are_too_short_to_stand_for_a_hash(call, saved) -> None:
    assert call("search", query=FULL_SHA[:6]).text.startswith("No matches.")


@pytest.mark.parametrize(
    ("terms", "prefixes"),
    [
        (["3f9a8c1", "revert"], ["3f9a8c1"]),
        (["1234567", "deadbeef", "3f9a8c", "3f9a8cg1"], []),  # digits, letters, short, not hex
    ],
)
def test_only_hex_words_of_seven_characters_with_digits_and_letters_are_hash_prefixes(
    terms, prefixes
) -> None:
    assert hash_prefixes(terms) == prefixes
