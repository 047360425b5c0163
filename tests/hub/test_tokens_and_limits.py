"""Hub tokens and the per-token rate limit, without HTTP."""

from __future__ import annotations

import threading

import pytest

from aletheia_mem.errors import ConflictError, InvalidInputError
from aletheia_mem.hub.tokens import (
    TokenCache,
    create_token,
    hash_secret,
    lookalike_key,
    parse_projects,
    verify_token,
)
from aletheia_mem.server.ratelimit import RateLimiter, SharedRateLimiter
from aletheia_mem.storage.sqlite import SqliteStore
from tests.conftest import FakeClock
from tests.stores import dump


def test_a_token_is_prefixed_random_text_and_only_its_hash_is_stored(
    store: SqliteStore, clock: FakeClock
) -> None:
    secret, token = create_token(store, clock, scope="sync", projects=("shop",), name="ci")
    other, _ = create_token(store, clock, scope="sync", projects=("shop",), name="ci-2")
    assert secret.startswith("alt_") and len(secret) == 36 and secret != other
    assert token.token_hash == hash_secret(secret) and token.prefix == secret[:10]
    everything = "\n".join(dump(store))
    assert secret not in everything and token.token_hash in everything
    assert verify_token(store, secret) == token


def test_unknown_and_revoked_tokens_do_not_verify(store: SqliteStore, clock: FakeClock) -> None:
    secret, token = create_token(store, clock, scope="admin", projects=None, name="ops")
    assert verify_token(store, secret[:-1] + ("A" if secret[-1] != "A" else "B")) is None
    assert verify_token(store, "") is None
    revoked = store.revoke_token("ops", clock())
    assert revoked is not None and revoked.id == token.id
    assert verify_token(store, secret) is None
    assert store.revoke_token("ops", clock()) is None


def test_a_remembered_token_is_refused_once_its_seconds_pass_after_a_revocation(
    store: SqliteStore, clock: FakeClock
) -> None:
    now = [100.0]
    cache = TokenCache(store, 0.5, monotonic=lambda: now[0])
    secret, token = create_token(store, clock, scope="sync", projects=("shop",), name="ci")
    assert cache.remembered(secret) is None  # never read yet
    assert cache.verify(secret) == token
    assert store.revoke_token("ci", clock()) is not None  # by another process, say
    now[0] += 0.49
    assert cache.remembered(secret) == token
    now[0] += 0.01
    assert cache.remembered(secret) is None
    assert cache.verify(secret) is None
    now[0] -= 0.5  # a revoked token is not remembered: it is refused at once again
    assert cache.remembered(secret) is None


def test_unknown_tokens_are_never_remembered_and_no_seconds_means_no_memory(
    store: SqliteStore, clock: FakeClock
) -> None:
    secret, token = create_token(store, clock, scope="sync", projects=("shop",), name="ci")
    remembering = TokenCache(store, 60.0)
    wrong = secret[:-1] + ("A" if secret[-1] != "A" else "B")
    assert remembering.verify(wrong) is None and remembering.remembered(wrong) is None
    assert remembering.remembered("x" * 500) is None
    forgetting = TokenCache(store, 0.0)
    assert forgetting.verify(secret) == token
    assert forgetting.remembered(secret) is None


def test_token_names_are_unique_and_scopes_are_checked(
    store: SqliteStore, clock: FakeClock
) -> None:
    create_token(store, clock, scope="read", projects=None, name="dup")
    with pytest.raises(ConflictError):
        create_token(store, clock, scope="read", projects=None, name="dup")
    with pytest.raises(InvalidInputError):
        create_token(store, clock, scope="owner", projects=None, name="x")
    _, named = create_token(store, clock, scope="mcp", projects=("shop",), name=None)
    assert named.name.startswith("mcp-shop-")
    for bad in ("alice/laptop", "esc\x1b[31m", "bidi\u202eevil", "soft\u00adhyphen"):
        with pytest.raises(InvalidInputError, match="may hold no /"):
            create_token(store, clock, scope="sync", projects=None, name=bad)
    _, spaced = create_token(store, clock, scope="sync", projects=None, name=" Alice  laptop ")
    assert spaced.name == "Alice laptop"


