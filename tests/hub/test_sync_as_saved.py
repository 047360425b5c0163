"""A synced item is kept as a save and an import keep it, on both ends of a sync: a hub takes
from a push, and a store from a pull, nothing a save (or ``aletheia import``) could not store.
Real hub processes (SQLite and PostgreSQL stores), real SQLite stores; a hostile hub is a real
HTTP server answering a pull with a page no hub sends."""

from __future__ import annotations

import copy
import json
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import memories, rules
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.engine import sync_store
from tests.hub.fake_hubs import FakeHub, as_json, hello, serving
from tests.hub.helpers import Hub, running_hub, uid
from tests.hub.sync_helpers import counts_at, items_at
from tests.hub.test_hostile_sync import ORIGIN, memory_record
from tests.hub.test_sync_e2e import run_sync

pytestmark = pytest.mark.e2e
TEXT = "Staging deploys need the VPN"


@pytest.fixture(scope="module")
def hub(module_hub_db: Path | str) -> Iterator[Hub]:
    with running_hub(module_hub_db, "--rate-limit", "0") as started:
        yield started


def fact_record(**changes: Any) -> dict[str, Any]:
    now = system_clock()
    data = {
        "project": "shop", "subject": "db", "predicate": "is", "object": "pg",
        "valid_from": now - 1000, "valid_to": None, "recorded_at": now, "superseded_by": None,
        "source": "codex", "memory": None, "dismissed_at": None, "dismiss_reason": None,
    }  # fmt: skip
    key = changes.pop("key", uid(repr(sorted(changes.items()))))
    return {"kind": "fact", "key": key, "v": [now, ORIGIN], "data": {**data, **changes}}


def rule_record(**changes: Any) -> dict[str, Any]:
    now = system_clock()
    data = {
        "then": "Run the tests", "when": "you commit", "scope_tier": "project",
        "scope_name": "shop", "evidence_memories": [], "evidence_facts": [], "source": "codex",
        "added_at": now, "last_confirmed_at": now, "enabled": True, "updated_at": now,
    }  # fmt: skip
    data.update(changes)
    parts = (data["then"], data["when"], data["scope_tier"], data["scope_name"])
    return {"kind": "rule", "key": rules.rule_id(*parts), "v": [now, ORIGIN], "data": data}


def list_record(**changes: Any) -> dict[str, Any]:
    fields = {"kind": "work_state", "title": "todo list", "text": '["ship"]'}
    return memory_record(**{**fields, "dedupe_key": "list:todo", **changes})


# -- a note with a blank title ----------------------------------------------------------------


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"], ids=["empty", "spaces", "blanks"])
def test_a_pushed_note_with_a_blank_title_is_kept_with_the_title_a_save_gives_it(
    hub: Hub, tmp_path: Path, blank: str
) -> None:
    """As ``aletheia import`` and ``save_memory`` keep it: the first words of its text, its
    dedupe key made from those, so that a teammate's save of the same words finds it."""
    token = hub.token("sync", ("shop",), f"blank-{len(blank)}-{blank[:1]!r}")
    text = f"{TEXT} ({len(blank)} {blank[:1]!r})"
    note = memory_record(title=blank, text=text, dedupe_key="k" * 64)
    assert hub.push(token, [note]).status == 200
    held = items_at(hub.db)[("memory", note["key"])]
    assert held["title"] == text == memories.default_title(text)
    assert held["dedupe_key"] == memories.dedupe_key(text, text)
    teammate = tmp_path / "teammate"
    teammate.mkdir()
    reader = hub.token("sync", ("shop",), f"reader-{len(blank)}-{blank[:1]!r}")
    assert run_sync(teammate, "--hub", hub.url, "--token", reader).returncode == 0
    assert items_at(teammate / "aletheia.db")[("memory", note["key"])] == held
    store = SqliteStore(teammate / "aletheia.db")
    try:
        item = memories.MemoryInput(text=text, project="shop", tool="t")
        saved, created = memories.save_memory(store, system_clock, item)
    finally:
        store.close()
    assert not created and saved.title == text


