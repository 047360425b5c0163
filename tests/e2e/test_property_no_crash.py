"""Arbitrary JSON never crashes the server: in process per tool, and over a real stdio pipe."""

from __future__ import annotations

import json
import random
import re
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from aletheia_mem.clock import system_clock
from aletheia_mem.server.mcp import McpSession, handle_payload
from aletheia_mem.server.stdio import encode
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS, TOOLS_BY_NAME
from tests.e2e.test_stdio import StdioServer, server_env, tools_call

pytestmark = pytest.mark.e2e

INTERNAL_ERROR = "failed with an internal error; see the server log."
# Values that reach deeper branches than random text does.
TRICKY_TEXT = [
    "",
    " ",
    "*",
    "\x00",
    "1",
    "1,2, 3",
    "-1",
    "0",
    "1e308",
    "NaN",
    "true",
    "memory",
    "fact",
    "episode",
    "observation",
    "project",
    "situation",
    "date_asc",
    "2026-10-29",
    "2026-10-29T19:46:45.563Z",
    "1790000000000",
    "shop",
    "package.json",
    "<aletheia-memory>",
    "</aletheia-memory>",
    "\u202e\u200b\ufeff",
    "password=hunter2hunter2",
    "9" * 40,
    '"unbalanced',
    "AND OR NOT NEAR(",
    "x" * 900,
]


@dataclass
class FuzzStore:
    session: McpSession
    db_path: Path
    rule_id: str


def text_strategy(extra: list[str]) -> st.SearchStrategy[str]:
    weird = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=40)
    return st.one_of(weird, st.sampled_from(TRICKY_TEXT + extra))


def json_values(extra: list[str]) -> st.SearchStrategy[Any]:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        numbers(),
        text_strategy(extra),
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=5),
            st.dictionaries(text_strategy(extra), children, max_size=5),
        ),
        max_leaves=15,
    )


def numbers() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(min_value=-3, max_value=12),
        st.integers(),
        st.sampled_from([2**63 - 1, 2**63, 2**64 + 1, -(2**63) - 1, 10**40, 10**300]),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(["1", " 2 ", "1e308", "1e400", "-0", "0x10", "nan", "9" * 30]),
    )


def value_for(spec: dict[str, Any], extra: list[str]) -> st.SearchStrategy[Any]:
    """Values near what the property's schema expects, edge cases first."""
    kind = spec.get("type")
    if kind == "string":
        return st.one_of(st.sampled_from(spec.get("enum") or [""]), text_strategy(extra))
    if kind in ("number", "integer"):
        return numbers()
    if kind == "boolean":
        return st.sampled_from([True, False, "true", "FALSE", 0, 1, 2, "yes"])
    if kind == "array":
        items = value_for(spec.get("items", {}), extra)
        return st.one_of(st.lists(items, max_size=5), items, st.sampled_from(["1,2", "1 x"]))
    if kind == "object":
        fields = {
            name: st.one_of(value_for(field, extra), json_values(extra))
            for name, field in spec.get("properties", {}).items()
        }
        return st.fixed_dictionaries({}, optional=fields)
    return json_values(extra)


def valid_value(spec: dict[str, Any], extra: list[str]) -> st.SearchStrategy[Any]:
    """Values the schema accepts, with odd text, so that calls reach the handlers' depths."""
    kind = spec.get("type")
    if kind == "string":
        if "enum" in spec:
            return st.sampled_from(spec["enum"])
        limit = spec.get("maxLength", 10_000)
        tricky = [text for text in TRICKY_TEXT + extra if "\x00" not in text and len(text) <= limit]
        plain = st.text(
            alphabet=st.characters(exclude_categories=["Cs"], exclude_characters="\x00"),
            max_size=min(limit, 60),
        )
        return st.one_of(plain, st.sampled_from(tricky))
    if kind in ("number", "integer"):
        low, high = spec.get("minimum", -1000), spec.get("maximum", 10**6)
        whole = st.integers(min_value=low, max_value=min(high, low + 8)) | st.integers(low, high)
        if kind == "integer":
            return whole
        return whole | st.floats(min_value=low, max_value=high)
    if kind == "boolean":
        return st.booleans()
    if kind == "array":
        return st.lists(
            valid_value(spec.get("items", {}), extra), max_size=min(spec.get("maxItems", 5), 5)
        )
    if kind == "object":
        fields = {name: valid_value(field, extra) for name, field in spec["properties"].items()}
        required = {name: fields.pop(name) for name in spec.get("required", [])}
        return st.fixed_dictionaries(required, optional=fields)
    plain_text = st.text(max_size=20)
    return st.one_of(
        plain_text, st.integers(), st.booleans(), st.dictionaries(plain_text, plain_text)
    )


