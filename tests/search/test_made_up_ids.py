"""A made-up id (a hash, a random id, a word joined to one) finds the memory that holds it, or
nothing: never a memory that merely shares a letter run of it (``aaeb`` of two hashes) or the
word it is joined to (``user`` of ``user-9a8b7c``)."""

from __future__ import annotations

import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.search.text import holds_id_parts, index_extras, is_id_like
from tests.search.test_ranking import _ids, _save

HASH = "c1e21862ab8a18a8902073fec8df4f50947aaeb2"


@pytest.fixture
def saved(call) -> dict[str, int]:
    texts = {
        "hash": f"commit {HASH} fixes restore",
        "beef": "commit 9e0c4beef1d2 reverted the cache warmer",
        "user": "user table migration runs before the deploy",
        "req": "the req object is mutated by the auth middleware",
    }
    return {key: _save(call, text) for key, text in texts.items()}


@pytest.mark.parametrize(
    "query",
    [
        "1ecccc3fc1626e53a1306fa2b159aaeb92d3aace",  # shares only "aaeb" with HASH
        "aaeb",  # a letter run inside a hash, as a word of its own
        "beef",
        "fec8",
        "user-9a8b7c",  # a word joined to a made-up id: the id, never the word alone
        "userId9a8b7c",
        "user_id_9a8b7c",
        "req_9f3k2x7n",
    ],
)
def test_an_unknown_made_up_id_gives_no_matches(call, saved, query) -> None:
    result = call("search", query=query)

    assert not result.is_error
    assert result.text == f'No matches. Nothing in project "shop" matches "{query}".'


@pytest.mark.parametrize(
    ("query", "key"),
    [(HASH, "hash"), (HASH[:7], "hash"), ("9e0c4beef1d2", "beef"), ("user", "user")],
)
def test_a_made_up_id_or_a_word_still_finds_its_memory_first(call, saved, query, key) -> None:
    assert _ids(call("search", query=query).text)[0] == saved[key]


def test_a_word_joined_to_a_made_up_id_finds_the_memory_holding_that_id(call, saved) -> None:
    mine = _save(call, "user-9a8b7c lost their cart")
    assert _ids(call("search", query="user-9a8b7c").text) == [mine]


@pytest.mark.parametrize(
    "word",
    [HASH, "9a8b7c", "9e0c4beef1d2", "qx7k2m9", "v1beta1", "userId9a8b7c", "abcdef1", "2fa"],
)
def test_made_up_ids(word: str) -> None:
    assert is_id_like(word)


@pytest.mark.parametrize(
    "word",
    ["sha256", "utf8", "i18n", "k8s", "x86", "e2e", "gcc12", "SHOP4822", "deadbeef", "1234567",
     "parseHTTP2Request", "oauth2Client", "ipv4", "Python3", "retry", "Straße"],
)  # fmt: skip
def test_names_with_digits_are_not_made_up_ids(word: str) -> None:
    assert not is_id_like(word)


def test_a_made_up_id_adds_no_index_token_and_no_query_term_but_itself() -> None:
    assert index_extras(f"see {HASH} and userId9a8b7c") == []
    assert query_terms(HASH) == [HASH]
    assert query_terms("user-9a8b7c") == ["user-9a8b7c", "user9a8b7c", "9a8b7c"]
    assert query_terms("oauth2Client") == ["oauth2client", "oauth", "client"]  # a name: parts


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        (f"commit {HASH}", True),
        ("userId9a8b7c signed in", True),
        ("path/to/9abcd.txt", True),
        ("Straße 9abcd", True),  # past ASCII: read word by word
        ("user-9a8b7c", False),  # its words were indexed as they are: nothing to redo
        ("sha256Sum of utf8 text, i18n for k8s", False),
        ("the retry budget", False),
        ("数据库 9x", False),
    ],
)
def test_what_an_older_store_indexed_as_id_parts(text: str, holds: bool) -> None:
    assert holds_id_parts(text) is holds
