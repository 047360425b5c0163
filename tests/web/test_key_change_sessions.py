"""A new ``ALETHEIA_API_KEY`` signs the browser out for good: going back to the old key does
not sign its old sessions back in (real servers, one after another on one store, both kinds)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from tests.e2e.http_server import RunningServer, running_server
from tests.stores import store_target
from tests.web.test_web_security import form_post

pytestmark = pytest.mark.e2e

OLD_KEY, NEW_KEY = "first-key-0123456789abcdef", "second-key-0123456789abcdef"


def signed_in(server: RunningServer) -> str:
    reply = form_post(server, "/sign-in", {"key": OLD_KEY, "next": "/"})
    assert reply.status == 303, reply.body[:200]
    cookie = reply.header("set-cookie") or ""
    assert cookie.startswith("aletheia_ui="), cookie
    return cookie.split(";")[0]


def test_going_back_to_an_old_key_does_not_revive_its_sessions(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> None:
    store = store_target(request, store_kind, tmp_path)
    base = {} if isinstance(store, Path) else {"ALETHEIA_HUB_DB": store}

    def serving(key: str) -> AbstractContextManager[RunningServer]:
        return running_server(tmp_path, env={**base, "ALETHEIA_API_KEY": key})

    with serving(OLD_KEY) as first:
        session = signed_in(first)
        assert first.request("GET", "/", headers={"Cookie": session}).status == 200
    with serving(NEW_KEY) as second:
        assert second.request("GET", "/", headers={"Cookie": session}).status == 303
    with serving(OLD_KEY) as third:
        assert third.request("GET", "/", headers={"Cookie": session}).status == 303
        # A new sign-in with the old key works as ever.
        fresh = signed_in(third)
        assert third.request("GET", "/", headers={"Cookie": fresh}).status == 200


def test_a_start_without_a_key_ends_the_sessions_of_the_key_before(
    request: pytest.FixtureRequest, store_kind: str, tmp_path: Path
) -> None:
    store = store_target(request, store_kind, tmp_path)
    base = {} if isinstance(store, Path) else {"ALETHEIA_HUB_DB": store}
    keyed = {**base, "ALETHEIA_API_KEY": OLD_KEY}

    with running_server(tmp_path, env=keyed) as first:
        session = signed_in(first)
        assert first.request("GET", "/", headers={"Cookie": session}).status == 200
    with running_server(tmp_path, env=base) as keyless:
        assert keyless.request("GET", "/").status == 200  # no key: the Guard alone
    with running_server(tmp_path, env=keyed) as third:
        assert third.request("GET", "/", headers={"Cookie": session}).status == 303
        fresh = signed_in(third)
        assert third.request("GET", "/", headers={"Cookie": fresh}).status == 200
