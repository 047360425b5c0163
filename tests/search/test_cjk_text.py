"""CJK text as the index and a query read it (search/cjk.py): bigrams of each run, in order."""

from __future__ import annotations

import pytest

from aletheia_mem.search.cjk import RUN_BREAK as B
from aletheia_mem.search.cjk import has_cjk, run_terms
from aletheia_mem.search.query import is_prose, query_terms
from aletheia_mem.search.text import index_extras, index_text


def test_a_run_is_indexed_with_its_bigrams_in_order() -> None:
    assert (
        index_text("使用数据库连接池")
        == f"使用数据库连接池\n{B} 使用 用数 数据 据库 库连 连接 接池"
    )


def test_the_bigrams_of_each_run_follow_a_break_no_query_matches() -> None:
    # 数据 ends a sentence and 据库 starts the next: no phrase 数据 据库 may span the full stop.
    assert index_text("整理数据。据库存").split("\n")[-1] == f"{B} 整理 理数 数据 {B} 据库 库存"
    assert B not in query_terms(f"数据{B}据库 {B}")


@pytest.mark.parametrize(
    ("text", "added"),
    [
        ("データベースを使う", f"{B} デー ータ タベ ベー ース スを を使 使う"),
        ("데이터베이스를 씁니다", f"{B} 데이 이터 터베 베이 이스 스를 {B} 씁니 니다"),
        ("用Redis做缓存", f"Redis {B} 做缓 缓存"),  # the Latin part of a mixed word too
        ("调用parseHTTPRequest函数", f"parseHTTPRequest parse HTTP Request {B} 调用 {B} 函数"),
    ],
)
def test_japanese_korean_and_mixed_words(text: str, added: str) -> None:
    assert index_text(text).split("\n")[-1] == added


def test_a_word_of_two_characters_is_its_own_bigram() -> None:
    assert index_text("数据 很 重要") == "数据 很 重要"


@pytest.mark.parametrize(
    "text",
    [
        "Use pnpm, not npm",
        "max_retries in src/app/main.py",
        "Die Straße fehlt",
        "Кэш в Redis",
        "naïve café ✓ 🚀",
        "fullwidth \uff21\uff22 and \u30fb and \u3002",
    ],
)
def test_text_without_cjk_is_indexed_as_before(text: str) -> None:
    assert not has_cjk(text)
    extras = index_extras(text)  # what index_text added before CJK bigrams, and still adds
    assert index_text(text) == (f"{text}\n{' '.join(extras)}" if extras else text)


def test_a_query_run_searches_its_bigram_phrase_and_each_bigram() -> None:
    assert query_terms("数据库") == ["数据 据库", "数据", "据库"]
    assert query_terms("数据") == ["数据"]
    assert query_terms("用 Redis 做缓存") == ["用", "redis", "做缓 缓存", "做缓", "缓存"]


def test_a_long_run_is_searched_by_its_bigrams_alone() -> None:
    terms = run_terms("如何使用数据库连接池来提高性能")
    assert terms[0] == "如何" and all(len(term) == 2 for term in terms)


def test_a_cjk_query_is_ranked_by_its_words_alone() -> None:
    # The embedding model is English: its similarities between CJK texts are noise.
    assert is_prose("how do we cache pages")
    assert not is_prose("数据库连接池")
    assert not is_prose("Redis 缓存")
