"""The value checks of sync records: what real stores make passes unchanged, the rest is named."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import dismissals, facts, memories, rules, transfer, worklists
from aletheia_mem.errors import InvalidInputError
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.storage.sync_export import MAX_REQUESTS
from aletheia_mem.sync.records import MAX_LIST
from aletheia_mem.sync.validate import MAX_SKEW_MS, validate_records
from aletheia_mem.timefmt import FIRST_MS
from tests.conftest import FakeClock


def _every_kind(store: SqliteStore, clock: FakeClock) -> list[dict[str, object]]:
    memories.save_memory(
        store,
        clock,
        memories.MemoryInput(
            "Staging needs the VPN", "shop", "codex", facts=["vpn is required"], files=["a.py"]
        ),
    )
    facts.record_fact(
        store, project="shop", subject="db", predicate="is", object="sqlite",
        valid_from=clock.now + 10 * 86_400_000, source="cli", now=clock.now,
    )  # fmt: skip
    rules.add_rule(
        store, rules.RuleInput("Run tests", "you commit", "situation", "a release", [1], [1], "t"),
        clock.now,
    )  # fmt: skip
    worklists.write_list(store, clock, project="shop", name="todo", items=["ship"], tool="t")
    dismissals.set_dismissed(
        store, item_type="memory", item_id=1, dismiss=True, reason="dup", actor="t", now=clock.now
    )
    episode = store.start_episode("shop", "claude-code", clock.now)
    store.add_request(episode, "fix the build", clock.now)
    page = store.export_changes(
        after=0, limit=100, max_bytes=10**7, local_only=True, exclude_origin=None, projects=None
    )
    return page.records


def test_what_a_real_store_exports_passes_unchanged(store: SqliteStore, clock: FakeClock) -> None:
    records = _every_kind(store, clock)
    assert {record["kind"] for record in records} == {"memory", "fact", "rule", "episode"}
    assert validate_records(copy.deepcopy(records), system_clock()) == records


def test_a_version_within_the_skew_passes_and_one_past_it_is_named(
    store: SqliteStore, clock: FakeClock
) -> None:
    record = _every_kind(store, clock)[0]
    now = system_clock()  # the change log stamps versions with the real time
    record["v"] = [now + MAX_SKEW_MS, record["v"][1]]
    assert validate_records([record], now) == [record]
    record["v"] = [now + MAX_SKEW_MS + 1, record["v"][1]]
    named = rf"record 0 \({record['kind']} \w+\): its version is in the future"
    with pytest.raises(InvalidInputError, match=named):
        validate_records([record], now)


def test_a_rule_whose_text_holds_a_secret_is_kept_redacted_under_its_redacted_id(
    store: SqliteStore, clock: FakeClock
) -> None:
    """A release that redacts less sent it: refusing it would stop that store's every push (and
    every pull of a hub holding it) for good, so it is kept as add_rule keeps it."""
    rule = next(r for r in _every_kind(store, clock) if r["kind"] == "rule")
    then, scope = "Deploy with DB_PASSWORD=hunter2hunter2", "release ghp_" + "a1B2" * 9
    data = {**rule["data"], "then": then, "scope_name": scope}
    key = rules.rule_id(then, data["when"], data["scope_tier"], scope)

    (checked,) = validate_records([{**rule, "key": key, "data": data}], system_clock())

    stored = checked["data"]
    assert stored["then"] == "Deploy with DB_PASSWORD=[REDACTED]"
    assert "a1B2" not in stored["scope_name"]
    parts = (stored["then"], stored["when"], stored["scope_tier"], stored["scope_name"])
    assert checked["key"] == rules.rule_id(*parts) != key
    assert validate_records([checked], system_clock()) == [checked]  # checked again: the same


def test_a_secret_in_a_project_key_or_an_author_name_is_redacted(
    store: SqliteStore, clock: FakeClock
) -> None:
    token = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
    records = _every_kind(store, clock)
    for record in records:
        data = record["data"]
        for field in ("project", "tool", "source"):
            if field in data:
                data[field] = f"acme-{token}".lower() if field == "project" else f"bot {token}"
    checked = validate_records(records, system_clock())
    names = [
        (record["kind"], field, record["data"][field])
        for record in checked
        for field in ("project", "tool", "source")
        if field in record["data"]
    ]
    assert {kind for kind, _, _ in names} == {"memory", "fact", "rule", "episode"}
    assert all(token.lower() not in str(value).lower() for _, _, value in names), names
    assert {value for _, field, value in names if field == "project"} == {"acme-[redacted]"}


def test_a_list_of_more_items_than_a_tool_writes_passes(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Release 0.4.1's CLI and JSON API wrote such lists: refusing them stopped every sync.
    records = _every_kind(store, clock)
    [work] = [r for r in records if r["data"].get("kind") == worklists.WORK_STATE_KIND]
    work["data"]["text"] = json.dumps([str(n) for n in range(1001)])
    [checked] = validate_records([work], system_clock())
    assert len(json.loads(checked["data"]["text"])) == 1001


def test_an_author_name_with_control_characters_passes_without_them(
    store: SqliteStore, clock: FakeClock
) -> None:
    # Release 0.4.1 stored ALETHEIA_TOOL with its control characters; such a store still syncs.
    records = _every_kind(store, clock)
    for record in records:
        for field in ("tool", "source"):
            if field in record["data"]:
                record["data"][field] = "bad\x1b[31m\u202ename"
    checked = validate_records(records, system_clock())
    authors = {r["data"][f] for r in checked for f in ("tool", "source") if f in r["data"]}
    assert authors == {"bad[31mname"}


@pytest.mark.parametrize("text", ["[Infinity]", '["ship", 1e309]', "[NaN]", "{not json", '"ship"'])
def test_a_list_whose_text_a_read_could_not_give_back_is_refused(
    store: SqliteStore, clock: FakeClock, text: str
) -> None:
    records = _every_kind(store, clock)
    [work] = [r for r in records if r["data"].get("kind") == worklists.WORK_STATE_KIND]
    work["data"]["text"] = text
    with pytest.raises(InvalidInputError, match=r"text of a list must be a JSON list without"):
        validate_records([work], system_clock())


@pytest.mark.parametrize(
    ("predicate", "value"),
    [
        ("password", "Tr0ub4dor3x"),
        ("api_key", "k9Zq2Lm8Pw4Rt6Yu"),
        ("db password", "hunter2hunter2"),
    ],
)
def test_a_synced_facts_value_is_redacted_by_its_predicate_as_a_save_redacts_it(
    store: SqliteStore, clock: FakeClock, predicate: str, value: str
) -> None:
    record = next(r for r in _every_kind(store, clock) if r["kind"] == "fact")
    record["data"] = {**record["data"], "predicate": predicate, "object": value}
    [checked] = validate_records([record], system_clock())
    saved, _ = facts.record_fact(
        store, project="shop", subject="prod-db", predicate=predicate, object=value,
        valid_from=None, source="cli", now=clock.now,
    )  # fmt: skip
    assert checked["data"]["object"] == saved.object == "[REDACTED]"


@pytest.mark.parametrize(
    ("field", "value"), [("valid_from", 2**61), ("valid_from", -(2**61)), ("valid_to", 2**60)]
)
def test_a_fact_valid_at_an_instant_no_date_can_show_is_refused(
    store: SqliteStore, clock: FakeClock, field: str, value: int
) -> None:
    """A peer's fact valid from the year 73 million broke every listing that showed it."""
    record = next(r for r in _every_kind(store, clock) if r["kind"] == "fact")
    record["data"] = {**record["data"], field: value}
    named = rf"record 0 \(fact \w+\): {field} must be an instant of the"
    with pytest.raises(InvalidInputError, match=named):
        validate_records([record], system_clock())


