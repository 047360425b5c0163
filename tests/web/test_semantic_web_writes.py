"""The web UI's writes tell semantic recall, as ``/api/`` does: a list written, a memory restored
or pinned from its pages gets a vector without any search.

The UI runs the JSON API's handlers in process (``web/calls``), past ``/api/``'s endpoint; the
notice used to be sent there only, so these memories waited for something else to wake the
embedding thread (or, in a server that never saved or searched otherwise, never got a vector).
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlencode

import pytest

from aletheia_mem.config import load_settings
from aletheia_mem.errors import NotFoundError
from aletheia_mem.search.semantic import find_model
from aletheia_mem.server.api import _EMBEDDING_WRITES, OPERATIONS
from aletheia_mem.tools.app import AppContext
from aletheia_mem.web import lists, memories
from aletheia_mem.web.calls import call as web_call
from tests.e2e.http_server import RunningServer, running_server, server_env
from tests.vector_coverage import coverage as store_coverage

FILES = find_model()
CLI = Path(sys.executable).parent / "aletheia"
# A notice loads the model about a second later; loading and embedding take well under one more.
# Well below the worker's 30 s poll, which would embed without a notice.
VECTOR_WAIT_S = 20.0
SEEDED = "shutil.rmtree removes a directory tree recursively."
semantic_installed = pytest.mark.skipif(FILES is None, reason="the semantic extra is not installed")


def _cli(root: Path, *args: str) -> None:
    """Run ``aletheia`` on the server's store with semantic off: the CLI sends no notice."""
    env = server_env(root / "data", root / "shop", {"ALETHEIA_SEMANTIC": "off"})
    (root / "shop").mkdir(parents=True, exist_ok=True)
    subprocess.run([str(CLI), *args], env=env, cwd=root / "shop", timeout=60, check=True)


def _coverage(root: Path) -> tuple[int, int]:
    """(live memories with a current vector, live memories), read from the store file."""
    env = server_env(root / "data", root / "shop", {"ALETHEIA_SEMANTIC": "off"})
    return store_coverage(Path(load_settings(env).store))


def _wait_for_coverage(root: Path, expected: tuple[int, int]) -> tuple[int, int]:
    deadline = time.monotonic() + VECTOR_WAIT_S
    while (found := _coverage(root)) != expected and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


def _post_form(server: RunningServer, page: str, action: str, fields: dict[str, str]) -> int:
    """Open ``page`` as a browser would, then post its form with the page's CSRF token."""
    cookie = server.request("GET", page).header("set-cookie") or ""
    token = cookie.split(";")[0].partition("=")[2]
    assert token, cookie
    headers = {
        "Origin": server.url,
        "Cookie": f"aletheia_csrf={token}",
        "Content-Type": "application/x-www-form-urlencoded",
    }
    return server.request("POST", action, urlencode({"csrf": token, **fields}), headers).status


def _write_list(server: RunningServer) -> int:
    return _post_form(server, "/lists", "/lists/save", {"name": "todo", "items": "ship it"})


def _restore(server: RunningServer) -> int:
    return _post_form(server, "/memories/1", "/memories/1/restore", {})


def _pin(server: RunningServer) -> int:
    return _post_form(server, "/memories/1", "/memories/1/pin", {})


@pytest.mark.e2e
@semantic_installed
@pytest.mark.parametrize(
    ("seed", "act", "embedded"),
    [
        ((), _write_list, (1, 1)),  # the list itself
        ((("save", SEEDED), ("dismiss", "1")), _restore, (1, 1)),
        ((("save", SEEDED),), _pin, (1, 1)),
    ],
    ids=["list-written", "memory-restored", "memory-pinned"],
)
def test_a_write_from_the_web_ui_gets_its_vector_without_any_search(
    tmp_path: Path,
    seed: tuple[tuple[str, ...], ...],
    act: Callable[[RunningServer], int],
    embedded: tuple[int, int],
) -> None:
    for args in seed:  # before the server: only the UI's write can start its embedding thread
        _cli(tmp_path, *args)
    with running_server(tmp_path, env={"ALETHEIA_SEMANTIC": "on"}) as server:
        assert act(server) == 303  # done: the page redirects to show it
        assert _wait_for_coverage(tmp_path, embedded) == embedded


class CountingNotices:
    """Semantic recall that counts the notices it gets and is never ready to rank."""

    def __init__(self) -> None:
        self.notices = 0

    def notice_saved(self) -> None:
        self.notices += 1

    def embed_query(self, text: str) -> None:
        return None

    def rank(self, *args: object, **kwargs: object) -> None:
        return None


def test_each_web_write_that_can_need_a_vector_sends_one_notice(app: AppContext) -> None:
    counting = CountingNotices()
    web = replace(app, semantic=counting, caller="web")
    lists.write(web, "", "todo", "ship it")
    assert counting.notices == 1
    memory_id = web_call(web, "saveMemory", body={"text": SEEDED})["memory"]["id"]
    assert counting.notices == 2
    memories.act_on_memory(web, memory_id, "dismiss", "")
    assert counting.notices == 2  # a dismissed memory needs no vector
    assert memories.act_on_memory(web, memory_id, "restore", "") is not None
    assert counting.notices == 3
    assert memories.act_on_memory(web, memory_id, "restore", "") is None  # not dismissed: no write
    memories.act_on_memory(web, memory_id, "pin", "")
    assert counting.notices == 4


def test_a_failed_web_write_sends_no_notice(app: AppContext) -> None:
    counting = CountingNotices()
    web = replace(app, semantic=counting, caller="web")
    with pytest.raises(NotFoundError):
        memories.act_on_memory(web, 404, "pin", "")
    with pytest.raises(NotFoundError):
        web_call(web, "restoreMemory", path={"memory_id": 404})
    assert counting.notices == 0


def test_with_semantic_off_a_web_write_needs_no_semantic_recall(app: AppContext) -> None:
    web = replace(app, semantic=None, caller="web")
    assert lists.write(web, "", "todo", "ship it")["name"] == "todo"


def test_every_operation_named_to_send_the_notice_is_served() -> None:
    served = {op.operation_id for op in OPERATIONS}
    assert served >= _EMBEDDING_WRITES  # a misspelt id would silently send nothing
