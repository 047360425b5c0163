"""Schemathesis fuzzes the JSON API from its own OpenAPI document, on a real keyed server.

Every generated request (valid and invalid) must get no 5xx, a documented status, JSON, and a
body that matches the documented schema.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from aletheia_mem.server.api import OPERATIONS
from aletheia_mem.server.openapi import build_document
from tests.e2e.http_server import RunningServer, running_server

pytestmark = pytest.mark.e2e

KEY = "fuzz-key"
AUTH = {"Authorization": f"Bearer {KEY}"}
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]


@pytest.fixture(scope="module")
def fuzzed_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root: Path = tmp_path_factory.mktemp("fuzz")
    with running_server(root, env={"ALETHEIA_API_KEY": KEY}) as server:
        for number in range(3):  # something for ids 1..3 to find
            saved = server.api("POST", "/api/memories", {"text": f"fuzz seed {number}"}, KEY)
            assert saved.status == 201
        yield server


# The document the server serves (asserted below), built here so tests exist at collection.
DOCUMENT = build_document(OPERATIONS, secured=True)
schema = schemathesis.openapi.from_dict(DOCUMENT)


def test_the_fuzzed_document_is_the_one_the_server_serves(fuzzed_server: RunningServer) -> None:
    assert fuzzed_server.api("GET", "/api/openapi.json", key=KEY).json() == DOCUMENT


@schema.parametrize()
@settings(
    max_examples=25,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_api_conforms_to_its_openapi_document(
    case: schemathesis.Case, fuzzed_server: RunningServer
) -> None:
    case.call_and_validate(base_url=fuzzed_server.url, headers=AUTH, checks=CHECKS, timeout=30)


def test_api_refuses_calls_without_the_key(tmp_path: Path) -> None:
    # A server of its own: the fuzzing above sends calls without the key, and past 20 failures
    # in a minute an address gets 429 instead of 401.
    with running_server(tmp_path, env={"ALETHEIA_API_KEY": KEY}) as server:
        _refuses_every_operation_without_the_key(server)


def _refuses_every_operation_without_the_key(fuzzed_server: RunningServer) -> None:
    document = fuzzed_server.api("GET", "/api/openapi.json", key=KEY).json()
    for path, operations in document["paths"].items():
        concrete = path.replace("{memory_id}", "1").replace("{fact_id}", "1")
        concrete = concrete.replace("{rule_id}", "r_1").replace("{name}", "todo")
        for method, operation in operations.items():
            assert operation["security"] == [{"bearer": []}]
            reply = fuzzed_server.request(method.upper(), concrete)
            assert reply.status == 401, (method, path)
            assert reply.json()["error"]["code"] == "unauthorized"
            assert reply.header("www-authenticate") == 'Bearer realm="aletheia"'
