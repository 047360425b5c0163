"""Tokenisation: identifiers and paths split into words and joined whole; stop words dropped."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.search.query import (
    MAX_QUERY_CHARS,
    MAX_TERMS,
    STOPWORDS,
    _compound_terms,
    fts_match_expression,
    is_prose,
    query_terms,
)
from aletheia_mem.search.text import COMPOUND, index_extras, index_text


def test_snake_case_query_gives_phrase_joined_form_and_parts() -> None:
    assert query_terms("max_retries") == ["max_retries", "maxretries", "max", "retries"]


def test_camel_case_query_gives_whole_word_and_parts() -> None:
    assert query_terms("parseHTTPRequest") == ["parsehttprequest", "parse", "http", "request"]


def test_kebab_case_and_screaming_snake_join_to_the_same_token() -> None:
    assert "maxretries" in query_terms("max-retries")
    assert "maxretries" in query_terms("MAX_RETRIES")
    assert "maxretries" in query_terms("maxRetries")


def test_path_query_keeps_the_whole_path_as_a_phrase() -> None:
    terms = query_terms("src/aletheia_mem/storage/sqlite_store.py")
    assert terms[0] == "src/aletheia_mem/storage/sqlite_store.py"
    assert {"sqlitestore", "sqlite", "store", "storage"} <= set(terms)
    assert "py" not in terms  # a two-letter part never matches on its own


def test_index_adds_joined_form_of_snake_names_and_parts_of_camel_names() -> None:
    assert index_extras("set max_retries in parseHTTPRequest") == [
        "maxretries",
        "parse",
        "HTTP",
        "Request",
    ]
    assert index_text("plain words only") == "plain words only"


def test_stop_words_are_dropped_unless_nothing_else_is_left() -> None:
    assert query_terms("how do I configure the retry limit") == ["configure", "retry", "limit"]
    assert query_terms("the who") == ["the", "who"]


def test_terms_are_capped() -> None:
    text = " ".join(f"word{n}" for n in range(100))
    assert len(query_terms(text)) == MAX_TERMS


def test_match_expression_quotes_every_term() -> None:
    assert fts_match_expression(['say "hi"', "near"]) == '"say ""hi""" OR "near"'
    assert fts_match_expression(["a", "b"], "AND") == '"a" AND "b"'


def _terms_by_compounds(text: str) -> list[str]:
    """The definition: every compound (Unicode pattern) through ``_compound_terms``."""
    seen: dict[str, None] = {}
    for match in COMPOUND.finditer(text):
        for term in _compound_terms(match.group()):
            seen.setdefault(term, None)
    content = [term for term in seen if term not in STOPWORDS]
    return (content or list(seen))[:MAX_TERMS]


@pytest.mark.parametrize(
    "text",
    ["Caddy", "caddy retries", "Élan naïve café", "why does the cache fail", "ǅemal", "ΣΊΣΥΦΟΣ"],
)
def test_plain_words_give_their_lower_case_as_the_definition_does(text: str) -> None:
    assert query_terms(text) == _terms_by_compounds(text)


@settings(max_examples=1000)
@given(st.text(alphabet=st.sampled_from("aAbBzZ09éÉß_-./:\\ \tǅΣς"), max_size=40))
def test_query_terms_are_the_definitions_on_any_text(text: str) -> None:
    assert query_terms(text) == _terms_by_compounds(text)


def test_a_query_is_read_to_its_first_ten_thousand_characters():
    start = "deploy checklist " * 1_000
    assert len(start) > MAX_QUERY_CHARS
    huge = start + "zebra " * 1_000_000
    assert query_terms(huge) == query_terms(start) == ["deploy", "checklist"]
    assert query_terms("a " * 2_000_000 + "zebra") == ["a"]  # only function words were read
    assert is_prose("word " * 2_000_000 + "v1.2")  # the identifier is past what is read


@pytest.mark.parametrize(
    "text", ["why does the API time out", "wipe out a folder over SSH", "CI: wipe out a folder"]
)
def test_a_sentence_with_an_acronym_is_prose(text: str) -> None:
    assert is_prose(text)


@pytest.mark.parametrize(
    "text", ["ENOSPC", "API SSH", "HTTP_PROXY", "OPS-99341", "parseHTTPRequest", "retry ETIMEDOUT"]
)
def test_a_code_alone_or_a_long_capital_run_is_not_prose(text: str) -> None:
    assert not is_prose(text)
