"""ALETHEIA_SEMANTIC=on with a PostgreSQL store: the server says on stderr, once, that search is
lexical only there (vectors live beside a SQLite store). It used to say nothing, so the same
setting silently ranked differently on the two stores (found by running the same calls on a
SQLite and a PostgreSQL stdio server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aletheia_mem.config import load_settings
from aletheia_mem.search.semantic import status
from aletheia_mem.server.wiring import close_app, open_app

NOTICE = "the store is a PostgreSQL database, which keeps no vectors"


def test_semantic_search_on_a_postgresql_store_says_it_is_lexical_once(
    pg_store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(status, "_told_store", False)
    monkeypatch.setenv("ALETHEIA_SEMANTIC", "on")  # read from the process, as the server does
    env = {"ALETHEIA_HUB_DB": pg_store_url, "ALETHEIA_DATA_DIR": str(tmp_path)}
    apps = [open_app(load_settings(env)), open_app(load_settings(env))]
    try:
        assert [app.semantic for app in apps] == [None, None]
    finally:
        for app in apps:
            close_app(app)
    err = capsys.readouterr().err
    assert err.count(NOTICE) == 1, err
    assert "search is lexical only" in err


def test_semantic_off_on_a_postgresql_store_says_nothing(
    pg_store_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr(status, "_told_store", False)
    monkeypatch.delenv("ALETHEIA_SEMANTIC", raising=False)
    env = {"ALETHEIA_HUB_DB": pg_store_url, "ALETHEIA_DATA_DIR": str(tmp_path)}
    app = open_app(load_settings(env))
    close_app(app)
    assert NOTICE not in capsys.readouterr().err
