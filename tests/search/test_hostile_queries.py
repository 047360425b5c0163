"""Any user text is a safe query: results or ``No matches.``, never an error."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HOSTILE = [
    '"',
    '""',
    "*",
    "NEAR(",
    "NEAR(a b",
    "-",
    "-payment",
    ":",
    "title:payment",
    "(",
    ")",
    "((payment",
    "payment))",
    "payment OR",
    "AND",
    "NOT payment",
    "pay*",
    "^payment",
    "{title text}: payment",
    "payment + - * / \\ ' ` ~",
    "payment\u200b\ufeff",
    "😀 payment 😀",
    "½ ² ⅞",
    "-- DROP TABLE memories;",
    "a" * 5000,
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_query_text_returns_results_or_no_matches(call, text: str) -> None:
    call("save_memory", text="The payment client retries three times (max_retries: 3).")
    result = call("search", query=text)
    assert not result.is_error, result.text
    assert result.text.startswith("No matches.") or "<aletheia-memory>" in result.text


def test_hostile_query_still_finds_the_words_it_contains(call) -> None:
    call("save_memory", text="The payment client retries three times.")
    assert "payment client" in call("search", query='NEAR("payment" -client*').text


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=st.text(st.characters(blacklist_characters="\x00"), min_size=1, max_size=60))
def test_any_text_is_a_safe_query(call, text: str) -> None:
    # NUL and lone surrogates (no store can encode them) are refused by argument validation
    # before search, each with its own message.
    result = call("search", query=text, project="*")
    refusals = ("query is required.", "query must not contain lone surrogate characters.")
    assert not result.is_error or result.text in refusals, result.text
    if any("\ud800" <= char <= "\udfff" for char in text):
        assert result.is_error
