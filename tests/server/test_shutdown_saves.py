"""Saves in flight when ``aletheia-server`` or ``aletheia-sync`` is told to stop: every save the
official MCP client saw acknowledged is in the store afterwards."""

from __future__ import annotations

import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import TextContent

from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.storage.open import open_hub_store
from tests.e2e.http_server import running_server
from tests.hub.helpers import running_hub
from tests.stores import store_target

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

WRITERS = 4
ACKED_BEFORE_STOP = 20
EXIT_S = 15.0


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@contextmanager
def serving(
    request: pytest.FixtureRequest, kind: str, tmp_path: Path
) -> Iterator[tuple[str, dict[str, str], subprocess.Popen[bytes], Path | str]]:
    """The MCP URL, the headers a client sends, the process and its store."""
    if kind.startswith("hub-"):
        db = store_target(request, kind.removeprefix("hub-"), tmp_path, "hub")
        with running_hub(db, "--rate-limit", "0") as hub:
            token = hub.token("sync", None, "burst")
            yield hub.url + "/mcp", {"Authorization": f"Bearer {token}"}, hub.process, db
        return
    workers = "2" if kind.endswith("workers") else "1"
    with running_server(tmp_path, args=("--port", "0", "--workers", workers)) as server:
        yield server.mcp_url, {}, server.process, tmp_path / "data" / DB_FILE_NAME


async def save_until_refused(
    url: str, headers: dict[str, str], writer: int, acked: dict[int, str]
) -> None:
    """Save notes one after another until the server stops answering."""
    try:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10)) as http,
            streamable_http_client(url, http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            for n in range(10_000):
                text = f"burst note {writer} {n}"
                with anyio.fail_after(EXIT_S):
                    result = await session.call_tool("save_memory", {"text": text})
                block = result.content[0]
                assert isinstance(block, TextContent)
                found = re.match(r"Saved as #(\d+) ", block.text)
                if result.is_error or found is None:
                    return
                acked[int(found.group(1))] = text
    except Exception:  # noqa: S110  (the server went away mid-call: that save is unacknowledged)
        pass


@pytest.mark.parametrize("kind", ["server", "server-2-workers", "hub-sqlite", "hub-postgresql"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
async def test_every_save_acknowledged_before_a_stop_is_in_the_store(
    request: pytest.FixtureRequest, kind: str, sig: int, tmp_path: Path
) -> None:
    acked: dict[int, str] = {}
    with serving(request, kind, tmp_path) as (url, headers, process, db):
        async with anyio.create_task_group() as group:
            for writer in range(WRITERS):
                group.start_soon(save_until_refused, url, headers, writer, acked)
            with anyio.fail_after(EXIT_S):
                while len(acked) < ACKED_BEFORE_STOP:
                    await anyio.sleep(0.01)
            process.send_signal(sig)
        code = await anyio.to_thread.run_sync(lambda: process.wait(timeout=EXIT_S))
    assert code == 0
    store = open_hub_store(db)
    try:
        stored = {memory.id: memory.text for memory in store.get_memories(sorted(acked))}
    finally:
        store.close()
    assert stored == acked