class _Hub(FakeHub):
    """A hub that answers hello as a real one and a pull with ``page``."""

    page: ClassVar[list[dict[str, Any]]] = []

    def answer(self) -> tuple[int, bytes, dict[str, str]]:
        if self.path == "/sync/hello":
            return as_json(hello())
        return as_json({"records": self.page, "cursor": 5, "more": False})


def _pull(tmp_path: Path, page: list[dict[str, Any]]) -> Any:
    """``page`` pulled into a new store at tmp_path/local.db; the sync's report."""
    _Hub.page = page
    store = SqliteStore(tmp_path / "local.db")
    try:
        with serving(_Hub) as url:
            return sync_store(store, HubClient(url, "alt_x"), system_clock)
    finally:
        store.close()


def test_a_note_with_a_blank_title_is_pulled_with_the_title_a_save_gives_it(
    tmp_path: Path,
) -> None:
    """A hub of an earlier build holds it as a teammate pushed it."""
    note = memory_record(title=" ", text=f"  {TEXT}\n", dedupe_key="k" * 64)
    assert _pull(tmp_path, [note]).applied == 1
    held = items_at(tmp_path / "local.db")[("memory", note["key"])]
    assert held["title"] == TEXT
    assert held["dedupe_key"] == memories.dedupe_key(TEXT, f"  {TEXT}\n")


# -- what no save stores ----------------------------------------------------------------------

_NOTE_KEY = memories.dedupe_key("Release steps", "Release with make release")
REFUSED = [
    (list_record(title=" "), "title of a list must not be blank."),
    (list_record(dedupe_key=_NOTE_KEY), "dedupe_key of a list must start with list:."),
    (list_record(dedupe_key=None), "dedupe_key of a list must start with list:."),
    (memory_record(project="*"), 'project must not be "*", which means every project.'),
    (memory_record(key="note-1"), "key must be a global id (32 lowercase hex digits)."),
    (memory_record(key="A" * 32), "key must be a global id (32 lowercase hex digits)."),
    (fact_record(key="fact-1"), "key must be a global id (32 lowercase hex digits)."),
    (fact_record(memory="note-1"), "memory must be a global id (32 lowercase hex digits)."),
    (fact_record(superseded_by="x"), "superseded_by must be a global id (32 lowercase hex"),
    (fact_record(key="e" * 32, superseded_by="e" * 32), "superseded_by must not be the fact's"),
    (
        fact_record(valid_from=system_clock(), valid_to=system_clock() - 1),
        "valid_to must not be before valid_from.",
    ),
    (
        rule_record(evidence_memories=["#1"]),
        "evidence_memories must hold global ids (32 lowercase hex digits).",
    ),
    (memory_record(text=""), "text is required."),  # as a save refuses it
    (memory_record(text=" \n "), "text is required."),
    # a second "todo" list, keyed for another name (its title and key made of two names)
    (
        list_record(dedupe_key="list:../../x"),
        "dedupe_key of a list must be list: and the name its title holds.",
    ),
    (list_record(title="todo", dedupe_key="list:todo list"), "must be list: and the name"),
]


@pytest.mark.parametrize(("bad", "problem"), REFUSED)
def test_a_pushed_record_no_save_could_store_is_refused_whole(
    hub: Hub, bad: dict[str, Any], problem: str
) -> None:
    token = hub.token("sync", ("shop",), f"pusher-{bad['key']}")
    before = counts_at(hub.db)
    reply = hub.push(token, [memory_record(), bad])
    assert reply.status == 400, reply.body
    message = reply.body["error"]["message"]
    assert message.startswith(f"record 1 ({bad['kind']} {bad['key']}): "), message
    assert problem in message
    assert counts_at(hub.db) == before


