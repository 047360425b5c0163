"""A differential harness: seeded random sequences of the 13 tools' calls, each run on a SQLite
store and on a PostgreSQL store under the same fixed clock, whose outputs (text, error flag and
structuredContent) must be equal, ids and times included.

``tests/tools/test_store_diff.py`` runs a small budget of seeds; a larger one (thousands of
sequences) passes the same way, with raising its ``SEEDS``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from aletheia_mem.domain import episodes, memories
from aletheia_mem.projects import normalize_project
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, ToolResult, call_tool
from tests.conftest import FakeClock

DAY_MS = 86_400_000
SUBJECTS = ("payments-api", "redis", "SHOP-4821", "Redis", "Café")
PREDICATES = ("database", "port")
WORDS = (
    "cache", "redis", "timeout", "deploy", "SHOP-4821", "SHOP-4822", "payments", "retry",
    "postgres", "migration", "webhook", "shop", "café", "CAFÉ", "Straße", "naïve", "日本語",
    "🚀", "foo_bar", "v1.2.3", "C++", "don't", "e-mail", "İstanbul", "ǅ", "x.y/z",
)  # fmt: skip
QUERIES = (
    *WORDS, "shop-4821", "4821", "SHOP", '"redis timeout"', "SHOP-4821 redis", "cach*", "cafe",
    "strasse", "NAIVE", "istanbul", "foo", "bar", "1.2", "dont", "mail", "本", "OR", "NOT x",
)  # fmt: skip
PROJECTS = ("shop", "shop", "blog", "Shop", "café")
TYPES = ("decision", "gotcha", "bugfix", "note", "discovery")
KINDS = ("note", "NOTE", "Note", "work_state", "Observation", "summary")
FILES = ("src/app.py", "src/cache/redis.py", "docs/README.md")
RULE_TEXT = ("Run the migrations first", "Never log tokens", "Pin the Redis version")

# What a host's hooks write besides the tools (observations, summaries, session requests).
HOOK_OBSERVATION, HOOK_REQUEST = "hook:observation", "hook:request"

Call = tuple[str, dict[str, Any], int]  # tool, arguments, ms the clock moves before the call
# Two empty stores, each with its clock at the same instant: (left, clock, right, clock).
OpenPair = Callable[[], tuple[AppContext, FakeClock, AppContext, FakeClock]]


@dataclass
class _Seen:
    """What a sequence has made so far, to name it in later calls."""

    saves: list[dict[str, Any]] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    pinning: float = 0.3  # how often a save pins: some sequences pin most of them
    instants: list[int] = field(default_factory=list)  # times saved at or facts start at


def _date(rng: random.Random, now: int, seen: _Seen | None = None) -> str | int:
    if seen is not None and seen.instants and rng.random() < 0.3:  # a boundary, exactly
        return rng.choice(seen.instants) + rng.choice((-1, 0, 0, 1))
    offset = rng.choice((-40, -3, -1, 0, 1, 2, 30)) * DAY_MS + rng.randrange(0, DAY_MS)
    when = now + offset
    if rng.random() < 0.5:
        return when
    from datetime import UTC, datetime

    moment = datetime.fromtimestamp(when / 1000, tz=UTC)
    return moment.date().isoformat() if rng.random() < 0.5 else moment.isoformat()


def _text(rng: random.Random, longest: int = 6) -> str:
    if rng.random() < 0.1:  # long enough to fill the session context's budget
        longest = rng.choice((300, 800))
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, longest)))


def _save(rng: random.Random, seen: _Seen, now: int) -> dict[str, Any]:
    if seen.saves and rng.random() < 0.2:  # a duplicate of an earlier save
        return dict(rng.choice(seen.saves))
    args: dict[str, Any] = {"text": _text(rng)}
    if rng.random() < 0.5:
        args["title"] = _text(rng)[:400]
    if rng.random() < 0.4:
        args["project"] = rng.choice(PROJECTS)
    if rng.random() < 0.5:
        args["type"] = rng.choice(TYPES)
    if rng.random() < seen.pinning:
        args["pinned"] = True
        # long lines: enough pinned ones overrun the session context's budget
        if rng.random() < seen.pinning + 0.2:
            args["title"] = " ".join(rng.choice(WORDS) for _ in range(60))[:400]
    if rng.random() < 0.5:
        facts = []
        for _ in range(rng.randint(1, 2)):
            fact: dict[str, Any] = {
                "subject": rng.choice(SUBJECTS),
                "predicate": rng.choice(PREDICATES),
                "object": rng.choice(("15", "16", "17", "6379")),
            }
            if rng.random() < 0.6:
                fact["valid_from"] = _date(rng, now, seen)
                if isinstance(fact["valid_from"], int):
                    seen.instants.append(fact["valid_from"])
            facts.append(fact)
        args["facts"] = facts
    if rng.random() < 0.3:
        args["files"] = rng.sample(FILES, rng.randint(1, 2))
    seen.saves.append(args)
    seen.instants.append(now)
    return args


def _search(rng: random.Random, now: int, seen: _Seen) -> dict[str, Any]:
    args: dict[str, Any] = {}
    if rng.random() < 0.15:
        args["file"] = rng.choice((*FILES, "redis.py", "README.md"))
        if rng.random() < 0.5:
            args["file_suffix"] = True
    else:
        args["query"] = " ".join(rng.choice(QUERIES) for _ in range(rng.randint(1, 2)))
    options: dict[str, Callable[[], Any]] = {
        "project": lambda: rng.choice((*PROJECTS, "*")),
        "type": lambda: rng.choice(TYPES),
        "kind": lambda: rng.choice(KINDS),
        "limit": lambda: rng.randint(1, 5),
        "offset": lambda: rng.randint(0, 4),
        "since": lambda: _date(rng, now, seen),
        "until": lambda: _date(rng, now, seen),
        "older_than_days": lambda: rng.choice((0, 1, 2.5, 10)),
        "order": lambda: rng.choice(("relevance", "date_desc", "date_asc")),
    }
    for name, make in options.items():
        if rng.random() < 0.25:
            args[name] = make()
    return args


def _item_id(rng: random.Random, seen: _Seen) -> int:
    return rng.randint(1, max(2, len(seen.saves) + 1))


def _call(rng: random.Random, seen: _Seen, now: int) -> tuple[str, dict[str, Any]]:
    tool = rng.choices(
        (
            "save_memory", "search", "timeline", "get_observations", "fact_history",
            "list_rules", "work_state_read", "work_state_write", "add_rule", "confirm_rule",
            "dismiss_memory", "restore_memory", "session_start_context", HOOK_OBSERVATION,
            HOOK_REQUEST,
        ),
        weights=(8, 6, 2, 2, 3, 1, 1, 2, 2, 1, 3, 3, 2, 2, 2),
    )[0]  # fmt: skip
    if tool == HOOK_OBSERVATION:
        return tool, {
            "text": _text(rng),
            "project": rng.choice(PROJECTS),
            "kind": rng.choice(("observation", "summary")),
            "narrative": _text(rng) if rng.random() < 0.5 else None,
            "files": list(rng.sample(FILES, rng.randint(0, 2))),
        }
    if tool == HOOK_REQUEST:
        return tool, {
            "project": rng.choice(PROJECTS),
            "session_id": rng.choice((None, "s1", "s2")),
            "prompt": _text(rng),
            "end": rng.random() < 0.2,
        }
    if tool == "save_memory":
        return tool, _save(rng, seen, now)
    if tool == "search":
        return tool, _search(rng, now, seen)
    if tool == "timeline":
        args: dict[str, Any] = {"anchor": _item_id(rng, seen) - rng.choice((0, 0, 0, 2))}
        if rng.random() < 0.3:
            args = {"query": rng.choice(WORDS)}
        if rng.random() < 0.3:
            args["project"] = rng.choice(PROJECTS)
        args.update(before=rng.randint(0, 3), after=rng.randint(0, 3))
        return tool, args
    if tool == "get_observations":
        ids = [rng.randint(-1, len(seen.saves) + 1) for _ in range(rng.randint(1, 4))]
        return tool, {"ids": ids}
    if tool == "fact_history":
        args = {"subject": rng.choice((*SUBJECTS, "Redis", " redis "))}
        if rng.random() < 0.3:
            args["predicate"] = rng.choice(PREDICATES)
        if rng.random() < 0.2:
            args["project"] = rng.choice(PROJECTS)
        if rng.random() < 0.3:
            args["as_of"] = _date(rng, now, seen)
        if rng.random() < 0.4:
            args["include_superseded"] = True
        return tool, args
    if tool == "list_rules":
        return tool, {}
    if tool == "work_state_read":
        return tool, {"list": rng.choice(("todo", "done")), "project": rng.choice(PROJECTS)}
    if tool == "work_state_write":
        items = [rng.choice(("fix SHOP-4821", 3, True, {"task": "deploy"})) for _ in range(3)]
        return tool, {
            "list": rng.choice(("todo", "done", " todo ")),
            "items": items[: rng.randint(0, 3)],
            "project": rng.choice(PROJECTS),
        }
    if tool == "add_rule":
        args = {"then": rng.choice(RULE_TEXT)}
        if rng.random() < 0.3:
            args["when"] = "deploying"
        if rng.random() < 0.3:
            args["scopeTier"], args["scopeName"] = "project", rng.choice(PROJECTS)
        if rng.random() < 0.5:
            args["evidence_memory_ids"] = [_item_id(rng, seen)]
        if rng.random() < 0.3:
            args["evidence_fact_ids"] = [rng.randint(1, 4)]
        return tool, args
    if tool == "confirm_rule":
        return tool, {"id": rng.choice(seen.rules) if seen.rules else "r_0000000000"}
    if tool == "session_start_context":
        args = {}
        if rng.random() < 0.3:
            args["project"] = rng.choice(PROJECTS)
        if rng.random() < 0.3:
            args["limit"] = rng.randint(1, 5)
        return tool, args
    item_type = rng.choice(("memory", "memory", "fact", "observation", "episode"))
    facts = sum(len(save.get("facts", ())) for save in seen.saves)
    args = {"id": rng.randint(1, facts + 1) if item_type == "fact" else _item_id(rng, seen)}
    if item_type != "memory" or rng.random() < 0.3:
        args["type"] = item_type
    if tool == "dismiss_memory" and rng.random() < 0.5:
        args["reason"] = "duplicate"
    return tool, args


def sequence(seed: int, steps: int) -> list[Call]:
    """A seeded random sequence of valid tool calls."""
    rng = random.Random(seed)
    seen = _Seen(pinning=rng.choice((0.1, 0.3, 0.9)))
    now = FakeClock().now
    calls: list[Call] = []
    for _ in range(steps):
        move = rng.choice((0, 0, 1000, 3_600_000, DAY_MS, 3 * DAY_MS))
        now += move
        tool, args = _call(rng, seen, now)
        calls.append((tool, args, move))
    return calls


_RULE_ID = re.compile(r"r_[0-9a-f]{10}")


def replay(app: AppContext, clock: FakeClock, calls: list[Call]) -> Iterator[ToolResult]:
    """Each call's result, the clock moved before it as the sequence says."""
    rules: list[str] = []
    for tool, args, move in calls:
        clock.advance(move)
        if tool == "confirm_rule" and rules and args["id"] == "r_0000000000":
            args = {"id": rules[-1]}
        result = (
            _hook(app, tool, args)
            if tool.startswith("hook:")
            else call_tool(app, TOOLS_BY_NAME[tool], args)
        )
        rules.extend(_RULE_ID.findall(result.text) if tool == "add_rule" else ())
        yield result