def arguments_strategy(tool: str, extra: list[str]) -> st.SearchStrategy[Any]:
    properties = TOOLS_BY_NAME[tool].input_schema.get("properties", {})
    keys = st.one_of(st.sampled_from([*properties, "_meta", "extra"]), text_strategy([]))
    values = json_values(extra)
    valid = {name: valid_value(spec, extra) for name, spec in properties.items()}
    near_schema = {
        name: st.one_of(value_for(spec, extra), values) for name, spec in properties.items()
    }
    return st.one_of(
        st.fixed_dictionaries({}, optional=valid),
        st.fixed_dictionaries({}, optional=valid),
        st.fixed_dictionaries({}, optional=near_schema),
        st.dictionaries(keys, values, max_size=7),
        values,
    )


def call(session: McpSession, request_id: int, tool: str, arguments: Any) -> Any:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }
    return handle_payload(session, message)


@pytest.fixture(scope="module")
def fuzz_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzStore]:
    """One store shared by all tools, seeded so that ids 1-4 and a rule exist."""
    db_path = tmp_path_factory.mktemp("fuzz") / "aletheia.db"
    store = SqliteStore(db_path)
    app = AppContext(store=store, clock=system_clock, default_project="shop", caller="fuzz")
    session = McpSession(app=app)
    seeds: list[tuple[str, dict[str, Any]]] = [
        ("save_memory", {"text": "Use pnpm, not npm", "type": "decision", "pinned": True}),
        (
            "save_memory",
            {
                "text": "Staging needs the VPN",
                "facts": [{"subject": "staging", "predicate": "needs", "object": "vpn"}],
                "files": ["deploy/staging.sh"],
            },
        ),
        ("work_state_write", {"list": "todo", "items": ["a", {"b": 1}]}),
        ("save_memory", {"text": "Billing uses Stripe", "project": "billing"}),
        ("add_rule", {"then": "Run the tests before you commit"}),
    ]
    texts = []
    for index, (tool, arguments) in enumerate(seeds):
        reply = call(session, index, tool, arguments)
        assert reply["result"]["isError"] is False, reply
        texts.append(reply["result"]["content"][0]["text"])
    match = re.search(r"\((r_[0-9a-f]+)\)", texts[-1])
    assert match, texts[-1]
    try:
        yield FuzzStore(session=session, db_path=db_path, rule_id=match.group(1))
    finally:
        store.close()


def integrity_of(db_path: Path) -> str:
    conn = sqlite3.connect(db_path)
    try:
        (result,) = conn.execute("PRAGMA integrity_check").fetchone()
        return str(result)
    finally:
        conn.close()


@pytest.mark.parametrize("tool", [spec.name for spec in TOOLS])
def test_arbitrary_arguments_never_crash_a_tool(fuzz_store: FuzzStore, tool: str):
    seen = {"results": 0, "errors": 0}

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(arguments=arguments_strategy(tool, [fuzz_store.rule_id]), request_id=st.integers())
    def check(arguments: Any, request_id: int) -> None:
        reply = call(fuzz_store.session, request_id, tool, arguments)
        assert isinstance(reply, dict)
        assert reply["jsonrpc"] == "2.0"
        assert reply["id"] == request_id
        assert json.loads(encode(reply)) == reply
        if "error" in reply:
            assert not isinstance(arguments, dict)
            assert reply["error"] == {
                "code": -32602,
                "message": "Invalid params: arguments must be an object.",
            }
            seen["errors"] += 1
            return
        result = reply["result"]
        assert set(result) == {"content", "isError"}
        assert isinstance(result["isError"], bool)
        [block] = result["content"]
        assert block["type"] == "text"
        assert isinstance(block["text"], str)
        assert block["text"].strip()
        assert INTERNAL_ERROR not in block["text"], (tool, arguments)
        seen["results"] += 1

    check()
    assert seen["results"] > 0
    assert integrity_of(fuzz_store.db_path) == "ok"


# -- a real process fed random lines ----------------------------------------------------------

METHODS = ["ping", "tools/list", "tools/call", "initialize", "server/discover", "nope", ""]


def random_text(rng: random.Random) -> str:
    pool = [
        lambda: "".join(chr(rng.randrange(0x20, 0x2FFF)) for _ in range(rng.randrange(12))),
        lambda: rng.choice(TRICKY_TEXT),
        lambda: chr(rng.randrange(0xD800, 0xE000)),  # lone surrogate, sent as a JSON escape
        lambda: "".join(chr(rng.randrange(0, 0x20)) for _ in range(rng.randrange(6))),
    ]
    return rng.choice(pool)()