# A list keyed as no list has one right form, its key made of its name: repaired, not held back.
REPAIRED = REFUSED[1:3]


@pytest.mark.parametrize(("bad", "problem"), [REFUSED[0], *REFUSED[3:]])
def test_a_pulled_record_no_save_could_store_is_held_back_and_the_rest_applied(
    tmp_path: Path, bad: dict[str, Any], problem: str
) -> None:
    """One such record on a hub (an earlier build took it) stopped every pull for good."""
    fine, later = memory_record(), memory_record(text="a later note")
    report = _pull(tmp_path, [fine, copy.deepcopy(bad), later])
    assert set(items_at(tmp_path / "local.db")) == {
        ("memory", fine["key"]),
        ("memory", later["key"]),
    }
    (held,) = report.refused_pulled.as_json()
    assert (held["count"], held["first"]) == (1, f"{bad['kind']} {bad['key']}")
    assert problem in held["reason"]


@pytest.mark.parametrize(("bad", "problem"), REPAIRED)
def test_a_pulled_list_keyed_as_no_list_is_keyed_by_its_name(
    tmp_path: Path, bad: dict[str, Any], problem: str
) -> None:
    report = _pull(tmp_path, [memory_record(), copy.deepcopy(bad)])
    assert (report.repaired, report.refused_pulled.total, report.applied) == (1, 0, 2)
    assert items_at(tmp_path / "local.db")[("memory", bad["key"])]["dedupe_key"] == "list:todo"


def test_a_list_keyed_as_a_note_cannot_answer_a_teammates_save_of_that_note(hub: Hub) -> None:
    """A list's key is ``list:`` and its name: one keyed as a note's words answered their save
    "Already saved" with the list."""
    alice = hub.token("sync", ("shop",), "alice-list-squat")
    mallory = hub.token("sync", ("shop",), "mallory-list-squat")
    squat = list_record(key=uid("list-squat"), dedupe_key=_NOTE_KEY, title="Release steps list")
    assert hub.push(mallory, [squat]).status == 400
    session = hub.initialize(alice)
    text = "Release with make release"
    saved, _ = hub.call_tool(alice, session, "save_memory", text=text, title="Release steps")
    assert saved.startswith("Saved as #"), saved


def test_a_notes_files_and_facts_are_kept_as_a_save_keeps_them(hub: Hub) -> None:
    """Each file once, no blank one; no blank statement (a save refuses one)."""
    token = hub.token("sync", ("shop",), "files-twice")
    files = ["src/a.py", "", "src/a.py", " ", "src/b.py"]
    note = memory_record(text="files twice", files=files, facts=["db is pg", "  "])
    assert hub.push(token, [note]).status == 200
    held = items_at(hub.db)[("memory", note["key"])]
    assert held["files"] == ["src/a.py", "src/b.py"]
    assert held["facts"] == ["db is pg"]


def test_a_rule_whose_scope_name_holds_control_characters_is_kept_without_them(
    hub: Hub, tmp_path: Path
) -> None:
    """``add_rule`` refuses them and an earlier release let them in: refusing such a rule would
    stop that store's every push for good, so it is kept as add_rule would keep it, under the
    id of its cleaned text (as ``aletheia import`` keeps it)."""
    token = hub.token("sync", None, "scope-controls")
    sent = rule_record(scope_tier="situation", scope_name="on\x1b[31m  call\u202e")
    assert hub.push(token, [sent]).status == 200
    kept = rules.rule_id("Run the tests", "you commit", "situation", "on[31m call")
    held = items_at(hub.db)
    assert ("rule", sent["key"]) not in held
    assert held[("rule", kept)]["scope_name"] == "on[31m call"
    assert _pull(tmp_path, [sent]).applied == 1  # and so does a store pull it
    assert items_at(tmp_path / "local.db")[("rule", kept)]["scope_name"] == "on[31m call"


