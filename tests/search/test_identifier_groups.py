"""A hash is found whatever character joins it to a word (``origin/``, ``sha:``, ``x=``). Both
stores."""

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


@pytest.mark.parametrize("joint", ["-", "=", "@", ":", "/", ".", "#", ","])
@pytest.mark.parametrize("hash_", [HASH, HASH[:7]])
def test_a_hash_is_found_whatever_joins_it_to_a_word(call, saved, joint, hash_) -> None:
    assert _ids(call("search", query=f"x{joint}{hash_}").text) == [saved["crash"]]


@pytest.mark.parametrize("query", [f"revert:{HASH[:7]}", f"origin/{HASH[:7]}", f"sha:{HASH}"])
def test_a_hash_after_a_word_finds_its_commit(call, saved, query) -> None:
    assert saved["crash"] in _ids(call("search", query=query).text)
