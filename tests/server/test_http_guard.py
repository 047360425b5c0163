"""The HTTP guard's checks: Host and Origin against DNS rebinding, and the bearer key."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from aletheia_mem.server.auth_failures import AuthFailures
from aletheia_mem.server.guard import (
    Guard,
    check_bearer,
    check_host,
    check_origin,
    host_name,
    make_policy,
    normal_origin,
)

OPEN = make_policy(None)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ("localhost:8765", "localhost"),
        ("127.0.0.1", "127.0.0.1"),
        ("[::1]:8765", "::1"),
        ("[::1]", "::1"),
        ("Example.COM:80", "example.com"),
        ("::1", "::1"),
        ("[", None),
        ("127.0.0.1:8765@evil.com", None),  # what follows the colon is no port
        ("[::1]@evil.com", None),
        ("localhost:80x", None),
    ],
)
def test_host_name_drops_the_port_and_brackets(value: str, name: str | None) -> None:
    assert host_name(value) == name


@pytest.mark.parametrize(
    "value", ["localhost", "127.0.0.1:9", "127.5.6.7", "[::1]:1", "a.localhost"]
)
def test_loopback_hosts_pass(value: str) -> None:
    assert check_host(OPEN, value) is None


@pytest.mark.parametrize("value", ["evil.example.com", "10.0.0.8:8765", "0.0.0.0", "", "[::2]"])  # noqa: S104
def test_other_hosts_are_refused_with_421(value: str) -> None:
    refusal = check_host(OPEN, value)
    assert refusal is not None
    assert (refusal.status, refusal.code) == (421, "invalid_host")


def test_a_missing_host_passes_and_allowed_hosts_add_to_loopback() -> None:
    assert check_host(OPEN, None) is None
    policy = make_policy(None, allowed_hosts=["Memory.LAN:8765"])
    assert check_host(policy, "memory.lan") is None
    assert check_host(policy, "memory.lan:1") is None
    assert check_host(policy, "other.lan") is not None


@pytest.mark.parametrize(
    ("value", "normal"),
    [
        ("HTTP://LocalHost:3000", "http://localhost:3000"),
        ("https://app.example.com/", "https://app.example.com"),
        ("null", None),
        ("file:///etc", None),
        ("http://x:notaport", None),
    ],
)
def test_origins_are_compared_in_normal_form(value: str, normal: str | None) -> None:
    assert normal_origin(value) == normal


def test_origin_check_allows_absent_and_loopback_and_the_allow_list_only() -> None:
    policy = make_policy(None, allowed_origins=["https://App.Example.com/"])
    assert check_origin(policy, None) is None
    assert check_origin(policy, "http://localhost:5173") is None
    assert check_origin(policy, "http://[::1]") is None
    assert check_origin(policy, "https://app.example.com") is None
    for refused in ("https://app.example.com:8443", "http://app.example.com", "null", "x"):
        refusal = check_origin(policy, refused)
        assert refusal is not None
        assert (refusal.status, refusal.code) == (403, "forbidden_origin")


def test_without_a_key_no_bearer_is_needed() -> None:
    assert check_bearer(OPEN, None) is None
    assert check_bearer(OPEN, b"Bearer anything") is None


def test_with_a_key_only_that_bearer_token_passes() -> None:
    policy = make_policy("k\u00e9y")
    assert check_bearer(policy, "Bearer k\u00e9y".encode()) is None
    assert check_bearer(policy, "BEARER  k\u00e9y ".encode()) is None
    for wrong in (None, b"Bearer key", b"Basic a2V5", "k\u00e9y".encode(), b"Bearer"):
        refusal = check_bearer(policy, wrong)
        assert refusal is not None
        assert refusal.status == 401
        assert dict(refusal.headers)["www-authenticate"].startswith('Bearer realm="aletheia"')


def _status(guard: Guard, client: str, key: str) -> int:
    """One ``GET /api/memories`` through ``guard`` from ``client`` with ``key`` as the bearer."""
    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/memories",
        "headers": [(b"host", b"127.0.0.1:8765"), (b"authorization", f"Bearer {key}".encode())],
        "client": (client, 50000),
    }
    sent: list[dict[str, object]] = []

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        sent.append(message)

    asyncio.run(guard(scope, receive, send))
    return int(str(sent[0]["status"]))


async def _ok(scope: object, receive: object, send: Callable[..., Awaitable[None]]) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


@pytest.mark.parametrize(("client", "right_key_after"), [("192.0.2.7", 429), ("127.0.0.1", 200)])
def test_an_address_past_its_failed_keys_waits_even_with_the_right_key_unless_loopback(
    client: str, right_key_after: int
) -> None:
    # The right key was served from a throttled address: guessing from the network went on at
    # full speed through the 429s. Loopback is spared: every local tool connects from there.
    guard = Guard(_ok, make_policy("s3cret"), AuthFailures())
    assert [_status(guard, client, f"guess-{n}") for n in range(20)] == [401] * 20
    assert _status(guard, client, "guess-20") == 429
    assert _status(guard, client, "s3cret") == right_key_after
    assert _status(guard, "192.0.2.99", "s3cret") == 200  # another address is not held
