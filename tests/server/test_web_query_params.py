"""The UI's pages, on a real ``aletheia-server`` and a real hub, refuse a query parameter given
twice as ``/api/`` does (``project=a&project=b`` showed project b, where a proxy or a log that
reads the first sees a): a 400 page naming it, escaped and redacted."""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.hub.helpers import Hub, running_hub

pytestmark = pytest.mark.e2e

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("web-query")) as running:
        yield running


def page(url: str, path: str, token: str | None = None) -> tuple[int, str, str]:
    """The status, content type and text of a browser's GET of ``path``."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    headers = {"Accept": "text/html"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    try:
        conn.request("GET", path, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.getheader("content-type") or "", answer.read().decode()
    finally:
        conn.close()


def refused(url: str, path: str, token: str | None = None) -> str:
    """The message of the 400 page ``path`` answers (as shown: unescaped)."""
    status, media_type, body = page(url, path, token)
    assert status == 400, body[:300]
    assert media_type.startswith("text/html")
    start = body.index('role="alert">') + len('role="alert">')
    return unescape(body[start : body.index("</p>", start)])


def test_a_page_refuses_a_parameter_given_twice_naming_it(server: RunningServer) -> None:
    for project in ("shop", "billing"):
        body = {"text": f"deploy plan {project}", "project": project}
        assert server.api("POST", "/api/memories", body).status == 201
    assert refused(server.url, "/?q=deploy&project=shop&project=billing") == (
        'Repeated parameter "project" in the query string: this page takes each parameter once.'
    )
    assert refused(server.url, "/facts?subject=s&as_of=1&subject=t&as_of=") == (
        'Repeated parameters "subject", "as_of" in the query string: this page takes each'
        " parameter once."
    )
    for path in ("/lists?project=shop&name=a&name=b", "/rules?x=1&x=2", "/sign-in?next=/&next=/"):
        assert refused(server.url, path).startswith("Repeated parameter "), path
    status, _, body = page(server.url, "/?q=deploy&project=shop")
    assert status == 200 and "deploy plan shop" in body and "deploy plan billing" not in body


def test_the_name_is_escaped_and_a_secret_in_it_redacted(server: RunningServer) -> None:
    status, _, body = page(server.url, "/?%3Cb%3E=1&%3Cb%3E=2")
    assert status == 400 and "<b>" not in body
    assert "&#34;&lt;b&gt;&#34;" in body
    status, _, body = page(server.url, f"/context?{SECRET}=1&{SECRET}=2")
    assert status == 400 and SECRET not in body
    assert "Repeated parameter &#34;[REDACTED]&#34; in the query string" in body


def test_the_files_written_to_tools_are_a_list_given_once_each(server: RunningServer) -> None:
    """``/rules/sync``'s ``file`` names each file Write to tools wrote: a list, not repeated."""
    status, _, _ = page(server.url, "/rules/sync?file=a&file=b")
    assert status == 200
    assert refused(server.url, "/rules/sync?whole=a&whole=b").startswith(
        'Repeated parameter "whole" in the query string: '
    )


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hub]:
    with running_hub(Path(tmp_path_factory.mktemp("web-query-hub")) / "hub.db") as running:
        yield running


def test_the_hubs_pages_refuse_a_parameter_given_twice(hub: Hub) -> None:
    admin = hub.token("admin", None, "ops")
    assert refused(hub.url, "/audit?tool=search&tool=save_memory", admin) == (
        'Repeated parameter "tool" in the query string: this page takes each parameter once.'
    )
    assert refused(hub.url, "/tokens?a=1&a=2", admin).startswith('Repeated parameter "a" ')
    status, _, body = page(hub.url, "/audit?tool=search", admin)
    assert status == 200, body[:300]
