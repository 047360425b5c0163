"""Token names through real `aletheia mcp-link` and `aletheia sync` processes and a real hub:
a name shaped like a token's first characters (`mcp-link revoke` takes those too), names drawn
like another's, revocation when a word is one token's name and another's first characters, and
what a refused sync says to do."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from html import unescape
from pathlib import Path

import httpx2 as httpx
import pytest

from aletheia_mem.hub.tokens import hash_secret
from aletheia_mem.storage.hub_rows import HubToken
from tests.hub.helpers import running_hub
from tests.hub.test_hub_processes import cli
from tests.stores import held_at, open_target

pytestmark = pytest.mark.e2e


def aletheia(home: Path, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
    """``aletheia ARGS`` on its own data folder (a sync given ``token``)."""
    return cli(home, *args, *(["--token", token] if token is not None else []))


def _create(home: Path, db: str, name: str) -> subprocess.CompletedProcess[str]:
    return aletheia(
        home, "mcp-link", "create", "--hub-db", db, "--projects", "shop", "--scope", "sync",
        f"--name={name}", "--json",
    )  # fmt: skip


def _live(home: Path, db: str) -> set[str]:
    listed = json.loads(aletheia(home, "mcp-link", "list", "--hub-db", db, "--json").stdout)
    return {token["name"] for token in listed if token["revoked_at"] is None}


@pytest.mark.parametrize("name", ["alt_RxFp0I", "ALT_bob", "a\u0406t_x", "alt_"])
def test_a_name_shaped_like_a_tokens_first_characters_is_refused(
    hub_db: Path | str, tmp_path: Path, name: str
) -> None:
    """`mcp-link create --name alt_RxFp0I` was taken, and `mcp-link revoke alt_RxFp0I` then
    revoked bob, whose token begins so."""
    home, db = tmp_path / "admin", str(hub_db)
    refused = _create(home, db, name)
    assert refused.returncode == 2, refused.stdout
    assert 'may not begin with "alt_": tokens do' in refused.stderr
    assert _create(home, db, "bob-alt_1").returncode == 0


@pytest.mark.parametrize("lookalike", ["aIice3", "ali\u0307ce3", "a1ice3", "AL1CE3"])
def test_a_name_drawn_like_anothers_is_refused(
    hub_db: Path | str, tmp_path: Path, lookalike: str
) -> None:
    home, db = tmp_path / "admin", str(hub_db)
    assert _create(home, db, "alice3").returncode == 0
    refused = _create(home, db, lookalike)
    assert refused.returncode == 4, refused.stdout
    assert 'would pass for the token "alice3"; choose another name.' in refused.stderr
    assert _live(home, db) == {"alice3"}


def test_a_word_that_is_one_tokens_name_and_anothers_first_characters_revokes_neither(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """A name an earlier release let in: "alt_RxFp0I", beside bob's token, which begins so."""
    home, db = tmp_path / "admin", str(hub_db)
    bob = json.loads(_create(home, db, "bob").stdout)["token"]
    prefix = bob[:10]
    store = open_target(hub_db)
    try:
        squat = HubToken(0, prefix, hash_secret("alt_squat"), "alt_squat0", "sync", None, 1, None)
        assert store.add_token(squat) is not None
    finally:
        store.close()
    both = aletheia(home, "mcp-link", "revoke", "--hub-db", db, prefix)
    assert both.returncode == 4, both.stdout
    revoke = f"aletheia mcp-link revoke --by name --hub-db {shlex.quote(db)}"  # as given
    assert both.stderr.strip() == (
        f'Error: "{prefix}" names more than one live token: the token "bob" (its first'
        f' characters) and the token "{prefix}" (its name). Revoke one by its name alone:'
        f" {revoke} bob, or {revoke} {prefix}."
    )
    assert _live(home, db) == {"bob", prefix}
    named = aletheia(home, "mcp-link", "revoke", "--hub-db", db, "--by", "name", prefix)
    assert named.returncode == 0, named.stderr
    assert _live(home, db) == {"bob"}
    by_prefix = aletheia(home, "mcp-link", "revoke", "--hub-db", db, "--by", "prefix", prefix)
    assert by_prefix.stdout.strip() == 'Revoked token "bob". Requests with it now get 401.'
    assert _live(home, db) == set()