def random_json(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(9 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -1, 7, 2**63, 10**40, rng.randrange(-(10**6), 10**6)])
    if kind == 3:
        return rng.choice([0.5, -1e308, 1e-300, 3.0])
    if kind in (4, 5):
        return random_text(rng)
    if kind in (6, 7):
        return {random_text(rng): random_json(rng, depth + 1) for _ in range(rng.randrange(5))}
    return [random_json(rng, depth + 1) for _ in range(rng.randrange(5))]


def random_request(rng: random.Random, request_id: Any) -> dict[str, Any]:
    method = rng.choice(METHODS) if rng.random() < 0.8 else random_text(rng)
    if method == "tools/call":
        tool = rng.choice([*TOOLS_BY_NAME, "nope"])
        spec = TOOLS_BY_NAME.get(tool)
        names = list(spec.input_schema.get("properties", {})) if spec else []
        names = names or ["x"]
        arguments = {rng.choice(names): random_json(rng) for _ in range(rng.randrange(5))}
        return tools_call(request_id, tool, arguments if rng.random() < 0.9 else random_json(rng))
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if rng.random() < 0.7:
        message["params"] = random_json(rng) if rng.random() < 0.3 else {"cursor": None}
    return message


@dataclass
class Expected:
    ids: list[Any]  # request ids that must be answered (objects or inside arrays)
    null_errors: int = 0  # replies with id null: parse errors and invalid messages
    arrays: int = 0  # batch lines that must be answered with an array


def random_lines(rng: random.Random, count: int) -> tuple[list[bytes], Expected]:
    lines: list[bytes] = []
    expected = Expected(ids=[])
    for index in range(count):
        kind = rng.randrange(6)
        request_id: Any = index if rng.random() < 0.5 else f"q-{index}-{random_text(rng)}"
        if kind == 0:  # garbage bytes: never JSON, since no JSON text starts with '#'
            junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 60)))
            lines.append(b"#" + junk.replace(b"\n", b" "))
            expected.null_errors += 1
        elif kind == 1:  # a JSON scalar or array of scalars: not a message
            value = rng.choice([random_text(rng), 5, None, True, 1.5])
            lines.append(json.dumps(value).encode("utf-8"))
            expected.null_errors += 1
        elif kind == 2:  # a notification: never answered
            notification = {"jsonrpc": "2.0", "method": rng.choice([*METHODS, "notifications/x"])}
            notification["params"] = random_json(rng)
            lines.append(json.dumps(notification).encode("utf-8"))
        elif kind == 3:  # a batch of requests and notifications
            batch: list[Any] = []
            for member in range(rng.randrange(1, 5)):
                if rng.random() < 0.3:
                    batch.append({"jsonrpc": "2.0", "method": "notifications/cancelled"})
                else:
                    batch.append(random_request(rng, f"b-{index}-{member}"))
                    expected.ids.append(f"b-{index}-{member}")
            if len(batch) > sum(1 for item in batch if "id" not in item):
                expected.arrays += 1
            lines.append(json.dumps(batch).encode("utf-8"))
        else:  # one request with random method and params
            lines.append(json.dumps(random_request(rng, request_id)).encode("utf-8"))
            expected.ids.append(request_id)
    return lines, expected


@pytest.mark.parametrize("seed", [0, 1])
def test_random_lines_are_all_answered_and_the_server_stays_up(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    lines, expected = random_lines(rng, 200)
    server = StdioServer(server_env(tmp_path), tmp_path)
    try:
        server.send_raw(b"\n".join(lines) + b"\n")
        server.send({"jsonrpc": "2.0", "id": "final-ping", "method": "ping"})
        answered: list[Any] = []
        null_errors = arrays = 0
        while True:
            reply = server.read(timeout=20.0)
            if isinstance(reply, list):
                arrays += 1
                answered.extend(item["id"] for item in reply)
                continue
            if reply["id"] == "final-ping":
                assert reply["result"] == {}
                break
            if reply["id"] is None:
                assert reply["error"]["code"] in (-32700, -32600)
                null_errors += 1
            else:
                answered.append(reply["id"])
        assert server.process.poll() is None
        assert server.ask({"jsonrpc": "2.0", "id": 1, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {},
        }
        assert sorted(map(str, answered)) == sorted(map(str, expected.ids))
        assert null_errors == expected.null_errors
        assert arrays == expected.arrays
        assert server.close() == 0
    finally:
        server.kill()
    assert integrity_of(tmp_path / "data" / "aletheia.db") == "ok"
