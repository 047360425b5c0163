"""A token's making and revocation are ordered by the hub's store, not by the clock of the
machine that runs `aletheia mcp-link` (any machine that reaches a PostgreSQL hub's database may
run it): a revocation from a machine whose clock was an hour ahead left the owner's new token
refused the store for good (`revoked after this token was made`, exit code 5)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.timefmt import parse_instant
from tests.hub.helpers import running_hub

pytestmark = pytest.mark.e2e
HOUR_NS = 3_600 * 10**9
# `aletheia` on a machine whose clock is off by argv[1] nanoseconds.
_SKEWED = (
    "import sys, time\n"
    "skew = int(sys.argv.pop(1))\n"
    "wall, wall_ns = time.time, time.time_ns\n"
    "time.time = lambda: wall() + skew / 1e9\n"
    "time.time_ns = lambda: wall_ns() + skew\n"
    "sys.argv[0] = 'aletheia'\n"
    "from aletheia_mem.cli.entry import main\n"
    "main()\n"
)


def aletheia(home: Path, *args: str, skew_ns: int = 0) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(home), HOME=str(home), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-c", _SKEWED, str(skew_ns), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _create(home: Path, hub_db: str, name: str, skew_ns: int = 0) -> str:
    made = aletheia(
        home, "mcp-link", "create", "--hub-db", hub_db, "--projects", "shop", "--scope", "sync",
        "--name", name, "--json", skew_ns=skew_ns,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["token"])


def _listed(home: Path, hub_db: str) -> dict[str, dict[str, object]]:
    listed = aletheia(home, "mcp-link", "list", "--hub-db", hub_db, "--json")
    assert listed.returncode == 0, listed.stderr
    return {token["name"]: token for token in json.loads(listed.stdout)}


@pytest.mark.parametrize("skew_ns", [HOUR_NS, -HOUR_NS])
def test_a_revocation_from_a_skewed_machine_frees_the_store_for_the_owners_new_token_only(
    hub_db: Path | str, tmp_path: Path, skew_ns: int
) -> None:
    home, db = tmp_path / "admin", str(hub_db)
    store_id = "5" * 32
    old = _create(home, db, "laptop")
    eve = _create(home, db, "eve")  # made before the revocation: never takes the store
    with running_hub(hub_db) as hub:
        assert hub.post("/sync/hello", {"store_id": store_id}, old).status == 200
        revoked = aletheia(home, "mcp-link", "revoke", "--hub-db", db, "laptop", skew_ns=skew_ns)
        assert revoked.returncode == 0, revoked.stderr
        refused = hub.post("/sync/hello", {"store_id": store_id}, eve)
        assert refused.status == 403 and "revoked after this token was made" in str(refused.body)
        new = _create(home, db, "laptop-2")
        taken = hub.post("/sync/hello", {"store_id": store_id}, new)
        assert taken.status == 200, taken.body
    tokens = _listed(home, db)
    assert tokens["laptop-2"]["stores"] == 1 and tokens["laptop"]["stores"] == 0
    assert str(tokens["laptop"]["revoked_at"]) < str(tokens["laptop-2"]["created_at"])
    table = aletheia(home, "mcp-link", "list", "--hub-db", db).stdout
    line = next(row for row in table.splitlines() if row.startswith("laptop "))
    assert "revoked 20" in line  # when: the reason a token made before it is refused


def test_a_token_made_on_a_machine_whose_clock_is_ahead_gets_the_stores_time(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """On PostgreSQL the database's clock; on SQLite the file's own machine's."""
    home, db = tmp_path / "admin", str(hub_db)
    before = system_clock()
    _create(home, db, "ahead", skew_ns=HOUR_NS)
    made = aletheia(home, "mcp-link", "list", "--hub-db", db, "--json")
    created = json.loads(made.stdout)[0]["created_at"]
    assert before - 60_000 < parse_instant(created, "created_at") < system_clock() + 60_000