BLANK_NAMES = ["", "   ", "\u200b", "\u200c\u200d", "\u2060\ufeff", " \u200b\u200d "]


def test_revoke_of_a_blank_name_is_a_usage_error_naming_what_is_required(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """A name of nothing, spaces or zero-width characters alone, which create reads as no name
    given, was told 'No live token named ""' (exit 3), as if some token might have had it."""
    home, db = tmp_path / "admin", str(hub_db)
    assert _create(home, db, "bob").returncode == 0
    for blank in [*BLANK_NAMES, "\u200b…"]:  # revoke drops the "…" list shows after a prefix
        refused = aletheia(home, "mcp-link", "revoke", "--hub-db", db, "--", blank)
        assert (refused.returncode, refused.stderr) == (2, "Error: name is required.\n"), blank
        assert refused.stdout == ""
    told = aletheia(home, "mcp-link", "revoke", "--hub-db", db, "--json", "\u200b")
    assert told.returncode == 2
    assert json.loads(told.stdout) == {
        "error": {"code": "invalid_input", "message": "name is required."}
    }
    assert _live(home, db) == {"bob"}


def test_a_refused_sync_says_what_to_do_in_words_a_shell_takes(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """The 403 for a store another live token holds offered only to revoke the teammate's
    token (every store of it stops), with a line a shell misreads for a name beginning with
    "-"; a remembered revoked token got only "the token is unknown or revoked"."""
    admin, laptop, copy = tmp_path / "admin", tmp_path / "laptop", tmp_path / "copy"
    db = str(hub_db)
    dash = json.loads(_create(admin, db, "-rf").stdout)["token"]
    other = json.loads(_create(admin, db, "carol").stdout)["token"]
    with running_hub(hub_db) as hub:
        assert aletheia(laptop, "save", "Deploy with make ship", "-p", "shop").returncode == 0
        first = aletheia(laptop, "sync", "--hub", hub.url, token=dash)
        assert first.returncode == 0, first.stderr
        copy.mkdir()
        (copy / "aletheia.db").write_bytes((laptop / "aletheia.db").read_bytes())
        # the store another token holds: a copied folder would sync as a new store of its own
        held = aletheia(laptop, "sync", "--hub", hub.url, token=other)
        assert held.returncode == 5, held.stderr
        said = " ".join(held.stderr.split())
        assert "give this token a data folder of its own (a new ALETHEIA_DATA_DIR)" in said
        assert "(aletheia mcp-link revoke -- -rf; it then syncs none of the stores it" in said
        revoked = aletheia(admin, "mcp-link", "revoke", "--hub-db", db, "--", "-rf")
        assert revoked.returncode == 0, revoked.stderr
        stale = aletheia(laptop, "sync")
        assert stale.returncode == 5
        said = " ".join(stale.stderr.split())
        assert "(401): Unauthorized: the token is unknown or revoked." in said
        assert (
            f"The token remembered in {laptop / 'hub-token'} no longer works: give a new one"
            " with ALETHEIA_HUB_TOKEN=TOKEN aletheia sync (or --token-stdin); it is remembered"
            " in its place."
        ) in said
        new = json.loads(_create(admin, db, "laptop-2").stdout)["token"]
        assert aletheia(laptop, "sync", token=new).returncode == 0
        again = aletheia(laptop, "sync")
        assert again.returncode == 0, again.stderr
        given = aletheia(copy, "sync", "--hub", hub.url, token=dash)
        assert given.returncode == 5
        assert "Check the token, or ask the hub's admin for a new one" in given.stderr


def test_the_tokens_page_revokes_the_row_it_names_and_refuses_a_word_naming_two(
    hub_db: Path | str, tmp_path: Path
) -> None:
    home, db = tmp_path / "admin", str(hub_db)
    made = aletheia(home, "mcp-link", "create", "--hub-db", db, "--projects", "*",
                    "--scope", "admin", "--name", "ops", "--json")  # fmt: skip
    admin = json.loads(made.stdout)["token"]
    bob = json.loads(_create(home, db, "bob").stdout)["token"]
    store = open_target(hub_db)
    try:
        squat = HubToken(0, bob[:10], hash_secret("alt_squat"), "alt_squat0", "sync", None, 1, None)
        assert store.add_token(squat) is not None
    finally:
        store.close()
    with (
        running_hub(hub_db) as hub,
        httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {admin}"}) as client,
    ):
        page = client.get("/tokens").text
        assert '<input type="hidden" name="by" value="name">' in page
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None

        def post(path: str, **fields: str) -> httpx.Response:
            form = {"csrf": csrf.group(1), **fields}
            return client.post(path, data=form, headers={"Origin": hub.url})

        both = post("/tokens/revoke", name=bob[:10])
        assert both.status_code == 409
        assert "names more than one live token" in unescape(both.text)
        shaped = post("/tokens/create", name="alt_page", scope="mcp", projects="shop")
        assert 'may not begin with "alt_"' in unescape(shaped.text)
        assert _live(home, db) == {"ops", "bob", bob[:10]}
        assert post("/tokens/revoke", name=bob[:10], by="name").status_code == 303
    assert _live(home, db) == {"ops", "bob"}


def test_the_tokens_page_refuses_to_revoke_a_blank_name_as_a_usage_error(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """A form naming no token (nothing, spaces, zero-width characters alone) got a 404 'No live
    token named' page; it is a 400 saying the name is required, before any confirmation."""
    home, db = tmp_path / "admin", str(hub_db)
    made = aletheia(home, "mcp-link", "create", "--hub-db", db, "--projects", "*",
                    "--scope", "admin", "--name", "ops", "--json")  # fmt: skip
    admin = json.loads(made.stdout)["token"]
    assert _create(home, db, "bob").returncode == 0
    with (
        running_hub(hub_db) as hub,
        httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {admin}"}) as client,
    ):
        csrf = re.search(r'name="csrf" value="([^"]+)"', client.get("/tokens").text)
        assert csrf is not None
        for blank in BLANK_NAMES:
            for by in ({}, {"by": "name"}, {"by": "prefix"}):
                form = {"csrf": csrf.group(1), "name": blank, **by}
                refused = client.post("/tokens/revoke", data=form, headers={"Origin": hub.url})
                assert refused.status_code == 400, (blank, by)
                assert "Name is required." in unescape(refused.text), (blank, by)
        assert _live(home, db) == {"ops", "bob"}


SECRET_NAME = "ops sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"


def test_a_name_holding_a_secret_is_refused_before_anything_is_stored(
    hub_db: Path | str, tmp_path: Path
) -> None:
    """Stored raw, the name went into the hub's hello (which every sync refused) and into its
    403s; the refusal names no part of the secret."""
    home, db = tmp_path / "admin", str(hub_db)
    made = aletheia(home, "mcp-link", "create", "--hub-db", db, "--projects", "*",
                    "--scope", "admin", "--name", "ops", "--json")  # fmt: skip
    admin = json.loads(made.stdout)["token"]
    refused = _create(home, db, SECRET_NAME)
    assert refused.returncode == 2, refused.stdout
    said = " ".join(refused.stderr.split())
    assert "--name holds what looks like a secret (ops [REDACTED])" in said
    assert "4eC39HqLyjWDarjtT1zdp7dc" not in refused.stdout + refused.stderr
    with (
        running_hub(hub_db) as hub,
        httpx.Client(base_url=hub.url, headers={"Authorization": f"Bearer {admin}"}) as client,
    ):
        page = client.get("/tokens").text
        csrf = re.search(r'name="csrf" value="([^"]+)"', page)
        assert csrf is not None
        form = {"csrf": csrf.group(1), "name": SECRET_NAME, "scope": "mcp", "projects": "shop"}
        posted = client.post("/tokens/create", data=form, headers={"Origin": hub.url})
        assert posted.status_code == 400
        assert "holds what looks like a secret" in unescape(posted.text)
        assert "4eC39HqLyjWDarjtT1zdp7dc" not in posted.text
    assert _live(home, db) == {"ops"}
    assert b"4eC39HqLyjWDarjtT1zdp7dc" not in held_at(hub_db)
