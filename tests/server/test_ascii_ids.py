"""Ids and numbers in the JSON API's and the web UI's addresses are ASCII digits, on a real
``aletheia-server``.

Python's ``int`` and ``float`` read a full-width "1" (U+FF11), an Arabic-Indic "3" (U+0663),
"1_0" and " 1 " as numbers: ``GET /api/memories/%EF%BC%91`` returned #1, ``/api/memories/1_0``
#10, ``POST /api/memories/%EF%BC%94/pin`` pinned #4 and ``/api/timeline?anchor=%EF%BC%94``
anchored on #4, while the web UI answered ``/memories/%EF%BC%91`` with a 404. Each is refused
now as a word is, and acts on nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e

FULL_WIDTH_1, ARABIC_3, FULL_WIDTH_4 = (quote(c) for c in ("\uff11", "\u0663", "\uff14"))
HTML = {"Accept": "text/html,application/xhtml+xml"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("ids")) as started:
        for number in range(1, 11):
            reply = started.api("POST", "/api/memories", {"text": f"Deploy note number {number}"})
            assert reply.status == 201, reply.body
        yield started


def _refused(server: RunningServer, method: str, path: str) -> str:
    reply = server.api(method, path)
    assert reply.status == 400, (path, reply.body)
    error = reply.json()["error"]
    assert error["code"] == "invalid_input"
    return str(error["message"])


@pytest.mark.parametrize(
    "given", [FULL_WIDTH_1, ARABIC_3, "1_0", "%201%20", "%201", "1%20", "%E3%80%801", "abc"]
)
def test_a_memory_id_in_a_path_is_ascii_digits(server: RunningServer, given: str) -> None:
    assert _refused(server, "GET", f"/api/memories/{given}") == "memory_id must be a number."


def test_a_write_to_a_non_ascii_id_acts_on_nothing(server: RunningServer) -> None:
    for action in ("pin", "dismiss"):
        message = _refused(server, "POST", f"/api/memories/{FULL_WIDTH_4}/{action}")
        assert message == "memory_id must be a number."
    memory = server.api("GET", "/api/memories/4").json()
    assert memory["pinned"] is False and memory["dismissed_at"] is None


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (f"/api/timeline?anchor={FULL_WIDTH_4}", "anchor must be a number."),
        (f"/api/timeline?anchor=%23{FULL_WIDTH_4}", "anchor must be a number."),
        ("/api/timeline?anchor=%204", "anchor must be a number."),
        (f"/api/timeline?anchor=4&before={ARABIC_3}", "before must be a number."),
        (f"/api/memories?limit={FULL_WIDTH_4}", "limit must be a number."),
        ("/api/memories?offset=1_0", "offset must be a number."),
        (f"/api/memories?upto={ARABIC_3}", "upto must be a number."),
        (f"/api/rules?upto={FULL_WIDTH_1}", "upto must be a number."),
        (f"/api/memories?query=deploy&since=1{FULL_WIDTH_1}", "since must be"),
    ],
)
def test_a_number_in_a_query_is_ascii_digits(
    server: RunningServer, query: str, message: str
) -> None:
    assert _refused(server, "GET", query).startswith(message)


def test_ascii_ids_and_numbers_still_work(server: RunningServer) -> None:
    assert server.api("GET", "/api/memories/10").json()["id"] == 10
    around = server.api("GET", "/api/timeline?anchor=4&before=1&after=0").json()
    assert around["anchor"]["id"] == 4 and [row["id"] for row in around["before"]] == [3]
    listed = server.api("GET", "/api/memories?query=deploy&limit=2&offset=1&upto=9").json()
    assert len(listed["memories"]) == 2 and listed["upto"] == 9
    assert server.api("GET", "/api/rules?upto=1").status == 200


def test_the_web_ui_reads_ascii_ids_only(server: RunningServer) -> None:
    assert server.request("GET", f"/memories/{FULL_WIDTH_1}", headers=HTML).status == 404
    reason = {"reason": "the same as #\uff11 and #2"}  # each #N a link to memory N
    assert server.api("POST", "/api/memories/9/dismiss", reason).status == 200
    shown = server.request("GET", "/memories/9", headers=HTML)
    assert shown.status == 200
    assert b'href="/memories/2"' in shown.body and b'href="/memories/1"' not in shown.body
