"""`aletheia-sync` on PostgreSQL: `--pool-size` (ALETHEIA_HUB_POOL_SIZE) and an unreachable server.

An operator running several processes on one database sizes max_connections as processes times
pool size; the flag must bound what one process really opens.
"""

from __future__ import annotations

import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest

from aletheia_mem.hub.main import main
from aletheia_mem.storage.open import open_hub_store
from aletheia_mem.storage.postgres.store import PostgresStore
from tests.hub.helpers import Hub, running_hub
from tests.pg import FIXTURE_APPLICATION

BURST = 24


def connections_to(database_url: str) -> int:
    """Backends on the database, this query's own and the test fixtures' left out."""
    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND application_name <> %s",
            (FIXTURE_APPLICATION,),
        ).fetchone()
    assert row is not None
    return int(row[0])


def burst_of_searches(hub: Hub) -> None:
    """``BURST`` sessions searching at once: a pool allowed to grow would open more."""
    token = hub.token("sync", ("shop",), "burst")
    sessions = [hub.initialize(token) for _ in range(BURST)]

    def search(session: str) -> bool:
        return hub.call_tool(token, session, "search", query="deploy", project="shop")[1]

    with ThreadPoolExecutor(BURST) as pool:
        assert not any(pool.map(search, sessions * 4))


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_hub_process_opens_no_more_connections_than_its_pool_size(
    pg_url: str, pg_database: str, tmp_path: Path, how: str
) -> None:
    extra = ("--pool-size", "2") if how == "flag" else ()
    env = {"ALETHEIA_HUB_POOL_SIZE": "2"} if how == "environment" else {}
    with running_hub(pg_url, *extra, "--rate-limit", "0", env=env) as hub:
        burst_of_searches(hub)
        assert 1 <= connections_to(pg_database) <= 2


@pytest.mark.e2e
def test_without_a_pool_size_a_busy_hub_process_opens_more_than_two(
    pg_url: str, pg_database: str, tmp_path: Path
) -> None:
    """The check above can fail: the same burst makes a default pool grow past two."""
    with running_hub(pg_url, "--rate-limit", "0") as hub:
        burst_of_searches(hub)
        assert connections_to(pg_database) > 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--pool-size", "3"], "--pool-size is for a postgresql:// hub, not a SQLite file."),
        (["--pool-size", "0"], "--pool-size must be from 1 to 200."),
        (
            ["--search-cache-mb", "64"],
            "--search-cache-mb is for a postgresql:// hub, not a SQLite file.",
        ),
        (["--search-cache-mb", "0"], "--search-cache-mb must be from 1 to 65536."),
    ],
)
def test_a_pool_size_for_a_file_or_out_of_range_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    target = "postgresql://nobody@127.0.0.1:1/none" if "0" in argv else str(tmp_path / "hub.db")
    with pytest.raises(SystemExit) as stopped:
        main(["--hub-db", target, *argv])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == f"aletheia-sync: {message}\n"


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("ALETHEIA_HUB_POOL_SIZE", "many", "a whole number from 1 to 200."),
        ("ALETHEIA_HUB_SEARCH_CACHE_MB", "-5", "a whole number from 1 to 65536."),
    ],
)
def test_a_bad_number_in_the_environment_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    value: str,
    message: str,
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        main(["--hub-db", "postgresql://nobody@127.0.0.1:1/none"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err == f"aletheia-sync: {name} must be {message}\n"


@pytest.mark.parametrize(("mb", "pairs"), [(None, 500_000), (3, 30_000), (2048, 20_480_000)])
def test_the_search_cache_holds_as_many_postings_as_its_megabytes_allow(
    pg_url: str, mb: int | None, pairs: int
) -> None:
    store = open_hub_store(pg_url, search_cache_mb=mb)
    try:
        assert isinstance(store, PostgresStore)
        assert store._postings.max_postings == pairs
    finally:
        store.close()


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["flag", "environment"])
def test_a_hub_process_given_a_search_cache_size_serves_searches(
    pg_url: str, tmp_path: Path, how: str
) -> None:
    extra = ("--search-cache-mb", "1") if how == "flag" else ()
    env = {"ALETHEIA_HUB_SEARCH_CACHE_MB": "1"} if how == "environment" else {}
    with running_hub(pg_url, *extra, "--rate-limit", "0", env=env) as hub:
        token = hub.token("sync", ("shop",), "cache")
        session = hub.initialize(token)
        for n in range(30):
            text = f"Deploy note {n}: the term{n} cache keeps its postings bounded."
            hub.call_tool(token, session, "save_memory", text=text, project="shop")
        for n in range(30):
            reply, failed = hub.call_tool(
                token, session, "search", query=f"term{n}", project="shop"
            )
            assert not failed and f"Deploy note {n}:" in reply, reply


def test_an_unreachable_database_stops_the_hub_in_one_line_without_the_password(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["--hub-db", "postgresql://hub:s3cret-pw@127.0.0.1:1/none", "--port", "0"])
    assert stopped.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("aletheia-sync: Cannot reach the PostgreSQL store at")
    assert "postgresql://hub@127.0.0.1:1/none" in err
    assert "s3cret-pw" not in err and "Traceback" not in err and err.count("\n") == 1


def test_a_postgres_url_without_the_postgres_extra_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aletheia_mem.storage.postgres.store", None)  # not installed
    with pytest.raises(SystemExit) as stopped:
        main(["--hub-db", "postgresql://hub@127.0.0.1:1/none", "--port", "0"])
    assert stopped.value.code == 1
    assert capsys.readouterr().err == (
        "aletheia-sync: A postgresql:// hub needs the postgres extra:"
        " pipx install 'aletheia-mem[postgres]' (or pip install 'aletheia-mem[postgres]').\n"
    )
