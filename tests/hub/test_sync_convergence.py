"""Three stores and a hub end the same, with the last edit of each item: found by random scenarios
(``sync_convergence``), kept as small cases, and a few random scenarios of a fixed budget.

The hub's store is a SQLite file, then a PostgreSQL schema (``hub_db``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.hub.helpers import running_hub
from tests.hub.sync_convergence import (
    STORES,
    Op,
    World,
    apply_op,
    check_converged,
    random_ops,
    run_scenario,
    sync_until_quiet,
)

pytestmark = pytest.mark.e2e
SEEDS = range(6)  # about 3 s each on a SQLite hub


def _play(hub_db: Path | str, folder: Path, ops: list[Op]) -> tuple[World, list[str]]:
    """``ops`` on three new stores, then every store synced until quiet; the problems found."""
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        world = World(hub, folder)
        for name in STORES:
            (folder / name).mkdir()
            world.open(name).close()
            world.tokens[name] = hub.token("sync", None, name)
        for op in ops:
            apply_op(world, op)
        sync_until_quiet(world)
        return world, check_converged(world)


def _rows(world: World, sql: str) -> set[tuple[object, ...]]:
    """The rows ``sql`` reads, the same on every store (asserted)."""
    found = []
    for name in STORES:
        conn = sqlite3.connect(world.path(name))
        try:
            found.append(set(conn.execute(sql).fetchall()))
        finally:
            conn.close()
    assert found[0] == found[1] == found[2]
    return found[0]


def test_a_later_list_write_wins_though_the_earlier_one_reached_the_hub_first(
    tmp_path: Path, hub_db: Path | str
) -> None:
    # The hub used to give the first push (authored by its token) a version of its own time,
    # which beat b's write made before that push but after a's.
    world, problems = _play(
        hub_db,
        tmp_path,
        [
            ("list", "a", "shop", "todo", ["start"]),
            ("sync", "a"),
            ("sync", "b"),
            ("list", "a", "shop", "todo", ["x"]),
            ("list", "b", "shop", "todo", ["y"]),
            ("sync", "a"),
            ("sync", "b"),
        ],
    )
    assert problems == []
    assert _rows(world, "SELECT text FROM memories WHERE kind = 'work_state'") == {('["y"]',)}


def test_a_list_renamed_onto_a_name_another_store_holds_merges_as_two_writes(
    tmp_path: Path, hub_db: Path | str
) -> None:
    # A rename that changed the row's key in place would, on b, collide with b's own "todo"
    # (one live list per name) and stop b's sync.
    world, problems = _play(
        hub_db,
        tmp_path,
        [
            ("list", "a", "shop", "later", ["old"]),
            ("list", "b", "shop", "todo", ["b's"]),
            ("rename", "a", "shop", "later", "todo", ["renamed"]),
            ("sync", "a"),
            ("sync", "b"),
            ("sync", "a"),
        ],
    )
    assert problems == []
    live = "SELECT title, text FROM memories WHERE kind = 'work_state' AND dismissed_at IS NULL"
    assert _rows(world, live) == {("todo list", '["renamed"]')}


def test_a_dismissal_made_before_a_duplicate_merges_is_kept(
    tmp_path: Path, hub_db: Path | str
) -> None:
    # The merge of the two saves used to get the merging store's time as its version, above
    # the dismissal a made before it: the memory came back everywhere.
    world, problems = _play(
        hub_db,
        tmp_path,
        [
            ("save", "a", "shop", "use uv", False),
            ("save", "b", "shop", "use uv", False),
            ("sync", "a"),
            ("dismiss", "a", "memory", 0.0, True),
            ("sync", "b"),
            ("sync", "a"),
        ],
    )
    assert problems == []
    assert _rows(world, "SELECT text, dismissed_at IS NOT NULL FROM memories") == {("use uv", 1)}


def test_a_fact_dismissed_elsewhere_stays_dismissed_when_a_later_value_closes_it(
    tmp_path: Path, hub_db: Path | str
) -> None:
    # a's new value closed its copy of the older fact, and the close was logged as an edit of
    # that fact: a's copy, not dismissed, replaced c's dismissal everywhere.
    world, problems = _play(
        hub_db,
        tmp_path,
        [
            ("fact", "c", "db", "redis", None),
            ("sync", "c"),
            ("dismiss", "c", "fact", 0.0, True),
            ("sync", "a"),
            ("fact", "a", "db", "postgres", None),
        ],
    )
    assert problems == []
    assert _rows(world, "SELECT object, dismissed_at IS NOT NULL, valid_to IS NULL FROM facts") == {
        ("redis", 1, 0),
        ("postgres", 0, 1),
    }


@pytest.mark.parametrize("seed", SEEDS)
def test_random_scenarios_converge_to_the_last_edits(
    tmp_path: Path, hub_db: Path | str, seed: int
) -> None:
    with running_hub(hub_db, "--rate-limit", "0") as hub:
        assert run_scenario(hub, tmp_path, random_ops(seed, 30)) == []
