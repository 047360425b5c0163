"""An id written in groups (a UUID) is found whole: an unknown one shares a group with a saved
one and still finds nothing, while a group typed alone finds the ids holding it. A hash is found
whatever character joins it to a word (``origin/``, ``sha:``, ``x=``), and a query's whole id
matched exactly ranks its memory above those matching only the query's words. Both stores."""

from __future__ import annotations

import pytest

from tests.search.test_ranking import _ids, _save

HASH = "3f9a8c1d2e4b5a6c7d8e9f00112233445566778"
TRACE = "6ba7b810-9dad-11d1-80b4-00c04fd430c8"
REQUEST = "550e8400-e29b-41d4-a716-446655440000"


@pytest.fixture
def saved(call) -> dict[str, int]:
    texts = {
        "crash": f"Fixed crash in commit {HASH} when cart empty",
        "revert": "Commit 9e0c4beef1d2 reverted the cache change",
        "trace": f"Trace {TRACE} shows the timeout",
        "request": f"Request id {REQUEST} failed with 502",
    }
    return {key: _save(call, text) for key, text in texts.items()}


@pytest.mark.parametrize(
    "query",
    [
        "f47ac10b-58cc-4372-a567-00c04fd430c8",  # shares only the last group with the trace
        "6ba7b811-9dad-11d1-80b4-00c04fd430c8",  # one character off the trace's
        "550e8400-0000-0000-0000-000000000000",  # shares only the first group with the request
        "6ba7b810-9dad-11d1-80b4-00c04fd430c9",  # the trace's first four groups
        "00000000-e29b-0000-0000-000000000000",
    ],
)
def test_an_unknown_uuid_gives_no_matches_though_it_shares_a_group(call, saved, query) -> None:
    assert call("search", query=query).text == (
        f'No matches. Nothing in project "shop" matches "{query}".'
    )


@pytest.mark.parametrize(
    ("query", "key"),
    [
        (TRACE, "trace"),
        (TRACE.upper(), "trace"),
        (REQUEST, "request"),
        ("00c04fd430c8", "trace"),  # a group typed alone: the ids holding it
        ("550e8400", "request"),
        ("6ba7b810-9dad", "trace"),  # the first groups of the id
    ],
)
def test_a_uuid_or_a_group_typed_alone_finds_its_memory(call, saved, query, key) -> None:
    assert _ids(call("search", query=query).text) == [saved[key]]


@pytest.mark.parametrize("joint", ["-", "=", "@", ":", "/", ".", "#", ","])
@pytest.mark.parametrize("hash_", [HASH, HASH[:7]])
def test_a_hash_is_found_whatever_joins_it_to_a_word(call, saved, joint, hash_) -> None:
    assert _ids(call("search", query=f"x{joint}{hash_}").text) == [saved["crash"]]


@pytest.mark.parametrize("query", [f"revert:{HASH[:7]}", f"origin/{HASH[:7]}", f"sha:{HASH}"])
def test_a_hash_after_a_word_finds_its_commit(call, saved, query) -> None:
    assert saved["crash"] in _ids(call("search", query=query).text)


@pytest.mark.parametrize(
    "query", [f"revert {HASH}", f"revert {HASH[:7]}", f"{HASH} reverted"]
)  # revert:<hash> counts as a whole: it finds the commit alone (test_ids_in_compounds)
def test_a_whole_hash_matched_outranks_a_memory_matching_only_a_word(call, saved, query) -> None:
    assert _ids(call("search", query=query).text) == [saved["crash"], saved["revert"]]


def test_a_hash_outranks_words_matched_in_a_title(call, saved) -> None:
    words = _save(call, "Reverted the checkout page changes", title="Checkout page revert")

    found = _ids(call("search", query=f"checkout page revert {HASH[:7]}").text)

    assert found[:2] == [saved["crash"], words]
