"""Fusion keeps the lexical order unless a memory is clearly more similar than the lexical hits."""

from __future__ import annotations

from aletheia_mem.search.fusion import Fusion, fuse


def _order(scores: dict[int, float]) -> list[int]:
    return sorted(scores, key=lambda memory_id: -scores[memory_id])


def test_lexical_order_is_kept_when_nothing_is_more_similar_than_the_lexical_hits() -> None:
    similarity = {1: 0.7, 2: 0.4, 3: 0.5, 9: 0.72}  # 9 is not clearly above 1 (margin 0.05)
    assert _order(fuse([1, 2, 3], similarity, {}))[:3] == [1, 2, 3]


def test_a_clearly_more_similar_memory_rises_above_unrelated_lexical_hits() -> None:
    similarity = {1: 0.1, 2: 0.12, 9: 0.6}
    assert _order(fuse([1, 2], similarity, {}))[0] == 9


def test_similarity_below_the_floor_never_counts() -> None:
    assert _order(fuse([], {9: 0.25}, {}, Fusion(floor=0.3))) == []
    assert _order(fuse([], {9: 0.45}, {}, Fusion(floor=0.3))) == [9]


def test_priors_weigh_only_the_semantic_gain() -> None:
    similarity = {1: 0.1, 8: 0.6, 9: 0.6}
    scores = fuse([1], similarity, {8: 0.7, 9: 1.1})
    assert _order(scores)[:2] == [9, 8]
    assert scores[1] == 1 / (2.0 + 1)
