"""A rolling upgrade of a hub on PostgreSQL: an `aletheia-sync` process of this version keeps
running while a newer version migrates the database. Its next save is refused in one message
(the SQLite guard's), nothing is written, sync is refused too, and `/healthz` answers 503 so
that a load balancer stops sending it requests."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import urllib.error
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.hub.readiness import OUTDATED
from aletheia_mem.storage.postgres.database import redact_url
from tests.hub.helpers import WAIT_SECONDS, Hub, running_hub
from tests.storage.postgres.newer_version import LATEST, contents, migrate_one_step_further

pytestmark = pytest.mark.e2e


def _healthz(hub: Hub) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(hub.url + "/healthz", timeout=WAIT_SECONDS) as answer:  # noqa: S310
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _save(hub: Hub, token: str, session: str, text: str) -> tuple[int, Any]:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "save_memory", "arguments": {"text": text, "project": "shop"}},
    }
    reply = hub.post("/mcp", body, token, session)
    return reply.status, reply.body


@pytest.mark.parametrize("rate_limit", ["60", "0"])  # 0: no rate window is written first
def test_a_running_hub_refuses_writes_once_a_newer_version_migrated_its_database(
    pg_url: str, tmp_path: Path, rate_limit: str
) -> None:
    env = {key: value for key, value in os.environ.items() if not key.startswith("ALETHEIA_")}
    env.update(ALETHEIA_DATA_DIR=str(tmp_path), HOME=str(tmp_path))
    command = [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", pg_url]
    with running_hub(pg_url, "--rate-limit", rate_limit, command=command, env=env) as hub:
        token = hub.token("sync", ("shop",), "laptop")
        session = hub.initialize(token)
        assert _healthz(hub) == (200, {"status": "ok", "schema": LATEST})
        status, saved = _save(hub, token, session, "Use pnpm, not npm")
        assert status == 200 and saved["result"]["isError"] is False, saved

        migrate_one_step_further(pg_url)
        before = contents(pg_url)
        status, refused = _save(hub, token, session, "A note after the upgrade")
        pushed = hub.push(token, [])
        health = _healthz(hub)
        assert hub.process.poll() is None  # still running, refusing
    message = (
        f"The store {redact_url(pg_url)} was upgraded by a newer version of Aletheia while this"
        f" process ran (schema {LATEST + 1}; this process knows up to {LATEST}); nothing was"
        " changed. Restart this server (or the tool that started it) to use the new version."
    )
    assert status == 503 and refused["error"]["message"] == message, refused
    assert (pushed.status, pushed.body["error"]) == (
        503,
        {"code": "store_too_new", "message": message},
    )
    assert health == (503, {"status": "outdated", "message": OUTDATED})  # naming no store
    assert contents(pg_url) == before  # no memory, audit row, rate window or session touch


def test_healthz_of_a_sqlite_hub_tells_of_a_newer_version_too(tmp_path: Path) -> None:
    store = tmp_path / "hub.db"
    with running_hub(store) as hub:
        status, body = _healthz(hub)
        assert (status, body["status"]) == (200, "ok")
        with closing(sqlite3.connect(store, isolation_level=None)) as conn:
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (body["schema"] + 1,))
            conn.execute(f"PRAGMA user_version = {body['schema'] + 1}")
            conn.execute("COMMIT")
        status, outdated = _healthz(hub)
    assert (status, outdated) == (503, {"status": "outdated", "message": OUTDATED})
