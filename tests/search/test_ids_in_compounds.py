"""A made-up id joined to words by ``:``, ``/`` or ``.`` (``src/qx7k2m9/app.py``,
``revert:3f9a8c1``, ``user:9a8b7c``) is searched on its own, and the compound counts as a whole:
it never finds every memory naming one of its words, so an unknown id in it answers
``No matches.``. A name ending in a made-up id (``userId9a8b7c``) lifts the memory holding it
above those matching only the query's other words, as ``user-9a8b7c`` does. Both stores."""

from __future__ import annotations

import pytest

from aletheia_mem.search.query import first_tier, id_terms, query_terms
from tests.search.test_ranking import _ids, _save

HASH = "3f9a8c1d2e4b5a6c7d8e9f00112233445566778"


@pytest.fixture
def saved(call) -> dict[str, int]:
    texts = {
        "path": "Moved the loader to src/qx7k2m9/app.py last week",
        "build": "Build qx7k2m9 is cached on the runner",
        "app": "The app module: app config for the app in src",
        "crash": f"Fixed crash in commit {HASH} when cart empty",
        "revert": "We should revert the cart change before release",
        "session": "Session user 9a8b7c expired at noon",
        "users": "The user table is big",
        "camel": "Session userId9a8b7c expired at noon",
    }
    found = {key: _save(call, text) for key, text in texts.items()}
    found["failed"] = _save(call, "Login failed, then failed again", title="Login failed")
    return found


def _no_matches(query: str) -> str:
    return f'No matches. Nothing in project "shop" matches "{query}".'


def test_a_made_up_id_in_a_path_is_searched_on_its_own(call, saved) -> None:
    found = _ids(call("search", query="src/qx7k2m9/app.py").text)

    assert found == [saved["path"], saved["build"]]


@pytest.mark.parametrize(
    "query", ["src/zz8k3m1/app.py", "revert:3f9a8c2", "user:9a8b7d", "app.zz8k3m1", "src/zz8k3m1"]
)
def test_an_unknown_made_up_id_joined_to_words_gives_no_matches(call, saved, query) -> None:
    assert call("search", query=query).text == _no_matches(query)


@pytest.mark.parametrize(
    ("query", "keys"),
    [
        (f"revert:{HASH[:7]}", ["crash"]),
        (f"revert/{HASH}", ["crash"]),
        ("user:9a8b7c", ["session"]),
        ("qx7k2m9:app", ["build", "path"]),
    ],
)
def test_words_joined_to_a_made_up_id_find_no_memory_holding_only_a_word(
    call, saved, query, keys
) -> None:
    assert sorted(_ids(call("search", query=query).text)) == sorted(saved[k] for k in keys)


def test_a_memory_naming_a_path_with_a_made_up_id_ranks_first_for_that_id(call, saved) -> None:
    found = _ids(call("search", query="app config qx7k2m9").text)

    assert found[:2] == [saved["path"], saved["build"]]
    assert found[2] == saved["app"]


@pytest.mark.parametrize(
    "query", ["userId9a8b7c failed", "failed userId9a8b7c", "user-9a8b7c failed"]
)
def test_a_name_ending_in_a_made_up_id_outranks_words_matched_in_a_title(
    call, saved, query
) -> None:
    found = _ids(call("search", query=query).text)

    assert found[0] in (saved["camel"], saved["session"])
    assert saved["failed"] in found[1:]


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("revert:3f9a8c1", ["revert:3f9a8c1", "3f9a8c1"]),
        ("src/qx7k2m9/app.py", ["src/qx7k2m9/app.py", "qx7k2m9"]),
        ("user:9a8b7c", ["user:9a8b7c", "9a8b7c"]),
        ("src/2fa/app.py", ["src/2fa/app.py", "src", "app"]),  # a short made-up word: a word
        ("src/app/main.py", ["src/app/main.py", "src", "app", "main"]),
        ("x86_64/gcc12", ["x86_64/gcc12", "x8664", "gcc12"]),
    ],
)
def test_the_terms_of_a_compound_holding_a_made_up_id(query, terms) -> None:
    assert query_terms(query) == terms


@pytest.mark.parametrize(
    ("terms", "ids"),
    [
        (["userid9a8b7c", "failed"], [0]),
        (["user9a8b7c", "failed"], [0]),
        (["commit3f9a8c1", "failed"], [0]),
        (["sha256sum", "failed"], []),  # a name with a number: no made-up id in it
        (["gcc12", "oauth2client", "h264", "failed"], []),
    ],
)
def test_a_name_ending_in_a_made_up_id_is_an_id_term(terms, ids) -> None:
    assert id_terms(terms) == ids
    assert first_tier(terms) == ids
