"""A hub's store named by a libpq key=value connection string (``host=db dbname=hub
password=...``), as psycopg reads one: a PostgreSQL database, never a SQLite file of that name,
and its password shown nowhere (docs/scale.md: the database is always shown without it).

Before, such a string was taken for a file path: ``mcp-link create`` made a SQLite file named
``host=127.0.0.1 password=Fourth88 dbname=x`` in the current folder, and every error about it
printed the password. A URL or string psycopg cannot read gave a traceback that quoted it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from tests.hub.helpers import WAIT_SECONDS, running_hub, store_of

pytestmark = pytest.mark.e2e

PASSWORD = "Fourth88"  # trust auth on the test server: accepted and not checked


def _conninfo(url: str, **changes: str) -> str:
    """``url`` as a key=value string, with the password (and ``changes``) added."""
    params = psycopg.conninfo.conninfo_to_dict(url)
    params = {"host": params.pop("host"), **params, "password": PASSWORD, **changes}
    return psycopg.conninfo.make_conninfo("", **params)


def _aletheia(folder: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    """The real CLI in ``folder``: its exit code and what it printed (stdout and stderr)."""
    home = {"HOME": str(folder), "ALETHEIA_DATA_DIR": str(folder / "data"), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        env={**os.environ, "ALETHEIA_HUB_DB": "", **home, **(env or {})},
    )
    return done.returncode, done.stdout + done.stderr


def test_a_key_value_connection_string_is_a_postgresql_hub(pg_url: str, tmp_path: Path) -> None:
    target = _conninfo(pg_url)
    code, out = _aletheia(tmp_path, "mcp-link", "list", "--hub-db", target)
    assert code == 7 and PASSWORD not in out, out  # no hub there yet: said without the password
    assert "No hub store at postgresql://" in out
    code, out = _aletheia(
        tmp_path, "mcp-link", "create", "--hub-db", target, "--projects", "a", "--name", "ann"
    )
    assert code == 0 and PASSWORD not in out, out
    code, out = _aletheia(tmp_path, "mcp-link", "list", "--hub-db", target, "--json")
    assert code == 0 and [token["name"] for token in json.loads(out)] == ["ann"]
    code, out = _aletheia(tmp_path, "doctor", "--hub-db", target)
    assert code == 0 and "postgresql://" in out and PASSWORD not in out, out
    # a tool's entry on another store: doctor names both stores, the CLI's without password
    assert _aletheia(tmp_path, "install", "cursor", "--write")[0] == 0
    code, out = _aletheia(tmp_path, "doctor", env={"ALETHEIA_HUB_DB": target})
    assert "not the CLI's (postgresql://" in out and PASSWORD not in out, out
    code, out = _aletheia(tmp_path, "doctor", "--json", env={"ALETHEIA_HUB_DB": target})
    assert PASSWORD not in out, out
    assert not [path for path in tmp_path.iterdir() if "=" in path.name]  # no file named by it
    with running_hub(target, "--rate-limit", "0") as hub:
        token = hub.token("sync", ("shop",), "after-start")
        assert hub.post("/sync/hello", {"store_id": store_of(token)}, token).status == 200
    assert PASSWORD not in "".join(hub.log.queue)


@pytest.mark.parametrize(
    "target",
    [
        f"host=127.0.0.1 password={PASSWORD} dbname=no_such_database_here",
        f"host=127.0.0.1 password='{PASSWORD} dbname=x",  # its quote never closed
        f"host=127.0.0.1 password={PASSWORD} bogus=1",
        f"host=127.0.0.1 password=Four th88 dbname=x",  # noqa: F541  (read as "th88" with no =)
        f"postgresql://ann:{PASSWORD}@127.0.0.1:5432/x?bogus=1",
        f"postgresql://ann:{PASSWORD}@[::1/x",
    ],
)
@pytest.mark.parametrize(
    "command", [("mcp-link", "list"), ("doctor",), ("mcp-link", "create", "--projects", "shop")]
)
def test_a_connection_string_that_fails_is_told_without_its_password(
    tmp_path: Path, target: str, command: tuple[str, ...]
) -> None:
    code, out = _aletheia(tmp_path, *command, "--hub-db", target)
    assert code in (1, 2, 7), out
    assert "Traceback" not in out and PASSWORD not in out and "th88" not in out, out
    assert len(out.strip().splitlines()) == 1, out
    assert [path.name for path in tmp_path.iterdir()] == []


def test_a_hub_started_on_a_string_it_cannot_read_says_so_without_its_password(
    tmp_path: Path,
) -> None:
    target = f"postgresql://ann:{PASSWORD}@127.0.0.1:5432/x?bogus=1"
    done = subprocess.run(
        [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", target, "--port", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
    )
    assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
    assert PASSWORD not in done.stderr and done.stderr.startswith("aletheia-sync: ")
