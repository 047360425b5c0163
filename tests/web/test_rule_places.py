"""Write to tools offers the server's own folder only when it is one: an ``ALETHEIA_CWD`` that
names no folder (or one removed since the server started) is not offered, so writing the rules
never makes it."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.clock import system_clock
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web.rules import plan_places, write_files


def test_a_server_folder_that_does_not_exist_is_not_offered_nor_made(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "aletheia.db")
    app = AppContext(store=store, clock=system_clock, default_project="shop", caller="web")
    folder, home = tmp_path / "shop", tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    try:
        offered = plan_places(app, folder, home)
        assert [place.level for place in offered] == ["repository", "user"]
        keys = {plan.key for plan in offered[0].files}
        assert keys
        folder.rmdir()
        assert [place.level for place in plan_places(app, folder, home)] == ["user"]
        assert write_files(app, folder, home, keys) == []
        assert not folder.exists()
    finally:
        store.close()
