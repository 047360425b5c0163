"""A made-up id (a hash, a random id, a word joined to one) finds the memory that holds it, or
nothing: never a memory that merely shares a letter run of it (``aaeb`` of two hashes) or the
word it is joined to (``user`` of ``user-9a8b7c``)."""

from __future__ import annotations

import time

import pytest

from aletheia_mem.search.query import query_terms
from aletheia_mem.search.text import (
    holds_id_parts,
    holds_name_parts,
    index_extras,
    index_text,
    is_id_like,
)
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
    [HASH, "9a8b7c", "9e0c4beef1d2", "qx7k2m9", "abcdef1", "2fa", "3rd", "4o", "aB3xK9mQ2",
     "U04ABCD1234", "9f3k2x7n"],
)  # fmt: skip
def test_made_up_ids(word: str) -> None:
    assert is_id_like(word)


@pytest.mark.parametrize(
    "word",
    ["sha256", "utf8", "i18n", "k8s", "x86", "e2e", "gcc12", "SHOP4822", "deadbeef", "1234567",
     "parseHTTP2Request", "oauth2Client", "ipv4", "Python3", "retry", "Straße",
     # a word among the letters makes a name (an outside check of the release before):
     "30DayTrial", "3DSecure", "1Password", "5xxErrors", "Int32ToInt64Converter", "Matrix4x4",
     "H264Mp4Muxer", "99thPercentileLatency", "404NotFound", "face2face", "v1beta1",
     "v2alpha1Deployment", "userId9a8b7c"],
)  # fmt: skip
def test_names_with_digits_are_not_made_up_ids(word: str) -> None:
    assert not is_id_like(word)


def test_a_made_up_id_adds_no_index_token_and_no_query_term_but_itself() -> None:
    assert index_extras(f"see {HASH} and qx7k2m9") == []
    assert query_terms(HASH) == [HASH]
    assert query_terms("user-9a8b7c") == ["user-9a8b7c", "user9a8b7c"]
    assert query_terms("revert-3f9a8c1") == ["revert-3f9a8c1", "revert3f9a8c1", "3f9a8c1"]
    assert query_terms("userId9a8b7c") == ["userid9a8b7c"]  # a name ending in an id: whole
    assert query_terms("oauth2Client") == ["oauth2client", "oauth", "client", "oauth2"]  # parts


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        (f"commit {HASH}", True),
        ("see 9e0c4beef1d2", True),
        ("path/to/9e0c4beef1d2.txt", True),
        ("Straße 9e0c4beef1d2", True),  # past ASCII: read word by word
        ("userId9a8b7c signed in", False),  # a name ending in an id: "user" is indexed now
        ("path/to/9abcd.txt", False),  # a word after a digit: a name
        ("user-9a8b7c", False),  # its words were indexed as they are: nothing to redo
        ("sha256Sum of utf8 text, i18n for k8s", False),
        ("the retry budget", False),
        ("数据库 9x", False),
    ],
)
def test_what_an_older_store_indexed_as_id_parts(text: str, holds: bool) -> None:
    assert holds_id_parts(text) is holds


# Each a name with digits, the query that finds it by its words, and its title.
NAMES = [
    ("Accounts get a 30DayTrial by default", "30 day trial", "m1"),
    ("Card payments need 3DSecure v2", "3d secure", "m2"),
    ("We keep deploy secrets in 1Password", "password manager", "m3"),
    ("Alert when 5xxErrors exceed 1 percent", "5xx errors", "m4"),
    ("Use the Int32ToInt64Converter for ids", "converter", "m5"),
    ("Shaders take a Matrix4x4 uniform", "matrix", "m6"),
    ("The H264Mp4Muxer drops B-frames", "muxer", "m7"),
    ("Dashboards show 99thPercentileLatency", "latency percentile", "m8"),
    ("A stale cache gives 404NotFound pages", "not found", "m9"),
    ("Signing goes through the s3v4Signer", "signer", "m10"),
    # a name's part said with its number, or a capitalised word of three letters (a second
    # outside check, of the fix above)
    ("Use Base64Encoder for the payload", "base64", "m11"),
    ("The OAuth2Client refreshes tokens", "OAuth2", "m12"),
    ("We parse with Utf8JsonReader now", "utf8", "m13"),
    ("Buffers come from the Float32ArrayPool", "float32", "m14"),
    ("Partners start on a 14DayPilot", "pilot day", "m15"),
]


@pytest.mark.parametrize(("text", "query", "title"), NAMES)
def test_a_name_with_digits_is_found_by_its_words(call, text, query, title) -> None:
    """Found since 6bc2303, lost at 5d53bec (its words taken for a made-up id's letters)."""
    ids = {
        other_title: _save(call, other_text, title=other_title)
        for other_text, _, other_title in NAMES
    }
    found = call("search", query=query)
    assert _ids(found.text)[:1] == [ids[title]], found.text


@pytest.mark.parametrize(
    ("query", "kept", "not_found"),
    [
        ("3rd-party", "Vendored code lives in the 3rdParty folder", "3rd floor meeting room"),
        ("gpt-4o-mini", "Summaries use gpt-4o-mini now", "the 4o model costs more"),
    ],
)
def test_a_query_word_joined_to_a_short_id_is_not_searched_for_that_id_alone(
    call, query, kept, not_found
) -> None:
    wanted = _save(call, kept)
    _save(call, not_found)
    assert _ids(call("search", query=query).text) == [wanted]


@pytest.mark.parametrize(
    ("text", "holds"),
    [
        ("We keep deploy secrets in 1Password", True),
        ("Use the Int32ToInt64Converter", True),
        ("face2face calls", True),
        (f"commit {HASH}", False),  # a made-up id: nothing of it indexed then or now
        ("oauth2Client and sha256Sum", True),  # oauth2 and sha256: their names with a number
        ("gcc12 and k8s on utf8", False),  # nothing but themselves to index
        ("the retry budget", False),
    ],
)
def test_what_migration_0021s_release_left_out_of_the_index(text: str, holds: bool) -> None:
    assert holds_name_parts(text) is holds


def _cpu_seconds(text: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        index_text(text)
        query_terms(text)
        best = min(best, time.process_time() - started)
    return best


@pytest.mark.parametrize("unit", ["Part{}X", "TOKEN{}q8Zr2LmX9vT4pK7nW3s"])
def test_one_long_word_costs_time_in_proportion_to_its_length(unit: str) -> None:
    """A word of thousands of parts was read again for each part: 20,000 characters took 1.4 s
    to index (6.5 ms the release before). Four times the length may cost about four times the
    time, never sixteen."""
    short = "".join(unit.format(n) for n in range(300))
    long = "".join(unit.format(n) for n in range(1200))
    assert _cpu_seconds(long) < 8 * max(_cpu_seconds(short), 1e-4)
