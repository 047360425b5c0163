"""A JSON API address holds only the query parameters its endpoint takes, on a real
``aletheia-server``: a parameter it does not take (``projct`` for ``project``) is refused, as an
unknown body field is, never left unread (the search then answered for every project)."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import quote

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.server.test_api_body_fields import refused

pytestmark = pytest.mark.e2e

SEARCH_PARAMETERS = (
    "query, file, file_suffix, project, type, kind, limit, offset, since, until,"
    " older_than_days, order, upto, at"
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with running_server(tmp_path_factory.mktemp("api-query")) as s:
        for project in ("shop", "billing"):
            saved = s.api(
                "POST", "/api/memories", {"text": f"deploy plan {project}", "project": project}
            )
            assert saved.status == 201, saved.body
        yield s


def test_a_misspelt_project_is_refused_naming_the_parameters_taken(server: RunningServer) -> None:
    assert refused(server, "GET", "/api/memories?query=deploy&projct=shop") == (
        'Unknown parameter "projct" in the query string: GET /api/memories takes'
        f" {SEARCH_PARAMETERS}."
    )
    spelt = server.api("GET", "/api/memories?query=deploy&project=shop").json()
    assert [memory["project"] for memory in spelt["memories"]] == ["shop"]


def test_several_unknown_parameters_are_named_once_each(server: RunningServer) -> None:
    path = "/api/facts?subject=s&Subject=t&as-of=1&as-of=2&" + quote("ünïcode") + "=x"
    assert refused(server, "GET", path) == (
        'Unknown parameters "Subject", "as-of", "ünïcode" in the query string: GET /api/facts'
        " takes subject, project, predicate, as_of, include_superseded."
    )
    many = "&".join(f"p{number}=1" for number in range(7))
    assert refused(server, "GET", f"/api/rules?{many}") == (
        'Unknown parameters "p0", "p1", "p2", "p3", "p4" and 2 more in the query string:'
        " GET /api/rules takes include_disabled, upto."
    )


def test_every_endpoint_refuses_a_query_parameter_it_does_not_take(
    server: RunningServer,
) -> None:
    """The reads, and the writes and reads that take none: a write is not made."""
    memory = server.api("GET", "/api/memories?query=deploy&project=shop").json()["memories"][0]
    memory_id = memory["id"]
    none_taken = [
        ("GET", f"/api/memories/{memory_id}", None),
        ("POST", "/api/memories", {"text": "not saved"}),
        ("POST", f"/api/memories/{memory_id}/dismiss", {}),
        ("POST", f"/api/memories/{memory_id}/pin", {}),
        ("POST", "/api/facts", {"subject": "s", "predicate": "p", "object": "o"}),
        ("POST", "/api/rules", {"then": "not added"}),
        ("PUT", "/api/work-state/todo", {"items": ["a"]}),
        ("POST", "/api/work-state/todo/rename", {"to": "b", "items": ["a"]}),
    ]
    for method, path, body in none_taken:
        message = refused(server, method, f"{path}?project=billing", body)
        assert message.startswith('Unknown parameter "project" in the query string: ')
        assert message.endswith(" takes no query parameters."), message
    some_taken = ["/api/timeline", "/api/facts", "/api/rules", "/api/work-state"]
    for path in [*some_taken, "/api/work-state/todo", "/api/context"]:
        assert refused(server, "GET", f"{path}?bogus=1").startswith(
            f'Unknown parameter "bogus" in the query string: GET {path.replace("todo", "{name}")}'
        )
    assert server.api("GET", f"/api/memories/{memory_id}").json()["pinned"] is False
    assert server.api("GET", "/api/memories?query=saved&project=*").json()["memories"] == []
    assert server.api("GET", "/api/rules").json()["rules"] == []
    for project in ("", "?project=billing"):
        assert server.api("GET", f"/api/work-state{project}").json()["lists"] == []
    assert server.api("GET", "/api/facts?subject=s").json()["facts"] == []


def test_the_openapi_document_lists_exactly_the_parameters_taken(server: RunningServer) -> None:
    """Each operation's listed query parameters are the ones its refusal says it takes, and
    the document says any other is refused; the document's own address takes none."""
    assert refused(server, "GET", "/api/openapi.json?v=2") == (
        'Unknown parameter "v" in the query string: GET /api/openapi.json takes no query'
        " parameters."
    )
    document = server.api("GET", "/api/openapi.json").json()
    assert "never ignored" in document["info"]["description"]
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            listed = [p["name"] for p in operation["parameters"] if p["in"] == "query"]
            address = path.replace("{memory_id}", "1").replace("{fact_id}", "1")
            address = address.replace("{rule_id}", "r_1").replace("{name}", "todo")
            message = refused(
                server, method.upper(), f"{address}?zz=1", {} if method != "get" else None
            )
            takes = f"takes {', '.join(listed)}." if listed else "takes no query parameters."
            assert message.endswith(f"{method.upper()} {path} {takes}"), message
            said = "A query parameter not listed here is refused" if listed else "Takes no query"
            assert operation["description"].startswith(said)


def test_a_parameter_given_twice_is_refused_naming_it(server: RunningServer) -> None:
    """``project=shop&project=billing`` answered for billing (the last one given), where a
    proxy or a log that reads the first sees shop: it is refused, as a sync body that gives a
    key twice is. A blank one counts too."""
    assert refused(server, "GET", "/api/memories?query=deploy&project=shop&project=billing") == (
        'Repeated parameter "project" in the query string: GET /api/memories takes each'
        " parameter once."
    )
    assert refused(server, "GET", "/api/memories?project=&query=deploy&project=shop") == (
        'Repeated parameter "project" in the query string: GET /api/memories takes each'
        " parameter once."
    )
    assert refused(server, "GET", "/api/facts?subject=s&as_of=1&subject=t&as_of=2") == (
        'Repeated parameters "subject", "as_of" in the query string: GET /api/facts takes each'
        " parameter once."
    )
    # A name it does not take is told as unknown, given once or twice.
    assert refused(server, "GET", "/api/rules?bogus=1&bogus=2").startswith(
        'Unknown parameter "bogus" in the query string: '
    )
    once = server.api("GET", "/api/memories?query=deploy&project=shop").json()
    assert [memory["project"] for memory in once["memories"]] == ["shop"]


def test_every_endpoint_refuses_each_parameter_it_takes_given_twice(
    server: RunningServer,
) -> None:
    document = server.api("GET", "/api/openapi.json").json()
    checked = 0
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            address = path.replace("{memory_id}", "1").replace("{fact_id}", "1")
            address = address.replace("{rule_id}", "r_1").replace("{name}", "todo")
            listed = [p for p in operation["parameters"] if p["in"] == "query"]
            if listed:
                assert operation["description"].endswith(", and so is one given twice.")
            for parameter in listed:
                name = parameter["name"]
                message = refused(server, method.upper(), f"{address}?{name}=1&{name}=1")
                assert message == (
                    f'Repeated parameter "{name}" in the query string: {method.upper()} {path}'
                    " takes each parameter once."
                )
                checked += 1
    assert checked >= 20  # the search's 14, and the timeline's, facts', rules', lists', context's
