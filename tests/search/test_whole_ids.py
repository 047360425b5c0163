"""Ids, addresses and CJK words are matched whole: a ticket id finds itself first (and a longer
name holding it after), an e-mail address never finds memories that only share its domain, and a
CJK word never matches characters that punctuation keeps apart (docs/search.md)."""

from __future__ import annotations

import pytest

from aletheia_mem.search.query import query_terms
from tests.search.test_ranking import _ids, _save


def test_a_ticket_id_finds_itself_first_and_the_longer_names_holding_it_after(call) -> None:
    longer = _save(call, "Ticket ABC-12-34 changes the export format of invoices")
    branch = _save(call, "Branch feature/ABC-12-login holds the login timeout fix")
    exact = _save(call, "Ticket ABC-12 is about the login timeout")
    _save(call, "ABC-123 moved the login page")  # another ticket: its words are not ABC-12's

    found = _ids(call("search", query="ABC-12").text)
    assert found[0] == exact and set(found) == {exact, longer, branch}
    assert _ids(call("search", query="ABC-12-34").text) == [longer]


def test_a_ticket_id_is_found_however_its_separators_are_written(call) -> None:
    ids = [_save(call, f"Fixed {spelling} in the basket") for spelling in ("abc_12", "ABC12")]
    assert set(_ids(call("search", query="ABC-12").text)) == set(ids)


def test_a_version_or_a_folder_still_finds_what_it_starts(call) -> None:
    # A release of 1.2 is about 1.2; a file under src/a is about src/a: both count (as before).
    release = _save(call, "Released 1.2.3 with the fix")
    nested = _save(call, "Deleted src/a/b entirely")
    assert _ids(call("search", query="1.2").text) == [release]
    assert _ids(call("search", query="src/a").text) == [nested]


def test_an_address_finds_its_memory_not_others_of_its_domain(call) -> None:
    alice = _save(call, "Mail alice@example.com about the invoice")
    _save(call, "Contact bob@example.com for billing")
    _save(call, "The example config lives in docs; see example.com for com stuff")

    assert _ids(call("search", query="alice@example.com").text) == [alice]
    assert _ids(call("search", query="Alice@Example.COM invoice").text)[0] == alice


def test_an_unknown_address_gives_no_matches(call) -> None:
    _save(call, "Contact bob@example.com for billing; Alice knows the example setup")
    result = call("search", query="alice@example.com")
    assert result.text == 'No matches. Nothing in project "shop" matches "alice@example.com".'


@pytest.mark.parametrize(
    ("query", "terms"),
    [
        ("ABC-12", ["abc-12", "abc12"]),  # the phrase (in longer names too) and the joined id
        ("alice@example.com", ["alice@example.com"]),
        ("mail first.last+tag@mail.example.org", ["mail", "first.last+tag@mail.example.org"]),
        ("react@18.2.0", ["react", "18.2.0"]),  # a package at a version, not an address
        ("mailto:alice@example.com", ["mailto", "alice@example.com"]),  # no word takes its start
    ],
)
def test_ids_and_addresses_are_searched_whole(query: str, terms: list[str]) -> None:
    assert query_terms(query) == terms


def test_a_cjk_word_does_not_match_across_punctuation(call) -> None:
    word = _save(call, "这是使用数据库连接池的说明文档。请大家仔细阅读并遵守其中的规定")
    _save(call, "今天整理数据。据库存记录显示")  # 数据 ends a sentence, 据库 starts the next

    assert _ids(call("search", query="数据库").text)[0] == word


@pytest.mark.parametrize(
    "text",
    [
        "詳細はalice@example.comまでご連絡ください",  # Japanese writes no spaces around it
        "请联系alice@example.com确认发票",
    ],
)
def test_an_address_written_against_cjk_text_is_found(call, text: str) -> None:
    memory = _save(call, text)
    _save(call, "Contact bob@example.com for billing")

    assert _ids(call("search", query="alice@example.com").text) == [memory]
