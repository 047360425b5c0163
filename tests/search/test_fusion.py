"""Fusion keeps the lexical order when lexical search is sure, and lets similarity lead when not."""

from __future__ import annotations

from aletheia_mem.search.fusion import Fusion, fuse, lexical_is_confident, term_cover


def _order(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda memory_id: -scores[memory_id])


def test_lexical_order_stands_when_lexical_search_is_confident() -> None:
    similarity = {1: 0.3, 2: 0.4, 3: 0.5, 9: 0.8}
    assert _order(fuse([1, 2, 3], similarity, {}, confident=True))[:3] == [1, 2, 3]


def test_a_more_similar_memory_rises_above_unrelated_lexical_hits_when_unsure() -> None:
    similarity = {1: 0.1, 2: 0.12, 9: 0.6}
    assert _order(fuse([1, 2], similarity, {}, confident=False))[0] == 9


def test_lexical_rank_breaks_near_ties_of_similarity() -> None:
    similarity = {1: 0.50, 2: 0.51}
    assert _order(fuse([1, 2], similarity, {}, confident=False)) == [1, 2]


def test_a_memory_lexical_search_missed_needs_more_similarity_when_nothing_matched() -> None:
    fusion = Fusion(alone=0.3, alone_empty=0.45)
    assert _order(fuse([1], {1: 0.1, 9: 0.35}, {}, False, fusion)) == [9, 1]
    assert _order(fuse([], {9: 0.35}, {}, False, fusion)) == []
    assert _order(fuse([], {9: 0.5}, {}, False, fusion)) == [9]


def test_priors_weigh_the_similarity() -> None:
    scores = fuse([], {8: 0.6, 9: 0.6}, {8: 0.7, 9: 1.1}, confident=False)
    assert _order(scores) == [9, 8]


def test_term_cover_folds_plurals_and_identifier_parts() -> None:
    assert term_cover(["retries", "pool"], "max_retries for the pools") == 1.0
    assert term_cover(["parse", "request"], "parseHTTPRequest") == 1.0
    assert term_cover(["launch", "program"], "Run a command") == 0.0


def test_lexical_search_is_confident_when_its_top_hit_covers_the_query() -> None:
    assert lexical_is_confident([1, 2], {7: 0.9, 8: 0.8}, cover=1.0, fusion=Fusion())
    assert not lexical_is_confident([1, 2], {7: 0.9, 8: 0.8}, cover=0.2, fusion=Fusion())
    assert not lexical_is_confident([], {7: 0.9}, cover=1.0, fusion=Fusion())


def test_lexical_search_is_confident_when_the_semantic_top_hits_are_lexical_hits() -> None:
    similarity = {1: 0.9, 2: 0.8, 3: 0.7, 8: 0.6, 9: 0.5}
    assert lexical_is_confident([3, 2, 1], similarity, cover=0.0, fusion=Fusion(agreement=0.6))
    assert not lexical_is_confident([3], similarity, cover=0.0, fusion=Fusion(agreement=0.6))
