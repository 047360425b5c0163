"""The benchmarks: each runs against the real ``aletheia-mcp`` process on a real SQLite store."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.projects import project_for_directory
from aletheia_mem.storage.sqlite import SqliteStore
from aletheia_mem.tools.app import AppContext
from aletheia_mem.tools.registry import TOOLS_BY_NAME, call_tool
from corpus import NoteWriter, queries
from stdio_client import StdioServer, initialize_line, request_line, server_env, tool_text
from store_builder import EPISODE_EVERY, REQUESTS_PER_EPISODE, build_store


@dataclass(frozen=True)
class Sizes:
    cold_runs: int
    saves: int
    queries: int
    context_memories: int
    context_calls: int


FULL = Sizes(cold_runs=20, saves=10_000, queries=200, context_memories=100_000, context_calls=50)
QUICK = Sizes(cold_runs=3, saves=300, queries=20, context_memories=2_000, context_calls=10)


@dataclass(frozen=True)
class Row:
    """One figure of the table. ``target`` None means the row is for information."""

    bench: str
    scale: str
    metric: str
    value: float
    unit: str
    target: float | None = None
    higher_is_better: bool = False

    @property
    def passed(self) -> bool | None:
        if self.target is None:
            return None
        if self.higher_is_better:
            return self.value >= self.target
        return self.value <= self.target


@dataclass
class Workspace:
    """Temp folders: a store and the working directory the server is started in."""

    root: Path

    def store_dir(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def cwd(self) -> Path:
        path = self.root / "bench-project"
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def project(self) -> str:
        return project_for_directory(self.cwd)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p95_ms(samples: list[float]) -> float:
    if len(samples) < 2:
        return samples[0] * 1000
    return statistics.quantiles(samples, n=100, method="inclusive")[94] * 1000


# -- cold start --------------------------------------------------------------------------------

COLD_START = "stdio cold start"
COLD_START_TARGET_MS = 150.0


def spawn_to_initialize(data_dir: Path, cwd: Path) -> float:
    """Seconds from spawning ``aletheia-mcp`` to reading its initialize reply."""
    with StdioServer(data_dir, cwd) as server:
        server.send(initialize_line())
        reply = server.receive()
        elapsed = time.perf_counter() - server.started
    if reply.get("result", {}).get("serverInfo", {}).get("name") != "aletheia":
        raise RuntimeError(f"unexpected initialize reply: {reply}")
    return elapsed


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "aletheia-bench", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def spawn_to_tool_list(data_dir: Path, cwd: Path, modern: bool) -> float:
    """Seconds from spawning ``aletheia-mcp`` to reading the tool list, as a dual-era client
    gets there: 2026-07-28 (discover, then stateless tools/list) or the fallback a legacy
    server makes it take (discover refused, initialize, initialized, tools/list)."""
    with StdioServer(data_dir, cwd) as server:
        if modern:
            server.send(request_line(1, "server/discover", {"_meta": MODERN_META}))
            server.receive()
            server.send(request_line(2, "tools/list", {"_meta": MODERN_META}))
        else:
            server.send(request_line(1, "server/discover", {}))  # -32601, as a legacy server
            server.receive()
            server.initialize()
            server.send(request_line(2, "tools/list", {}))
        reply = server.receive()
        elapsed = time.perf_counter() - server.started
    if len(reply.get("result", {}).get("tools", [])) != 13:
        raise RuntimeError(f"unexpected tools/list reply: {reply}")
    return elapsed


def bench_cold_start(work: Workspace, sizes: Sizes) -> list[Row]:
    data_dir = work.store_dir("cold")
    first = spawn_to_initialize(data_dir, work.cwd)  # creates and migrates the store
    samples = [spawn_to_initialize(data_dir, work.cwd) for _ in range(sizes.cold_runs)]
    modern, fallback = [], []
    for _ in range(sizes.cold_runs):  # interleaved, so that noise hits both alike
        modern.append(spawn_to_tool_list(data_dir, work.cwd, modern=True))
        fallback.append(spawn_to_tool_list(data_dir, work.cwd, modern=False))
    scale = f"{sizes.cold_runs} runs, existing store"
    to_list = "stdio cold start to tools/list"
    return [
        Row(COLD_START, scale, "median", median_ms(samples), "ms", COLD_START_TARGET_MS),
        Row(COLD_START, scale, "p95", p95_ms(samples), "ms"),
        Row(COLD_START, "1 run, new store", "first start", first * 1000, "ms"),
        Row(to_list, f"{scale}, 2026-07-28 client", "median", median_ms(modern), "ms"),
        Row(to_list, f"{scale}, fallback to initialize", "median", median_ms(fallback), "ms"),
    ]


def import_offenders(work: Workspace, count: int = 12) -> list[tuple[str, float, float]]:
    """``python -X importtime`` of the stdio server: (module, self ms, cumulative ms)."""
    completed = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import aletheia_mem.server.stdio"],
        capture_output=True,
        text=True,
        env=server_env(work.store_dir("cold"), work.cwd),
        timeout=60,
        check=True,
    )
    rows: list[tuple[str, float, float]] = []
    for line in completed.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) != 3 or not parts[0].strip().isdigit():
            continue
        rows.append((parts[2].strip(), int(parts[0]) / 1000, int(parts[1]) / 1000))
    return sorted(rows, key=lambda row: row[1], reverse=True)[:count]


# -- save_memory and search over stdio ---------------------------------------------------------

SAVES_PER_S_TARGET = 1500.0
SEARCH_P50_TARGET_MS = 2.0


def fill_over_stdio(server: StdioServer, count: int) -> float:
    """Pipeline ``count`` distinct save_memory calls; the seconds from first send to last reply."""
    writer = NoteWriter()
    lines = [server.call_line("save_memory", note.arguments()) for note in writer.notes(count)]
    started = time.perf_counter()
    replies = server.pipeline(lines)
    elapsed = time.perf_counter() - started
    for reply in replies:
        text = tool_text(reply)
        if not text.startswith("Saved as #"):
            raise RuntimeError(f"save_memory did not create a memory: {text}")
    return elapsed


def bench_save(work: Workspace, sizes: Sizes) -> list[Row]:
    with StdioServer(work.store_dir("tenk"), work.cwd) as server:
        server.initialize()
        elapsed = fill_over_stdio(server, sizes.saves)
    scale = f"{sizes.saves:,} memories, pipelined"
    rate = sizes.saves / elapsed
    return [
        Row(
            "save_memory over stdio", scale, "throughput", rate, "saves/s", SAVES_PER_S_TARGET, True
        ),
        Row("save_memory over stdio", scale, "mean per save", elapsed / sizes.saves * 1000, "ms"),
    ]


def bench_search(work: Workspace, sizes: Sizes) -> list[Row]:
    data_dir = work.store_dir("tenk")
    if not (data_dir / DB_FILE_NAME).exists():
        with StdioServer(data_dir, work.cwd) as server:
            server.initialize()
            fill_over_stdio(server, sizes.saves)
    texts = queries(sizes.queries)
    samples: list[float] = []
    hits = 0
    with StdioServer(data_dir, work.cwd) as server:
        server.initialize()
        for text in texts[:10]:  # warm-up: page cache and prepared statements
            server.call("search", {"query": text})
        for text in texts:
            line = server.call_line("search", {"query": text})
            started = time.perf_counter()
            server.send(line)
            reply = server.receive()
            samples.append(time.perf_counter() - started)
            hits += not tool_text(reply).startswith("No matches.")
    scale = f"{sizes.saves:,} memories, {len(texts)} queries one at a time ({hits} with hits)"
    return [
        Row("search over stdio", scale, "p50", median_ms(samples), "ms", SEARCH_P50_TARGET_MS),
        Row("search over stdio", scale, "p95", p95_ms(samples), "ms"),
    ]


# -- session_start_context ----------------------------------------------------------------------

CONTEXT_TARGET_MS = 10.0


def bench_context(work: Workspace, sizes: Sizes) -> list[Row]:
    data_dir = work.store_dir("context")
    started = time.perf_counter()
    build_store(data_dir / DB_FILE_NAME, work.project, sizes.context_memories)
    built = time.perf_counter() - started
    requests = sizes.context_memories // EPISODE_EVERY * REQUESTS_PER_EPISODE
    scale = f"{sizes.context_memories:,} memories, {requests:,} requests"
    stdio = _time_calls_over_stdio(data_dir, work.cwd, sizes.context_calls)
    in_process = _time_calls_in_process(data_dir, work.project, sizes.context_calls)
    return [
        Row(
            "session_start_context over stdio",
            scale,
            "median",
            median_ms(stdio),
            "ms",
            CONTEXT_TARGET_MS,
        ),
        Row("session_start_context over stdio", scale, "p95", p95_ms(stdio), "ms"),
        Row("session_start_context in process", scale, "median", median_ms(in_process), "ms"),
        Row("store build (store API, a transaction per memory)", scale, "build time", built, "s"),
    ]


def _time_calls_over_stdio(data_dir: Path, cwd: Path, calls: int) -> list[float]:
    samples: list[float] = []
    with StdioServer(data_dir, cwd) as server:
        server.initialize()
        for _ in range(5):
            server.call("session_start_context", {})
        for _ in range(calls):
            line = server.call_line("session_start_context", {})
            started = time.perf_counter()
            server.send(line)
            reply = server.receive()
            samples.append(time.perf_counter() - started)
            if "## Recent" not in tool_text(reply):
                raise RuntimeError("session_start_context listed no recent memories")
    return samples


def _time_calls_in_process(data_dir: Path, project: str, calls: int) -> list[float]:
    store = SqliteStore(data_dir / DB_FILE_NAME)
    try:
        app = AppContext(store, time_ms, default_project=project, caller="bench")
        spec = TOOLS_BY_NAME["session_start_context"]
        samples: list[float] = []
        for index in range(calls + 5):
            started = time.perf_counter()
            result = call_tool(app, spec, {})
            if index >= 5:
                samples.append(time.perf_counter() - started)
            if result.is_error:
                raise RuntimeError(result.text)
        return samples
    finally:
        store.close()


def time_ms() -> int:
    return time.time_ns() // 1_000_000


BENCHES: dict[str, Callable[[Workspace, Sizes], list[Row]]] = {
    "cold_start": bench_cold_start,
    "save": bench_save,
    "search": bench_search,
    "context": bench_context,
}