def _hook(app: AppContext, tool: str, args: dict[str, Any]) -> ToolResult:
    """What a hook does, by the domain functions it calls, its outcome as a result."""
    now = app.clock()
    args = {**args, "project": normalize_project(args["project"])}  # as a directory gives it
    if tool == HOOK_OBSERVATION:
        item = memories.MemoryInput(tool="claude-code", **args)
        memory, created = memories.save_memory(app.store, app.clock, item)
        return ToolResult(f"{memory.id} {created}")
    where = {"project": args["project"], "tool": "claude-code", "session_id": args["session_id"]}
    recorded = episodes.record_request(app.store, prompt=args["prompt"], now=now, **where)
    ended = args["end"] and episodes.end_episode(app.store, now=now, **where)
    return ToolResult(f"{recorded} {ended}")


def first_difference(
    open_pair: OpenPair,
    calls: list[Call],
) -> tuple[int, ToolResult, ToolResult] | None:
    """The first call whose results differ between the two stores: (index, left, right)."""
    left, left_clock, right, right_clock = open_pair()
    pairs = zip(replay(left, left_clock, calls), replay(right, right_clock, calls), strict=True)
    for index, (a, b) in enumerate(pairs):
        if a != b:
            return index, a, b
    return None


def shrink(
    open_pair: OpenPair,
    calls: list[Call],
) -> list[Call]:
    """A shorter sequence that still differs: calls after the first difference dropped, then
    each earlier call dropped while the difference stays."""
    found = first_difference(open_pair, calls)
    assert found is not None
    calls = calls[: found[0] + 1]
    index = len(calls) - 2
    while index >= 0:
        trial = calls[:index] + calls[index + 1 :]
        if trial:
            # the dropped call's clock move stays, so later times do not change
            if index < len(trial):
                tool, args, move = trial[index]
                trial[index] = (tool, args, move + calls[index][2])
            if first_difference(open_pair, trial) is not None:
                calls = trial
        index -= 1
    return calls