def test_a_fact_valid_from_year_1_passes(store: SqliteStore, clock: FakeClock) -> None:
    record = next(r for r in _every_kind(store, clock) if r["kind"] == "fact")
    record["data"] = {**record["data"], "valid_from": FIRST_MS}
    assert validate_records([record], system_clock())[0]["data"]["valid_from"] == FIRST_MS


def test_what_sync_takes_at_its_limits_exports_and_imports_again(
    clock: FakeClock, tmp_path: Path
) -> None:
    """A peer's record may hold more than this version's writers take (a peer of another
    version wrote it); the store that took it must still export what import takes."""
    source = SqliteStore(tmp_path / "source.db")
    try:
        records = {r["kind"]: r for r in _every_kind(source, clock)}
    finally:
        source.close()
    memory, fact, rule = records["memory"], records["fact"], records["rule"]
    # every field at its limit, as many statements as a record's 3.5 MiB leaves room for
    memory["data"].update(
        title="T" * 1000, text="t " * 100_000, narrative="n" * 200_000,
        facts=["f" * 10_000] * 200, files=["p" * 1000] * 1000, dismiss_reason="r" * 1000,
    )  # fmt: skip
    fact["data"].update(subject="s" * 10_000, predicate="p" * 10_000, object="o" * 10_000)
    rule["data"].update(then="w" * 1000, when="w" * 1000, scope_name="n" * 1000)
    parts = ("then", "when", "scope_tier", "scope_name")
    rule["key"] = rules.rule_id(*(rule["data"][part] for part in parts))
    checked = validate_records([memory, fact, rule], system_clock())
    receiver = SqliteStore(tmp_path / "receiver.db")
    dump = tmp_path / "receiver.jsonl"
    try:
        receiver.apply_changes(checked, projects=None, now=clock.now)
        with dump.open("w", encoding="utf-8") as out:
            transfer.write_export(receiver, out)
    finally:
        receiver.close()
    fresh = SqliteStore(tmp_path / "fresh.db")
    try:
        with dump.open(encoding="utf-8") as lines:
            assert transfer.import_lines(fresh, lines, now=system_clock()) > 0
    finally:
        fresh.close()


