"""search in Chinese, Japanese and Korean: a word is found inside a longer run of CJK text,
which has no spaces between words (``search.cjk``); on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from tests.tools.test_search_user_audit import found_ids, save, save_background

POOL = "使用数据库连接池来提高性能"


@pytest.mark.parametrize("query", ["数据库", "连接池", "提高性能", "数据库连接池", "池来提"])
def test_a_chinese_word_is_found_inside_a_longer_run(call, query):
    save_background(call)
    target = save(call, POOL)
    save(call, "部署之前先跑测试。")

    assert found_ids(call("search", query=query)) == [target]


@pytest.mark.parametrize(
    ("query", "text"),
    [
        ("データベース", "本番のデータベースは毎晩バックアップする。"),
        ("接続プール", "アプリはデータベースの接続プールを使う。"),
        ("데이터베이스", "데이터베이스를 매일 밤 백업합니다."),
        ("백업", "데이터베이스를 매일 밤 백업합니다."),
    ],
)
def test_a_japanese_or_korean_word_is_found_inside_a_sentence(call, query, text):
    save_background(call)
    target = save(call, text)

    assert found_ids(call("search", query=query)) == [target]


def test_the_title_counts_too(call):
    target = save(call, "连接池的大小是二十。", title="数据库连接池配置")

    assert found_ids(call("search", query="连接池配置")) == [target]


def test_the_run_itself_outranks_its_bigrams_apart(call):
    # Both hold 数据 and 据库; only one holds 数据库.
    apart = save(call, "数据要备份。据库存报告。库存不足。")
    together = save(call, "数据库要备份。库存报告说库存不足。")

    assert found_ids(call("search", query="数据库")) == [together, apart]


def test_a_query_sentence_finds_the_memory_holding_its_words(call):
    save_background(call)
    target = save(call, POOL)
    save(call, "部署之前先跑测试。")

    assert found_ids(call("search", query="怎么配置连接池"))[:1] == [target]


def test_mixed_text_keeps_its_latin_words(call):
    save_background(call)
    spaced = save(call, "用 Redis 做缓存")
    joined = save(call, "用Redis做缓存。过期时间是一小时。")

    assert sorted(found_ids(call("search", query="Redis"))) == [spaced, joined]
    assert sorted(found_ids(call("search", query="缓存"))) == [spaced, joined]
    assert found_ids(call("search", query="过期时间")) == [joined]


def test_an_unrelated_cjk_query_finds_nothing(call):
    save_background(call)
    save(call, POOL)
    save(call, "本番のデータベースは毎晩バックアップする。")

    result = call("search", query="天气预报")
    assert result.text.startswith("No matches.")
    assert "天气预报" in result.text


def test_a_single_character_is_found_where_it_stands_alone(call):
    # One character is not indexed inside a run (see search/cjk.py): it finds the memory
    # where it is a word of its own.
    alone = save(call, "锁 is held by the deploy job.")
    save(call, POOL)

    assert found_ids(call("search", query="锁")) == [alone]
    assert call("search", query="池").text.startswith("No matches.")


def test_a_fact_in_chinese_is_found_by_a_word_of_it(call):
    save(
        call,
        "缓存换成了 Redis。",
        facts=[{"subject": "订单服务", "predicate": "缓存", "object": "分布式缓存集群"}],
    )

    for query in ("缓存集群", "订单"):
        facts = [line for line in call("search", query=query).text.splitlines() if "fact #" in line]
        assert len(facts) == 1 and "订单服务 · 缓存 = 分布式缓存集群" in facts[0]


def test_a_file_path_with_cjk_folders_is_found_by_a_word_of_it(call):
    target = save(call, "设计说明写好了。", files=["docs/系统设计文档.md"])
    save(call, "部署之前先跑测试。")

    assert found_ids(call("search", query="设计文档")) == [target]


def test_a_date_ordered_search_finds_words_inside_runs_too(call):
    first = save(call, POOL)
    save(call, "部署之前先跑测试。")
    second = save(call, "连接池太小导致请求超时。")

    assert found_ids(call("search", query="连接池", order="date_asc")) == [first, second]
    assert found_ids(call("search", query="连接池", order="date_desc")) == [second, first]
