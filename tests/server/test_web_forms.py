"""The Lists form of ``aletheia-server``'s pages, posted by a careless or hostile browser."""

from __future__ import annotations

import re
from collections.abc import Iterator
from urllib.parse import urlencode

import pytest

from tests.e2e.http_server import Reply, RunningServer, running_server

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-forms")) as running:
        yield running


def _save_list(server: RunningServer, name: str, items: str, project: str = "shop") -> Reply:
    """Post the Lists form as the page's own browser would: its CSRF cookie and token."""
    page = server.request("GET", "/lists")
    cookie = (page.header("set-cookie") or "").split(";")[0]
    token = re.search(r'name="csrf-token" content="([^"]+)"', page.body.decode())
    assert cookie and token, page.body[:200]
    form = urlencode({"csrf": token.group(1), "name": name, "items": items, "project": project})
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": cookie,
        "Origin": server.url,
    }
    return server.request("POST", "/lists/save", form, headers)


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [33, 900])
def test_an_item_nested_deeper_than_a_tool_takes_is_refused_like_the_api_refuses_it(
    server: RunningServer, depth: int
) -> None:
    reply = _save_list(server, f"deep-{depth}", f"ship\n{_nested(depth)}")
    assert reply.status == 400, reply.body[:300]
    assert b"arguments must not nest more than 32 levels deep." in reply.body
    assert server.api("GET", f"/api/work-state/deep-{depth}?project=shop").status == 404


def test_an_item_nested_past_the_parser_is_kept_as_the_text_it_is(server: RunningServer) -> None:
    line = _nested(5000)
    reply = _save_list(server, "deeper", line)
    if reply.status == 400:  # a parser that reaches this depth (Python 3.13's): refused as nested
        assert b"must not nest more than 32 levels deep" in reply.body
        assert server.api("GET", "/api/work-state/deeper?project=shop").status == 404
        return
    assert reply.status == 303
    saved = server.api("GET", "/api/work-state/deeper?project=shop").json()
    assert saved["items"] == [line]


def test_a_project_that_holds_a_secret_is_refused_not_saved_as_redacted(
    server: RunningServer,
) -> None:
    secret = "ghp_" + "pq7wr2ty9ui4op1as6df3gh8jk5lzxcvbn0mq"
    reply = _save_list(server, "todo", "ship", project=secret)
    assert reply.status == 400, reply.body[:300]
    assert b"project looks like a secret" in reply.body and secret.encode() not in reply.body
    assert server.api("GET", "/api/work-state/todo?project=[redacted]").status == 404