def test_a_text_redaction_lengthens_past_its_limit_is_refused_on_push_and_cut_on_pull(
    store: SqliteStore, clock: FakeClock
) -> None:
    """Lengths are those of the stored (redacted) value; what a push stored passes a pull
    unchanged, redacting it again changes nothing."""
    grows = "mysql -pab1 db " * 14_000  # each -pab1 becomes -p[REDACTED]
    records = {r["kind"]: r for r in _every_kind(store, clock)}
    cases = [
        ("memory", "title", 1000),
        ("memory", "dismiss_reason", 1000),
        ("fact", "subject", 10_000),
        ("fact", "object", 10_000),
        ("episode", "summary", 200_000),
    ]
    for kind, field, limit in cases:
        record = copy.deepcopy(records[kind])
        record["data"][field] = grows[: limit - 5]
        with pytest.raises(InvalidInputError, match=f"{field} must be at most {limit} characters"):
            validate_records([record], system_clock())
        [cut] = validate_records([record], system_clock(), pulled=True)
        assert len(cut["data"][field]) <= limit, field
        assert validate_records([copy.deepcopy(cut)], system_clock()) == [cut]  # a fixed point
        record["data"][field] = grows[: limit // 2]
        [stored] = validate_records([record], system_clock())
        assert "[REDACTED]" in stored["data"][field]
        assert validate_records([copy.deepcopy(stored)], system_clock(), pulled=True) == [stored]
    episode = copy.deepcopy(records["episode"])
    episode["data"]["requests"] = [[clock.now, grows[:19_995]]]
    with pytest.raises(InvalidInputError, match="requests must be at most 20000 characters"):
        validate_records([episode], system_clock())


def test_an_episode_record_carries_no_more_requests_than_a_store_takes() -> None:
    assert MAX_REQUESTS == MAX_LIST


SECRET = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
# Fields whose value is one of a few words (refused otherwise), and the global ids (refused
# with a secret: below).
_CHOSEN = {"type", "kind", "scope_tier", "superseded_by", "memory"}
_IDS = {"evidence_memories", "evidence_facts"}


def _with_secret(record: dict[str, Any], field: str) -> dict[str, Any]:
    """``record`` with a secret in ``field``, where a store of this release could send one."""
    data, value = record["data"], record["data"][field]
    if field == "project":
        data[field] = f"{value} {SECRET}".lower()
    elif field == "text" and data.get("kind") == "work_state":
        data[field] = json.dumps([f"ship {SECRET}"])
    elif field in ("title", "dedupe_key") and data.get("kind") == "work_state":
        # a list's title and key hold its one name
        data["title"], data["dedupe_key"] = f"todo {SECRET} list", f"list:todo {SECRET}"
    elif field == "requests":
        data[field] = [[at, f"{text} {SECRET}"] for at, text in value]
    elif isinstance(value, list):
        data[field] = [*value, f"a {SECRET}"]
    else:
        data[field] = f"{value or 'a'} {SECRET}"
    if record["kind"] == "rule":
        parts = (data["then"], data["when"], data["scope_tier"], data["scope_name"])
        record["key"] = rules.rule_id(*parts)
    return record


@pytest.mark.parametrize("pulled", [False, True])
def test_no_field_of_any_kind_keeps_a_secret_once_checked(
    store: SqliteStore, clock: FakeClock, pulled: bool
) -> None:
    """docs/sync.md: "Secrets are redacted from every text field exactly as a save redacts
    them"; a list's key too (it was kept as sent), the same for a page pushed or pulled."""
    fields_seen = set()
    for record in _every_kind(store, clock):
        for field, value in record["data"].items():
            timed = field.endswith("_at") or field.startswith("valid_")
            if field in _CHOSEN | _IDS or timed or not isinstance(value, str | list | None):
                continue
            sent = _with_secret(copy.deepcopy(record), field)
            [checked] = validate_records([sent], system_clock(), pulled=pulled)
            assert SECRET.lower() not in json.dumps(checked).lower(), (record["kind"], field)
            fields_seen.add((record["kind"], field))
    assert ("memory", "dedupe_key") in fields_seen and ("episode", "requests") in fields_seen
    # memory 9 (a note's and a list's), fact 6, rule 4, episode 5: every text of every kind
    assert len(fields_seen) == 24, sorted(fields_seen)


def test_a_lists_key_from_another_store_is_the_one_work_state_write_makes_of_its_name(
    store: SqliteStore, clock: FakeClock
) -> None:
    """ "list:" and the name, redacted as the name is: a .pgpass line in a name keeps its host,
    as the list's title does, where redacting the key whole kept the password."""
    name = "db.example.com:5432:app:admin:S3cretPassw0rd"
    listed = next(r for r in _every_kind(store, clock) if r["data"].get("kind") == "work_state")
    listed["data"].update(title=f"{name} list", dedupe_key="list:" + name)
    for pulled in (False, True):
        [checked] = validate_records([copy.deepcopy(listed)], system_clock(), pulled=pulled)
        assert checked["data"]["dedupe_key"] == worklists.list_key(name)
        assert "S3cretPassw0rd" not in json.dumps(checked)
    written = worklists.write_list(store, clock, project="shop", name=name, items=[], tool="t")
    found = store.find_memory("shop", checked["data"]["dedupe_key"])
    assert found is not None and found.id == written
    assert found.title == checked["data"]["title"] == f"{worklists.list_name(name)} list"


@pytest.mark.parametrize(
    ("kind", "where"),
    [
        ("memory", "key"),
        ("memory", "origin"),
        ("fact", "superseded_by"),
        ("fact", "memory"),
        ("rule", "evidence_memories"),
        ("rule", "evidence_facts"),
    ],
)
def test_a_global_id_holding_a_secret_is_refused_without_it(
    store: SqliteStore, clock: FakeClock, kind: str, where: str
) -> None:
    """An id is never redacted (it names the item on every store): one holding a secret would
    be kept and passed on to every store as sent, so it is refused, and not echoed."""
    record = next(r for r in _every_kind(store, clock) if r["kind"] == kind)
    if where == "key":
        record["key"] = SECRET
    elif where == "origin":
        record["v"] = [record["v"][0], SECRET]
    elif where.startswith("evidence"):
        record["data"][where] = [SECRET]
    else:
        record["data"][where] = SECRET
    for pulled in (False, True):
        with pytest.raises(InvalidInputError) as refused:
            validate_records([copy.deepcopy(record)], system_clock(), pulled=pulled)
        assert SECRET not in refused.value.message


@pytest.mark.parametrize("field", ["v", "created_at", "updated_at"])
def test_a_negative_time_is_named_as_before_1970_not_in_the_future(
    store: SqliteStore, clock: FakeClock, field: str
) -> None:
    record = next(r for r in _every_kind(store, clock) if r["kind"] == "memory")
    if field == "v":
        record["v"] = [-5, record["v"][1]]
    else:
        record["data"][field] = -5
    with pytest.raises(InvalidInputError) as refused:
        validate_records([record], system_clock())
    message = refused.value.message
    assert "future" not in message and ("negative" in message or "before 1970" in message)