# -- what an earlier release made ---------------------------------------------------------------

ZERO_WIDTH = "\u200b"
# Records a release before zero-width values counted as blank made (its save took them): the
# hub takes them and a pull keeps them, or that release's every sync would stop for good.
EARLIER = [
    memory_record(text=ZERO_WIDTH, title="zero-width text"),
    fact_record(object=ZERO_WIDTH),
    rule_record(then=ZERO_WIDTH, when="you commit"),
]


@pytest.mark.parametrize("made", EARLIER, ids=["text", "fact", "then"])
def test_a_zero_width_value_an_earlier_release_made_is_pushed_and_pulled(
    hub: Hub, tmp_path: Path, made: dict[str, Any]
) -> None:
    token = hub.token("sync", ("shop",), f"earlier-{made['key']}")
    reply = hub.push(token, [copy.deepcopy(made)])
    assert reply.status == 200, reply.body
    assert (made["kind"], made["key"]) in items_at(hub.db)
    report = _pull(tmp_path, [memory_record(), copy.deepcopy(made)])
    assert (made["kind"], made["key"]) in items_at(tmp_path / "local.db")
    assert not report.refused_pulled.as_json()


# -- what a save never makes ------------------------------------------------------------------


def test_a_reason_of_an_item_not_dismissed_is_dropped_and_updated_before_created_raised(
    hub: Hub,
) -> None:
    """A restore clears the reason, and no save updates a memory before it was made: the hub
    keeps neither as sent (nor does a store from a pull)."""
    token = hub.token("sync", ("shop",), "unsaved-shapes")
    now = system_clock()
    note = memory_record(dismiss_reason="stale", created_at=now, updated_at=now - 10**12)
    fact = fact_record(dismiss_reason="wrong")
    assert hub.push(token, [note, fact]).status == 200
    held = items_at(hub.db)
    assert held[("memory", note["key"])]["dismiss_reason"] is None
    assert held[("memory", note["key"])]["updated_at"] == now
    assert held[("fact", fact["key"])]["dismiss_reason"] is None


def _raw(hub: Hub, path: str, body: bytes, token: str) -> tuple[int, Any]:
    """POST ``body`` as it is (a JSON text ``json.dumps`` could not make)."""
    request = urllib.request.Request(  # noqa: S310  (the hub's own http URL)
        hub.url + path,
        data=body,
        method="POST",
        headers={"Content-Type": "application/json", "Authorization": f"Bearer {token}"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        with error:
            return error.code, json.loads(error.read())


def test_a_store_id_no_store_makes_is_refused_and_claims_nothing(hub: Hub) -> None:
    token = hub.token("sync", ("shop",), "odd-store-ids")
    hub_id = hub.post("/sync/hello", {"store_id": uid("odd-ids-own")}, token).body["hub_id"]
    for odd in ("x", hub_id.upper(), "a" * 100, uid("odd") + " "):
        for path in ("/sync/hello", "/sync/pull", "/sync/push"):
            reply = hub.post(path, {"store_id": odd, "records": []}, token)
            assert reply.status == 400, (odd, path, reply.body)
            assert "32 lowercase hex digits" in reply.body["error"]["message"]
    twice = uid("twice-first"), uid("twice-last")
    body = '{"store_id": "%s", "store_id": "%s", "records": []}' % twice  # noqa: UP031
    status, answer = _raw(hub, "/sync/hello", body.encode(), token)
    assert (status, answer["error"]["message"]) == (400, "The body must not give any key twice.")
    nested = f'{{"store_id": "{twice[0]}", "cursor": 0, "cursor": 5}}'
    assert _raw(hub, "/sync/pull", nested.encode(), token)[0] == 400
    # neither was claimed: another token takes both
    other = hub.token("sync", ("shop",), "odd-store-ids-2")
    for store in twice:
        assert hub.post("/sync/hello", {"store_id": store}, other).status == 200
