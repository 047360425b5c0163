"""The repositories a store knows: recorded resolved, read back only while they still are."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from aletheia_mem.domain.repositories import known_repositories, note_repository
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sqlite.repositories import MAX_REPOSITORIES, SEEN_AGAIN_MS

# The repositories a host worked in are a local store's record (SQLite only): SQLite alone.
pytestmark = pytest.mark.sqlite_only

HOUR = 3_600_000


def repo(folder: Path) -> Path:
    (folder / ".git").mkdir(parents=True)
    return folder


def known(store: SqliteStore) -> list[tuple[str, str]]:
    return [(str(found), r.project) for r, found in known_repositories(store.repositories())]


def test_a_folder_inside_a_work_tree_records_the_top_folder_resolved(
    store: SqliteStore, tmp_path: Path
) -> None:
    shop = repo(tmp_path / "code" / "Shop")
    (shop / "src" / "app").mkdir(parents=True)
    os.symlink(tmp_path / "code", tmp_path / "linked")
    assert note_repository(store.repositories(), tmp_path / "linked" / "Shop" / "src" / "app", 1)
    assert known(store) == [(str(shop.resolve()), "shop")]


def test_a_folder_outside_any_work_tree_records_nothing(store: SqliteStore, tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    assert note_repository(store.repositories(), tmp_path / "plain", 1) is None
    assert note_repository(store.repositories(), Path("/no/such\x00folder"), 1) is None
    assert known(store) == []


def test_a_repository_seen_again_within_the_hour_writes_nothing(
    store: SqliteStore, tmp_path: Path
) -> None:
    shop = str(repo(tmp_path / "shop").resolve())
    assert store.repositories().remember(shop, "shop", 0)
    assert not store.repositories().remember(shop, "shop", SEEN_AGAIN_MS - 1)
    assert store.repositories().remember(shop, "shop", SEEN_AGAIN_MS)
    assert [r.last_seen_at for r in store.repositories().recent(5)] == [SEEN_AGAIN_MS]


def test_the_most_recently_seen_come_first_and_the_oldest_are_forgotten(
    store: SqliteStore,
) -> None:
    for index in range(MAX_REPOSITORIES + 3):
        store.repositories().remember(f"/r/{index}", "p", index * HOUR)
    recent = store.repositories().recent(MAX_REPOSITORIES + 10)
    assert len(recent) == MAX_REPOSITORIES
    assert recent[0].path == f"/r/{MAX_REPOSITORIES + 2}"
    assert "/r/0" not in {r.path for r in recent}


def test_recorded_paths_that_are_not_repositories_now_are_never_offered(
    store: SqliteStore, tmp_path: Path
) -> None:
    good = repo(tmp_path / "good").resolve()
    gone = repo(tmp_path / "gone").resolve()
    (gone / ".git").rmdir()
    swapped = tmp_path / "swapped"
    os.symlink(tmp_path / "etc-like", swapped)  # recorded as a folder, now a link elsewhere
    repo(tmp_path / "etc-like")
    hostile = [
        str(gone),
        str(swapped),
        str(tmp_path / "good" / ".." / "good"),  # not resolved as recorded
        "relative/path",
        "",
        str(good) + "\x00/etc",
        str(tmp_path / "missing"),
        str(good / ".git"),  # a folder, but holds no .git
    ]
    for index, path in enumerate(hostile):
        store.repositories().remember(path, "evil", index)
    store.repositories().remember(str(good), "good", 100)
    assert known(store) == [(str(good), "good")]