def test_projects_are_parsed_as_keys_and_star_means_all() -> None:
    assert parse_projects(" Shop, billing ,shop") == ("shop", "billing")
    assert parse_projects("*") is None
    with pytest.raises(InvalidInputError):
        parse_projects(" , ")
    with pytest.raises(InvalidInputError):
        parse_projects("shop,*")
    for bad in ("shop,bi\u202elling", "sh\u200bop", "shop\x1b"):  # no store takes such a key
        with pytest.raises(InvalidInputError, match="--projects must not contain control or"):
            parse_projects(bad)


class Ticker:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_sixty_first_request_in_a_minute_is_told_how_long_to_wait() -> None:
    ticker = Ticker()
    limiter = RateLimiter(60, monotonic=ticker)
    for _ in range(60):
        assert limiter.hit("t") is None
        ticker.now += 0.5
    assert limiter.hit("t") == 30  # the first request leaves the window 30 s from now
    assert limiter.hit("other") is None
    ticker.now += 30
    assert limiter.hit("t") is None
    assert limiter.hit("t") is not None


def test_the_limit_holds_exactly_across_threads() -> None:
    limiter = RateLimiter(60)
    allowed: list[bool] = []
    lock = threading.Lock()

    def hammer() -> None:
        for _ in range(25):
            result = limiter.hit("shared") is None
            with lock:
                allowed.append(result)

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=5)
    assert len(allowed) == 200 and allowed.count(True) == 60


def test_a_limit_of_zero_turns_the_limiter_off() -> None:
    limiter = RateLimiter(0)
    assert all(limiter.hit("t") is None for _ in range(500))


def test_a_batch_is_counted_all_or_nothing_and_never_past_the_limit() -> None:
    ticker = Ticker()
    limiter = RateLimiter(60, monotonic=ticker)
    assert limiter.hit("t", 50) is None
    ticker.now += 10
    assert limiter.hit("t", 11) == 50  # the 50 leave the window 50 s from now
    assert limiter.hit("t", 10) is None  # nothing was counted for the refused batch
    assert limiter.hit("t") is not None
    assert limiter.hit("other", 61) == 60  # more than a minute's worth never fits


def test_idle_keys_are_forgotten_once_there_are_very_many() -> None:
    ticker = Ticker()
    limiter = RateLimiter(5, monotonic=ticker)
    for n in range(10_001):
        limiter.hit(f"address-{n}")
    ticker.now += 61
    limiter.hit("late")
    assert len(limiter._hits) == 1


def test_the_shared_limiter_counts_each_token_in_the_store_by_the_clock(
    store: SqliteStore, clock: FakeClock
) -> None:
    limiter = SharedRateLimiter(store.rate_windows(), 60, clock=clock)
    for _ in range(60):
        assert limiter.hit(7) is None
        clock.advance(500)
    assert limiter.hit(7) == 30  # the first request leaves the window 30 s from now
    assert limiter.hit(8) is None
    assert limiter.hit(8, 60) == 60  # to fit, the batch waits for the request just made
    clock.advance(30_000)
    assert limiter.hit(7) is None
    assert SharedRateLimiter(store.rate_windows(), 0, clock=clock).hit(7, 500) is None


@pytest.mark.parametrize(
    ("name", "lookalike"),
    [
        ("alice3", "aIice3"),  # capital i for l
        ("alice3", "a1ice3"),
        ("alice3", "ALICE3"),
        ("alice3", "ali\u0307ce3"),  # i and a combining dot above (NFD)
        ("alice3", "\u0430lic\u00e9\u0033"),  # Cyrillic a, precomposed e acute
        ("alice3", "a\u217cice3"),  # small Roman numeral fifty, drawn l
        ("bob", "b0b"),
        ("bob", "B0B"),
        ("bob", "b\u043eb"),  # Cyrillic o
        ("bob", "\uff42\uff4f\uff42"),  # full-width
        ("ilker", "\u0130lker"),  # capital I with dot above
        ("sam", "s\u0101m"),  # a with macron
    ],
)
def test_names_drawn_alike_read_as_one(name: str, lookalike: str) -> None:
    """I, l and 1 (and i, I's small letter), O and 0, and letters with marks read as one."""
    assert lookalike_key(lookalike) == lookalike_key(name)


@pytest.mark.parametrize(
    ("name", "other"), [("alice3", "alice4"), ("bob", "rob"), ("ann", "anna"), ("dan", "dian")]
)
def test_names_drawn_apart_stay_apart(name: str, other: str) -> None:
    assert lookalike_key(name) != lookalike_key(other)
