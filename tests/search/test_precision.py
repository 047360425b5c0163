"""Search precision: an unknown id finds nothing, a unique id finds its memory first, and a memory
never comes back for a fragment (one or two characters, a digit run) of the query alone."""

from __future__ import annotations

import pytest

from aletheia_mem.search.query import query_terms
from tests.search.test_ranking import _ids, _save


@pytest.fixture
def saved(call) -> dict[str, int]:
    """A small store of memories full of ids, hashes and ticket numbers."""
    texts = {
        "control": "No-match control qx7k2m9",
        "commit": "Reverted commit 7f3ab9d because it broke the checkout page",
        "ticket": "SHOP-4821: the basket loses items after login",
        "error": "Error E1234 means the token expired; refresh it",
        "version": "Upgraded openssl to 3.0.2 on the build hosts",
        "camel": "parseHTTPRequest drops the body of a chunked request",
        "prose": "Add the retry budget to the payment client",
    }
    return {key: _save(call, text) for key, text in texts.items()}


@pytest.mark.parametrize(
    "query",
    [
        "absentqx7k2m9",
        "qx7k2m8",
        "9c1e4b2",
        "deadbeef42",
        "OPS-99341",
        "SHOP-4822",  # another ticket of a project that has one: not that one
        "SHOP4822",  # the same, its separator left out (docs/search.md: `abc12`)
        "basket4822",  # a word of a memory and a number: a name and a number, whole
        "payment_4822",
        "E1235",
        "k2m9",
        "zq9x",
        "4821x",
    ],
)
def test_an_unknown_id_gives_no_matches_with_its_reason(call, saved, query) -> None:
    result = call("search", query=query)

    assert not result.is_error
    assert result.text == f'No matches. Nothing in project "shop" matches "{query}".'


@pytest.mark.parametrize(
    ("query", "key"),
    [
        ("qx7k2m9", "control"),
        ("7f3ab9d", "commit"),
        ("SHOP-4821", "ticket"),
        ("SHOP4821", "ticket"),
        ("shop_4821", "ticket"),
        ("E1234", "error"),
        ("3.0.2", "version"),
        ("parseHTTPRequest", "camel"),
    ],
)
def test_a_unique_id_finds_its_memory_first(call, saved, query, key) -> None:
    assert _ids(call("search", query=query).text)[0] == saved[key]


def test_a_whole_token_match_outranks_memories_sharing_its_parts(call) -> None:
    parts = [_save(call, f"parse the request body, note {n}") for n in range(5)]
    whole = _save(call, "parseHTTPRequest is the entry point")

    found = _ids(call("search", query="parseHTTPRequest").text)

    assert found[0] == whole
    assert set(found[1:]) == set(parts)


def test_a_fragment_only_match_never_appears(call, saved) -> None:
    # "qx7k2m8" shares "qx", "7", "k", "2", "m" with the control memory, and 3add9f's letter
    # run "add" is in the prose memory: neither may bring a memory back on its own.
    for query in ("qx7k2m8", "3add9f01", "x7-k2-m9", "py 7 k2"):
        assert "No matches." in call("search", query=query).text, query


def test_a_short_or_numeric_query_word_still_matches_whole_words(call) -> None:
    memory = _save(call, "Port 8080 is taken by the v2 API")
    assert _ids(call("search", query="8080").text) == [memory]
    assert _ids(call("search", query="v2").text) == [memory]


def test_fragments_of_a_query_token_are_never_search_terms() -> None:
    assert query_terms("qx7k2m9") == ["qx7k2m9"]
    assert query_terms("PROJ-4821") == ["proj-4821", "proj4821"]  # the id, never "proj" alone
    assert query_terms("3add9f0e1") == ["3add9f0e1"]
    assert query_terms("oauth2Client") == ["oauth2client", "oauth", "client", "oauth2"]


def test_a_ticket_id_finds_its_ticket_not_others_of_its_name(call, saved) -> None:
    other = _save(call, "SHOP-5120: coupons apply twice in the shop's basket")
    assert _ids(call("search", query="SHOP-4821").text) == [saved["ticket"]]
    assert _ids(call("search", query="SHOP-5120").text) == [other]
    assert set(_ids(call("search", query="shop 4821").text)) == {saved["ticket"], other}


def test_timeline_never_anchors_on_a_fragment(call, saved) -> None:
    result = call("timeline", query="absentqx7k2m9")

    assert not result.is_error
    assert result.text == "Nothing to anchor on."
