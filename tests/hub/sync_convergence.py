"""Random sync scenarios: three stores and a hub, random edits and syncs, then convergence checks.

A scenario is a list of operations (``random_ops``): edits through the domain layer the tools
use (saves with duplicates, facts back- and forward-dated on several stores, dismissals and
restores, work-state lists, rules, pins, episodes) interleaved with syncs, some two at once in
threads, some cut short (a call fails before or after the hub answered it). ``run_scenario``
plays it against a running hub, syncs every store until nothing moves, and ``check_converged``
says what differs: items, counts, fact timelines, references left pending, lost items, and
whether another round changes anything.

Run by hand for many seeds: ``python -m tests.hub.sync_convergence --seeds 200 [--pg URL]``.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sqlite3
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aletheia_mem.clock import system_clock
from aletheia_mem.domain import dismissals, facts, memories, rules, worklists
from aletheia_mem.domain.rule_admin import set_rule_enabled
from aletheia_mem.errors import AletheiaError, ConflictError, NotFoundError
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.sync.client import HubClient
from aletheia_mem.sync.engine import SyncReport, sync_store
from tests.hub.helpers import Hub, running_hub
from tests.hub.sync_helpers import counts_at, items_at

STORES = ("a", "b", "c")
PROJECTS = ("shop", "web")
TEXTS = ("use uv", "tests need docker", "staging needs the VPN", "deploy on fridays", "no ORMs")
SUBJECTS = ("db", "cache")
OBJECTS = ("sqlite", "postgres", "redis", "none")
HOUR = 3_600_000
VALID_FROM = (None, None, -3 * HOUR, -60_000, 60_000, 2 * HOUR)
RULES = (("Run the tests", "you commit"), ("Use uv", "always"), ("Ask first", "you deploy"))
LISTS = ("todo", "plan")
QUIET_ROUNDS = 8

Op = tuple[Any, ...]


def random_ops(seed: int, count: int = 40) -> list[Op]:
    """A scenario: ``count`` operations drawn with ``seed`` (the same seed, the same list)."""
    rng = random.Random(seed)
    ops: list[Op] = []
    for _ in range(count):
        store = rng.choice(STORES)
        roll = rng.random()
        if roll < 0.14:
            ops.append(("save", store, rng.choice(PROJECTS), rng.choice(TEXTS), rng.random() < 0.2))
        elif roll < 0.28:
            subject, obj = rng.choice(SUBJECTS), rng.choice(OBJECTS)
            ops.append(("fact", store, subject, obj, rng.choice(VALID_FROM)))
        elif roll < 0.36:
            ops.append(
                ("dismiss", store, rng.choice(("memory", "fact")), rng.random(), rng.random() < 0.7)
            )
        elif roll < 0.42:
            items = rng.sample(("a", "b", "c", "d"), rng.randint(0, 3))
            ops.append(("list", store, rng.choice(PROJECTS), rng.choice(LISTS), items))
        elif roll < 0.44:
            old, new = rng.sample(LISTS, 2)
            ops.append(("rename", store, rng.choice(PROJECTS), old, new, ["r"]))
        elif roll < 0.50:
            ops.append(
                (
                    "rule",
                    store,
                    rng.randrange(len(RULES)),
                    rng.choice(("everywhere", "project")),
                    rng.random(),
                )
            )
        elif roll < 0.55:
            ops.append(
                ("rule_edit", store, rng.random(), rng.choice(("confirm", "disable", "enable")))
            )
        elif roll < 0.60:
            ops.append(("pin", store, rng.random(), rng.random() < 0.6))
        elif roll < 0.65:
            ops.append(("episode", store, rng.choice(PROJECTS), rng.random(), rng.choice(TEXTS)))
        elif roll < 0.83:
            ops.append(("sync", store))
        elif roll < 0.93:
            other = rng.choice([name for name in STORES if name != store])
            ops.append(("sync_pair", store, other))
        else:
            ops.append(("sync_cut", store, rng.randint(1, 6), rng.random() < 0.5))
    return ops


class CutClient(HubClient):
    """A client whose ``fail_at``-th call fails: before it is sent, or once the hub answered."""

    def __init__(self, url: str, token: str, fail_at: int, after: bool) -> None:
        super().__init__(url, token)
        self.fail_at, self.after, self.calls = fail_at, after, 0

    def call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if self.calls == self.fail_at and not self.after:
            raise AletheiaError("cut before the call")
        answer = super().call(path, body)
        if self.calls == self.fail_at:
            raise AletheiaError("cut after the call")
        return answer


@dataclass
class World:
    hub: Hub
    folder: Path
    tokens: dict[str, str] = field(default_factory=dict)
    made: dict[str, set[tuple[str, str]]] = field(default_factory=dict)  # store -> items it made
    # an item's identity -> (what the store that edited it last held right after, the edit)
    last_edit: dict[tuple[str, Any], tuple[dict[str, Any], str]] = field(default_factory=dict)
    log: list[str] = field(default_factory=list)

    def path(self, name: str) -> Path:
        return self.folder / name / "aletheia.db"

    def open(self, name: str) -> SqliteStore:
        return SqliteStore(self.path(name))

    def sync(self, name: str, client: HubClient | None = None) -> SyncReport:
        store = self.open(name)
        try:
            return sync_store(
                store,
                client or HubClient(self.hub.url, self.tokens[name]),
                system_clock,
                page_size=3,
            )
        finally:
            store.close()


def _pick(conn: sqlite3.Connection, sql: str, fraction: float) -> Any:
    rows = conn.execute(sql).fetchall()
    return rows[int(fraction * len(rows))][0] if rows else None


def _uids(path: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(path)
    try:
        found = {("memory", row[0]) for row in conn.execute("SELECT uid FROM memories")}
        found |= {("fact", row[0]) for row in conn.execute("SELECT uid FROM facts")}
        found |= {("rule", row[0]) for row in conn.execute("SELECT id FROM rules")}
        found |= {("episode", row[0]) for row in conn.execute("SELECT uid FROM episodes")}
        return found
    finally:
        conn.close()


# Fields the model leaves out: a fact's tile (re-tiled by later facts) and memory (merged into
# another), an episode's requests (a union), and the authors (the hub names the token, and the
# tool, that sends a record of an item it does not know yet under that id, a merge's too).
_UNMODELLED = {
    "memory": ("tool",),
    "fact": ("valid_to", "superseded_by", "memory", "source"),
    "rule": ("source",),
    "episode": ("requests", "tool"),
}


def _identity(key: tuple[str, str], data: dict[str, Any]) -> tuple[str, Any]:
    """One item across stores: a memory by project and dedupe key (two saves merge)."""
    if key[0] == "memory":
        return ("memory", (data["project"], data["dedupe_key"]))
    return key


def _modelled(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in data.items() if name not in _UNMODELLED.get(kind, ())}


def _versions(path: Path) -> dict[tuple[str, str], tuple[int, str]]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT kind, key, changed_at, origin FROM sync_log").fetchall()
        return {(row[0], row[1]): (row[2], row[3]) for row in rows}
    finally:
        conn.close()


def apply_edit(world: World, op: Op) -> None:
    """One edit on one store, noting the items it gave a new version: the last one wins."""
    name = op[1]
    before = _versions(world.path(name))
    _edit(world, op)
    after = items_at(world.path(name))
    for key, version in _versions(world.path(name)).items():
        if before.get(key) != version and key in after:
            data = after[key]
            world.last_edit[_identity(key, data)] = (_modelled(key[0], data), repr(op))


def _edit(world: World, op: Op) -> None:
    """One edit on one store, through the domain layer."""
    kind, name = op[0], op[1]
    store = world.open(name)
    conn = sqlite3.connect(world.path(name))
    now = system_clock()
    try:
        if kind == "save":
            _, _, project, text, with_fact = op
            extra = [memories.FactInput("db", "is", "postgres")] if with_fact else []
            item = memories.MemoryInput(text=text, project=project, tool=name, facts=extra)
            memories.save_memory(store, system_clock, item)
        elif kind == "fact":
            _, _, subject, obj, offset = op
            facts.record_fact(
                store, project="shop", subject=subject, predicate="is", object=obj,
                valid_from=None if offset is None else now + offset, source=name, now=now,
            )  # fmt: skip
        elif kind == "dismiss":
            _, _, item_type, fraction, dismiss = op
            table = "memories" if item_type == "memory" else "facts"
            item_id = _pick(conn, f"SELECT id FROM {table} ORDER BY id", fraction)
            if item_id is not None:
                dismissals.set_dismissed(
                    store, item_type=item_type, item_id=item_id, dismiss=dismiss,
                    reason="random" if dismiss else None, actor=name, now=now,
                )  # fmt: skip
        elif kind == "list":
            _, _, project, list_name, items = op
            worklists.write_list(
                store, system_clock, project=project, name=list_name, items=items, tool=name
            )
        elif kind == "rename":  # refused (no such list, the name taken) it changes nothing
            _, _, project, old_name, new_name, items = op
            with contextlib.suppress(NotFoundError, ConflictError):
                worklists.rename_list(
                    store, system_clock, project=project, name=old_name, new_name=new_name,
                    items=items, tool=name,
                )  # fmt: skip
        elif kind == "rule":
            _, _, which, tier, fraction = op
            then, when = RULES[which]
            evidence = _pick(conn, "SELECT id FROM memories ORDER BY id", fraction)
            item = rules.RuleInput(
                then, when, tier, "shop" if tier == "project" else "",
                [evidence] if evidence is not None and fraction < 0.5 else [], [], name,
            )  # fmt: skip
            rules.add_rule(store, item, now)
        elif kind == "rule_edit":
            _, _, fraction, action = op
            rule_id = _pick(conn, "SELECT id FROM rules ORDER BY id", fraction)
            if rule_id is not None:
                if action == "confirm":
                    rules.confirm_rule(store, rule_id, now)
                else:
                    set_rule_enabled(store, rule_id, action == "enable", now)
        elif kind == "pin":
            _, _, fraction, pinned = op
            memory_id = _pick(conn, "SELECT id FROM memories ORDER BY id", fraction)
            if memory_id is not None:
                store.set_pinned(memory_id, pinned, now)
        elif kind == "episode":
            _, _, project, fraction, text = op
            episode = _pick(conn, "SELECT id FROM episodes ORDER BY id", fraction)
            if episode is None or fraction > 0.7:
                episode = store.start_episode(project, name, now)
            store.add_request(episode, text, now)
    finally:
        conn.close()
        store.close()
    world.made.setdefault(name, set()).update(_uids(world.path(name)))


def apply_op(world: World, op: Op) -> None:
    kind = op[0]
    if kind == "sync":
        world.sync(op[1])
    elif kind == "sync_pair":
        errors: list[BaseException] = []

        def run(name: str) -> None:
            try:
                world.sync(name)
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=run, args=(name,)) for name in op[1:]]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if errors:
            raise errors[0]
    elif kind == "sync_cut":
        _, name, fail_at, after = op
        try:
            world.sync(name, CutClient(world.hub.url, world.tokens[name], fail_at, after))
        except AletheiaError as error:
            if not str(error.message).startswith("cut "):
                raise
    else:
        apply_edit(world, op)


def sync_until_quiet(world: World) -> int:
    """Sync every store in turn until a whole round moves nothing; returns the rounds taken."""
    for round_number in range(1, QUIET_ROUNDS + 1):
        reports = [world.sync(name) for name in STORES]
        if all(report.pushed == 0 and report.pulled == 0 for report in reports):
            return round_number
    raise AssertionError(f"still not quiet after {QUIET_ROUNDS} rounds")


def _timeline_problems(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    try:
        rows = conn.execute(
            "SELECT f.*, s.uid AS successor FROM facts f"
            " LEFT JOIN facts s ON s.id = f.superseded_by"
        ).fetchall()
    finally:
        conn.close()
    keys: dict[tuple[str, str, str], list[Any]] = {}
    for row in rows:
        keys.setdefault((row["project"], row["subject_key"], row["predicate_key"]), []).append(row)
    problems = []
    for key, facts_of_key in keys.items():
        ranked = sorted(facts_of_key, key=lambda r: (r["valid_from"], r["recorded_at"], r["uid"]))
        for row, nxt in zip(ranked, [*ranked[1:], None], strict=True):
            want = (None, None) if nxt is None else (nxt["valid_from"], nxt["uid"])
            have = (row["valid_to"], row["successor"])
            if have != want:
                problems.append(f"{path.parent.name} {key} {row['uid']}: {have} != {want}")
    return problems


def _left_pending(path: Path) -> list[Any]:
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT kind, key, field, target FROM sync_pending").fetchall()
    finally:
        conn.close()


def _canonical(path: Path, kind: str, key: str) -> str:
    """The id an item made here goes by now (a memory merged into another: that one's)."""
    if kind != "memory":
        return key
    conn = sqlite3.connect(path)
    try:
        row = conn.execute("SELECT canonical FROM sync_aliases WHERE uid = ?", (key,)).fetchone()
        return key if row is None else str(row[0])
    finally:
        conn.close()


def _resolves(path: Path, kind: str, key: str) -> bool:
    conn = sqlite3.connect(path)
    try:
        if kind == "memory":
            uid = _canonical(path, kind, key)
            return (
                conn.execute("SELECT 1 FROM memories WHERE uid = ?", (uid,)).fetchone() is not None
            )
        table, column = {
            "fact": ("facts", "uid"),
            "rule": ("rules", "id"),
            "episode": ("episodes", "uid"),
        }[kind]
        return (
            conn.execute(f"SELECT 1 FROM {table} WHERE {column} = ?", (key,)).fetchone() is not None
        )
    finally:
        conn.close()


def check_converged(world: World) -> list[str]:
    """What differs between the stores and the hub once every store synced until quiet."""
    problems: list[str] = []
    hub_items = items_at(world.hub.db)
    hub_counts = counts_at(world.hub.db)
    for name in STORES:
        path = world.path(name)
        mine = items_at(path)
        problems.extend(
            f"{name} {key}: {mine.get(key)} != hub {hub_items.get(key)}"
            for key in sorted(set(mine) | set(hub_items))
            if mine.get(key) != hub_items.get(key)
        )
        if counts_at(path) != hub_counts:
            problems.append(f"{name} counts {counts_at(path)} != hub {hub_counts}")
        problems += _timeline_problems(path)
        problems += [f"{name} pending {row}" for row in _left_pending(path)]
        for identity, (data, op) in world.last_edit.items():
            found = [
                _modelled(key[0], value)
                for key, value in mine.items()
                if _identity(key, value) == identity
            ]
            if found != [data]:
                problems.append(f"{name} {identity}: {found} is not the last edit's {data} ({op})")
        for maker, made in world.made.items():
            for kind, key in sorted(made):
                if not _resolves(path, kind, _canonical(world.path(maker), kind, key)):
                    problems.append(f"{name} lost {kind} {key} made on {maker}")
    return problems


def run_scenario(hub: Hub, folder: Path, ops: list[Op]) -> list[str]:
    """Play ``ops``, sync until quiet, check; returns the problems found (none: converged)."""
    world = World(hub, folder)
    for name in STORES:
        (folder / name).mkdir()
        world.open(name).close()
        world.tokens[name] = hub.token("sync", None, name)
    for op in ops:
        apply_op(world, op)
    sync_until_quiet(world)
    problems = check_converged(world)
    if problems:
        return problems
    before = {name: items_at(world.path(name)) for name in STORES}
    reports = [world.sync(name) for name in STORES]
    moved = [
        f"{name}: {r.pushed} pushed, {r.pulled} pulled"
        for name, r in zip(STORES, reports, strict=True)
        if r.pushed or r.pulled
    ]
    changed = [name for name in STORES if items_at(world.path(name)) != before[name]]
    return [f"another round moved {m}" for m in moved] + [
        f"another round changed {n}" for n in changed
    ]


def scenario_on_fresh_hub(hub_db: Callable[[Path], Path | str], ops: list[Op]) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        with running_hub(hub_db(folder), "--rate-limit", "0") as hub:
            try:
                return run_scenario(hub, folder, ops)
            except Exception:
                return ["crashed: " + traceback.format_exc(limit=6)]


def shrink(
    hub_db: Callable[[Path], Path | str], ops: list[Op], match: str = "", tries: int = 3
) -> list[Op]:
    """Remove operations while the scenario still fails (at least once in ``tries``) with a
    problem holding ``match``."""

    def fails(candidate: list[Op]) -> bool:
        return any(
            any(match in problem for problem in scenario_on_fresh_hub(hub_db, candidate))
            for _ in range(tries)
        )

    chunk = max(1, len(ops) // 2)
    while chunk >= 1:
        start = 0
        while start < len(ops):
            candidate = ops[:start] + ops[start + chunk :]
            if candidate and fails(candidate):
                ops = candidate
            else:
                start += chunk
        chunk //= 2
    return ops


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--first", type=int, default=0)
    parser.add_argument("--ops", type=int, default=40)
    parser.add_argument("--pg", help="a PostgreSQL database URL: each scenario gets a schema")
    parser.add_argument("--shrink", action="store_true")
    parser.add_argument("--match", default="", help="shrink keeping a problem holding this")
    args = parser.parse_args()

    def hub_db(folder: Path) -> Path | str:
        if args.pg is None:
            return folder / "hub.db"
        import secrets

        import psycopg

        from tests.pg import schema_url

        schema = "conv_" + secrets.token_hex(5)
        with psycopg.connect(args.pg, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return schema_url(args.pg, schema)

    failed = 0
    for seed in range(args.first, args.first + args.seeds):
        ops = random_ops(seed, args.ops)
        begun = time.monotonic()
        problems = scenario_on_fresh_hub(hub_db, ops)
        print(
            f"seed {seed}: {len(problems)} problem(s) in {time.monotonic() - begun:.1f}s",
            flush=True,
        )
        if problems:
            failed += 1
            for problem in problems[:8]:
                print("   ", problem)
            if args.shrink:
                small = shrink(hub_db, ops, args.match)
                print("    shrunk to:", small)
                for problem in scenario_on_fresh_hub(hub_db, small)[:8]:
                    print("     ", problem)
    print(f"{failed} of {args.seeds} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
