"""What `aletheia sync` says it did: the rules a project-limited token leaves on this machine,
the items the hub merged on push, and every wait on the hub's rate limit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
from click.testing import CliRunner

from aletheia_mem.cli.main import cli
from aletheia_mem.clock import system_clock
from aletheia_mem.domain import rules
from aletheia_mem.errors import RateLimitedError
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync import client as sync_client
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.engine import sync_store
from tests.hub.fake_hubs import FakeHub, as_json, hello
from tests.hub.fake_hubs import serving as _serving
from tests.hub.helpers import running_hub, store_of
from tests.hub.sync_helpers import counts_at
from tests.hub.test_hostile_parsing import _LimitedHub
from tests.hub.test_sync_e2e import open_store, run_sync, save_notes

pytestmark = pytest.mark.e2e
HELD_BACK = (
    "2 rule(s) for every project or a situation stay on this machine: a token limited to"
    " projects pushes only rules of its projects."
)


def _add_rules(data_dir: Path) -> None:
    """A rule for every project, one for a situation and one for the project shop."""
    store = open_store(data_dir)
    try:
        for tier, name in (("everywhere", ""), ("situation", "migrations"), ("project", "shop")):
            rule = rules.RuleInput(f"Rebase first ({tier})", "", tier, name, [], [], "codex")
            rules.add_rule(store, rule, system_clock())
    finally:
        store.close()


def test_a_project_limited_token_says_which_rules_stay_on_this_machine(tmp_path: Path) -> None:
    dave, erin, carol = (tmp_path / name for name in ("dave", "erin", "carol"))
    for folder in (dave, erin, carol):
        folder.mkdir()
        _add_rules(folder)
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        done = run_sync(dave, "--hub", hub.url, "--token", hub.token("sync", ("shop",), "dave"))
        assert done.returncode == 0, done.stderr
        assert done.stdout == (
            f"Synced with {hub.url} (shop): pushed 1 item(s), pulled 1 (1 new or changed here,"
            f" 0 merged). {HELD_BACK}\n"
        )
        again = run_sync(dave)  # what was held back was said once
        assert again.stdout.endswith("0 merged).\n"), again.stdout
        token = hub.token("sync", ("shop",), "erin")
        as_json = run_sync(erin, "--hub", hub.url, "--token", token, "--json")
        assert as_json.returncode == 0, as_json.stderr
        counts = json.loads(as_json.stdout)
        assert (counts["pushed"], counts["held_back"], counts["merged_at_hub"]) == (1, 2, 0)
        every = run_sync(carol, "--hub", hub.url, "--token", hub.token("admin", None, "carol"))
        assert every.returncode == 0, every.stderr
        assert every.stdout.startswith(f"Synced with {hub.url} (every project): pushed 3 item(s)")
        assert every.stdout.endswith("merged).\n") and "stay on this machine" not in every.stdout
        every_json = json.loads(run_sync(carol, "--json").stdout)
        assert (counts["projects"], every_json["projects"]) == (["shop"], ["*"])  # as mcp-link
    assert counts_at(tmp_path / "hub.db")["rules"] == 3  # one id per rule, whoever made it


def test_a_note_the_hub_merged_on_push_is_counted_as_merged_at_the_hub(tmp_path: Path) -> None:
    folders = {name: tmp_path / name for name in ("a", "b", "c")}
    for name in ("c", "b", "a"):  # c's is the oldest: what a store pushes later loses to it
        folders[name].mkdir()
        save_notes(folders[name], ["Staging needs the VPN"])
    with running_hub(tmp_path / "hub.db", "--rate-limit", "0") as hub:
        first, second, third = (
            run_sync(folder, "--hub", hub.url, "--token", hub.token("sync", ("shop",), name), *json)
            for name, folder, json in (
                ("a", folders["a"], ()),
                ("b", folders["b"], ("--json",)),
                ("c", folders["c"], ()),
            )
        )
    assert first.returncode == 0 and "pushed 1 item(s), pulled" in first.stdout, first.stderr
    counts = json.loads(second.stdout)
    assert (counts["pushed"], counts["merged_at_hub"]) == (1, 1)
    assert third.returncode == 0, third.stderr
    assert "pushed 1 item(s) (1 merged at the hub), pulled" in third.stdout
    assert counts_at(tmp_path / "hub.db")["memories"] == 1


class _PushReplyHub(FakeHub):
    """An empty hub whose answer to a push says ``merged`` is what a test sets."""

    merged: ClassVar[Any] = None

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        if self.path == "/sync/hello":
            return as_json(hello())
        if self.path == "/sync/push":
            return as_json({"applied": 1, "skipped": 0, "merged": self.merged})
        return as_json({"records": [], "cursor": 0, "more": False})


@pytest.mark.parametrize(
    ("merged", "counted"),
    [(1, 1), (0, 0), (2, 0), (-1, 0), (True, 0), ("1", 0), (1.0, 0), (None, 0), (2**70, 0)],
)
def test_only_a_whole_number_up_to_the_records_sent_counts_as_merged_at_the_hub(
    tmp_path: Path, merged: Any, counted: int
) -> None:
    save_notes(tmp_path, ["One note to push"])
    _PushReplyHub.merged = merged
    store = SqliteStore(tmp_path / "aletheia.db")
    try:
        with _serving(_PushReplyHub) as url:
            report = sync_store(store, HubClient(url, "alt_x"), system_clock)
    finally:
        store.close()
    assert (report.pushed, report.merged_at_hub, report.merged) == (1, counted, 0)


class _LimitedOnceHub(_PushReplyHub):
    """An empty hub whose first answer is 429 with ``Retry-After: 0``."""

    refused: ClassVar[int] = 0

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        if _LimitedOnceHub.refused:
            return super().answer()
        _LimitedOnceHub.refused += 1
        return 429, b"", {"retry-after": "0"}


@pytest.fixture
def local_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The CLI's store in ``tmp_path``, with no hub or token from the environment."""
    for name in ("ALETHEIA_HUB_DB", "ALETHEIA_HUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ALETHEIA_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


@pytest.mark.usefixtures("local_store")
def test_sync_says_on_stderr_that_it_waits_on_the_hubs_rate_limit() -> None:
    _LimitedOnceHub.refused = 0
    with _serving(_LimitedOnceHub) as url:
        result = CliRunner().invoke(
            cli, ["sync", "--hub", url, "--token", "alt_x"], catch_exceptions=False
        )
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "aletheia sync: the hub's rate limit for this token is used up; waiting 0 s.\n"
    )
    assert result.stdout.startswith(f"Synced with {url} (every project): pushed 0 item(s)")


