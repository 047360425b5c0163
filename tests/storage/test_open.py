"""The composition root: which store a path or a URL opens, and URLs kept whole on the way."""

from __future__ import annotations

from pathlib import Path

from aletheia_mem.config import hub_db_path, hub_target
from aletheia_mem.storage.open import open_hub_store, open_store
from tests.storage.contract.rows import token

URL = "postgresql://hub@db.internal:5432/aletheia?sslmode=require"


def test_a_database_url_stays_a_string_and_a_path_is_expanded(tmp_path: Path) -> None:
    assert hub_target(f"  {URL} ") == URL
    assert hub_target("postgres://h/db") == "postgres://h/db"
    assert hub_target("~/hub.db") == Path("~/hub.db").expanduser()
    assert hub_db_path({"ALETHEIA_HUB_DB": URL}) == URL
    named = hub_db_path({"ALETHEIA_HUB_DB": str(tmp_path / "h.db")})
    assert named == tmp_path / "h.db"
    default = hub_db_path({"ALETHEIA_DATA_DIR": str(tmp_path)})
    assert default == tmp_path / "hub" / "hub.db"


def test_a_path_given_as_text_opens_the_same_sqlite_file(tmp_path: Path) -> None:
    path = tmp_path / "hub.db"
    hub = open_hub_store(path)
    try:
        assert hub.add_token(token("ci")) is not None
    finally:
        hub.close()
    again = open_hub_store(str(path))
    try:
        assert [t.name for t in again.list_tokens()] == ["ci"]
    finally:
        again.close()
    local = open_store(path, busy_timeout_ms=50)
    try:
        assert local.count_memories(None) == 0
    finally:
        local.close()
