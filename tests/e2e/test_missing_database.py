"""A ``postgresql://`` store naming a database that does not exist is "no store" (exit code 7,
docs/troubleshooting.md), as a missing store file: one line naming the database, no traceback,
from the CLI, ``aletheia doctor`` and every server entry point alike."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
NO_STORE = 7
WAIT = 30


@pytest.fixture
def missing_url(pg_database: str) -> str:
    """A URL of the test server naming a database that is not there."""
    return pg_database.rsplit("/", 1)[0] + "/no_such_db_" + secrets.token_hex(4)


def run(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(tmp_path),
        "ALETHEIA_DATA_DIR": str(tmp_path / "data"),
        "ALETHEIA_HUB_DB": url,
    }
    return subprocess.run(
        [str(BIN / args[0]), *args[1:]],
        env=env,
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )


def refusal(url: str) -> str:
    name = url.rsplit("/", 1)[1]
    return f'There is no such PostgreSQL database at {url}: database "{name}" does not exist'


@pytest.mark.parametrize("command", [("search", "canary"), ("save", "canary"), ("context",)])
def test_cli_commands_exit_with_no_store(tmp_path, missing_url, command):
    done = run(tmp_path, missing_url, "aletheia", *command)
    assert (done.returncode, done.stderr) == (NO_STORE, f"Error: {refusal(missing_url)}\n")


def test_doctor_reports_the_store_missing(tmp_path, missing_url):
    done = run(tmp_path, missing_url, "aletheia", "doctor", "--json")
    assert done.returncode == NO_STORE
    store = json.loads(done.stdout)["store"]
    assert store["missing"] is True and store["detail"] == refusal(missing_url)


def test_doctor_hub_db_reports_the_store_missing(tmp_path, missing_url):
    done = run(tmp_path, missing_url, "aletheia", "doctor", "--hub-db", missing_url, "--json")
    assert done.returncode == NO_STORE
    assert json.loads(done.stdout)["missing"] is True


@pytest.mark.parametrize(
    "command",
    [
        ("aletheia-mcp",),
        ("aletheia-server", "--port", "0"),
        ("aletheia-sync", "--port", "0"),
        ("aletheia-sync", "--port", "0", "--hub-db", "URL"),
    ],
)
def test_servers_exit_with_no_store(tmp_path, missing_url, command):
    args = [missing_url if arg == "URL" else arg for arg in command]
    done = run(tmp_path, missing_url, *args)
    assert (done.returncode, done.stderr) == (NO_STORE, f"{command[0]}: {refusal(missing_url)}\n")
