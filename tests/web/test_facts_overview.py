"""The Facts page's overview of current facts, over real HTTP: every project with facts is in it
and in the Project list, those with no memory and those past the first twenty by name too."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.web.test_daily_user import text_of
from tests.web.test_fact_dismissal import record

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-facts-overview")) as running:
        yield running


def options(body: bytes) -> list[str]:
    select = re.search(rb'<select id="project".*?</select>', body, re.S)
    assert select, body[:300]
    return [value.decode() for value in re.findall(rb'<option value="([^"]*)"', select.group())]


def test_a_project_with_facts_and_no_memory_is_in_the_overview_and_the_list(
    server: RunningServer,
) -> None:
    record(server, "svc", "alice", "factonly")
    page = server.request("GET", "/facts")
    assert page.status == 200
    assert "alice" in text_of(page) and "factonly" in options(page.body)
    chosen = server.request("GET", "/facts?project=factonly")
    assert "alice" in text_of(chosen)


def test_a_project_past_the_first_twenty_by_name_is_in_the_overview(
    server: RunningServer,
) -> None:
    for n in range(1, 22):
        reply = server.api("POST", "/api/memories", {"text": f"note {n}", "project": f"p{n:02}"})
        assert reply.status == 201, reply.body
    reply = server.api("POST", "/api/memories", {"text": "the last one", "project": "zz"})
    assert reply.status == 201, reply.body
    record(server, "cache", "zoe-in-zz", "zz")
    page = server.request("GET", "/facts")
    assert "zoe-in-zz" in text_of(page) and "zz" in options(page.body)