def test_a_client_tells_its_caller_of_every_wait_on_a_real_hubs_limit(tmp_path: Path) -> None:
    with running_hub(tmp_path / "hub.db", "--rate-limit", "1") as hub:
        token = hub.token("sync", None, "limited")
        said: list[int] = []
        waits: list[float] = []
        client = HubClient(hub.url, token, sleep=waits.append, on_wait=said.append)
        client.call("/sync/hello", {"store_id": store_of(token)})
        with pytest.raises(RateLimitedError):
            client.call("/sync/hello", {"store_id": store_of(token)})
    assert said == waits and len(said) == sync_client.MAX_RATE_LIMIT_WAITS
    assert all(1 <= seconds <= 60 for seconds in said)


def test_a_client_says_nothing_of_its_waits_unless_asked(capfd: pytest.CaptureFixture[str]) -> None:
    _LimitedHub.retry_after = "0"
    with _serving(_LimitedHub) as url, pytest.raises(RateLimitedError):
        HubClient(url, "alt_x").call("/sync/hello", {})
    assert capfd.readouterr() == ("", "")


class _FailingPullHub(_PushReplyHub):
    """A hub that takes the token, then fails every pull (a sync stopped halfway)."""

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        return (502, b"", {}) if self.path == "/sync/pull" else super().answer()


@pytest.mark.usefixtures("local_store")
def test_a_first_sync_stopped_halfway_remembers_the_hub_it_reached() -> None:
    with _serving(_FailingPullHub) as url:
        first = CliRunner().invoke(cli, ["sync", "--hub", url, "--token", "alt_x"])
        assert first.exit_code != 0 and "(502)" in first.stderr, first.output
        again = CliRunner().invoke(cli, ["sync"])  # no --hub, no token: both remembered
    assert "No hub yet" not in again.stderr and "A token is needed" not in again.stderr
    assert "(502)" in again.stderr, again.output


class _RefusingPushHub(FakeHub):
    """A hub that takes the token, then refuses the push."""

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        if self.path == "/sync/hello":
            return as_json(hello())
        return as_json({"error": {"code": "forbidden", "message": "not this store"}}, 403)


def test_a_refused_sync_with_another_hub_keeps_the_remembered_one(local_store: Path) -> None:
    store = open_store(local_store)
    try:
        store.remember_hub("http://127.0.0.1:9", "alt_working", None)
    finally:
        store.close()
    save_notes(local_store, ["A note to push"])
    with _serving(_RefusingPushHub) as url:
        refused = CliRunner().invoke(cli, ["sync", "--hub", url, "--token", "alt_other"])
    assert refused.exit_code != 0 and "(403)" in refused.stderr, refused.output
    store = open_store(local_store)
    try:
        assert store.remembered_hub() == ("http://127.0.0.1:9", "alt_working", None)
    finally:
        store.close()
