"""Web UI benchmark: ``python bench/web_bench.py [--memories 100000]``.

Builds a store (``store_builder``), starts the real ``aletheia-server`` and measures, for each
page of the UI: its server time (a keep-alive GET on 127.0.0.1, p50 and p95 of ``--rounds``
requests: the loopback round trip, so an upper bound of the time in the server), and its weight
(HTML plus the CSS and script it loads, uncompressed). Then, in Debian's Chromium driven by
Playwright, a search typed in the search box (the time from the request to the list redrawn), a
search submitted with Enter (from the key press to the results painted: the script fetches the
rows, no page load) and a results page opened as a link (a whole page load, by the browser's
Navigation Timing). Prints a markdown table with the targets.
"""

from __future__ import annotations

import argparse
import html
import http.client
import re
import signal
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, unquote

from aletheia_mem.config import DB_FILE_NAME
from http_bench import start_server
from store_builder import build_store

TARGET_SERVER_P50_MS = 30.0
TARGET_SEARCH_MS = 150.0
TARGET_WEIGHT_KB = 150.0
# A word thousands of memories hold (past the score budget): a search with several pages.
COMMON_WORD = "cache"
MORE_LINK = re.compile(r'<p id="more"[^>]*><a href="([^"]+)"')
ASSETS = ("/static/ui.css", "/static/ui.js")
CHROMIUM = "/usr/bin/chromium"
NAVIGATION_MS = (
    "(() => { const n = performance.getEntriesByType('navigation')[0];"
    " return n.domContentLoadedEventEnd - n.startTime; })()"
)
# From the Enter key's press to the frame after the results were put in the list.
ENTER_PROBE = """() => {
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    window.__enterAt = performance.now();
    delete document.documentElement.dataset.enterMs;
  }, true);
  new MutationObserver(() => {
    const at = window.__enterAt;
    if (at === undefined) return;
    window.__enterAt = undefined;
    requestAnimationFrame(() => setTimeout(() => {
      document.documentElement.dataset.enterMs = String(performance.now() - at);
    }));
  }).observe(document.body, { attributes: true, attributeFilter: ["data-searched"] });
}"""
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def pages(db: Path) -> list[tuple[str, str]]:
    """(label, path) of every page, with ids and words taken from the built store."""
    conn = sqlite3.connect(db)
    try:
        memory_id = conn.execute("SELECT max(id) FROM memories WHERE kind != 'work_state'")
        newest = int(memory_id.fetchone()[0])
        middle = newest // 2
        subject = conn.execute("SELECT subject FROM facts LIMIT 1").fetchone()[0]
        title = conn.execute("SELECT title FROM memories WHERE id = ?", (middle,)).fetchone()[0]
    finally:
        conn.close()
    word = quote(max(title.split(), key=len))
    subject = quote(subject)
    return [
        ("Memories (newest first)", "/"),
        ("Memories, search", f"/?q={word}"),
        ("Memories, search + filters", f"/?q={word}&project=shop&type=decision&order=date_desc"),
        ("Memories, search, a common word", f"/?q={COMMON_WORD}"),
        ("Memories, dismissed", "/?dismissed=1"),
        ("Memories, live-feed poll", f"/memories/rows?after={newest}"),
        ("Memories, search rows (script)", f"/memories/rows?q={word}"),
        ("Memory detail + timeline", f"/memories/{middle}"),
        ("Facts (current)", "/facts"),
        ("Facts, history of a subject", f"/facts?subject={subject}&as_of=2025-01-01"),
        ("Rules", "/rules"),
        ("Rules, Write to tools preview", "/rules/sync"),
        ("Lists", "/lists?project=shop&name=todo-0"),
        ("Context", "/context?project=shop"),
    ]


def timed_gets(port: int, path: str, rounds: int) -> tuple[list[float], bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times, body = [], b""
    try:
        for index in range(rounds + 3):
            started = time.perf_counter()
            conn.request("GET", path)
            response = conn.getresponse()
            body = response.read()
            elapsed = (time.perf_counter() - started) * 1000
            if response.status != 200:
                raise SystemExit(f"{path}: HTTP {response.status}: {body[:300]!r}")
            if index >= 3:  # the first few warm the caches
                times.append(elapsed)
    finally:
        conn.close()
    return times, body


def next_page(port: int, path: str) -> str:
    """The address of the More link of the page at ``path`` (its next page of results)."""
    found = MORE_LINK.search(timed_gets(port, path, 1)[1].decode())
    if found is None:
        raise SystemExit(f"{path}: no More link")
    return html.unescape(found.group(1))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def browser_search(url: str, words: list[str]) -> tuple[list[float], list[float], list[float]]:
    """Typed searches (request to list redrawn), Enter searches (key press to the results
    painted) and loads of a results page (as a shared link, or without script), in ms."""
    from playwright.sync_api import sync_playwright

    typed, entered, loaded = [], [], []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        page = browser.new_page()
        page.set_default_timeout(10_000)
        page.goto(url + "/")
        for word in words:
            page.evaluate("document.body.removeAttribute('data-searched')")
            page.get_by_role("searchbox").fill(word)
            page.wait_for_selector("body[data-searched]")
            typed.append(float(page.evaluate("+document.body.dataset.searchMs")))
        page.goto(url + "/")
        page.evaluate(ENTER_PROBE)
        for word in words:
            page.get_by_role("searchbox").fill(word)
            page.get_by_role("searchbox").press("Enter")
            page.wait_for_selector("html[data-enter-ms]", state="attached")
            entered.append(float(page.evaluate("+document.documentElement.dataset.enterMs")))
        for word in words:
            page.goto(f"{url}/?q={quote(word)}")
            # The browser's own clock: from the request to the page parsed and its script run
            # (Navigation Timing), without Playwright's own round trips.
            loaded.append(float(page.evaluate(NAVIGATION_MS)))
        browser.close()
    return typed, entered, loaded


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--store", type=Path, help="reuse (or build once into) this folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="aletheia-web-bench-") as folder:
        data = args.store or Path(folder) / "data"
        cwd = Path(folder) / "shop"
        cwd.mkdir()
        if not (data / DB_FILE_NAME).exists():
            built = time.perf_counter()
            build_store(data / DB_FILE_NAME, "shop", args.memories)
            print(f"built {args.memories:,} memories in {time.perf_counter() - built:.0f} s")
        process, port = start_server(data, cwd, 1)
        try:
            assets = sum(len(timed_gets(port, asset, 1)[1]) for asset in ASSETS)
            rows = []
            more = ("Memories, search, next page (More)", next_page(port, f"/?q={COMMON_WORD}"))
            for label, path in [*pages(data / DB_FILE_NAME), more]:
                times, body = timed_gets(port, path, args.rounds)
                weight = len(body) + (assets if not path.startswith("/memories/rows") else 0)
                rows.append((label, statistics.median(times), percentile(times, 0.95), weight))
            words = [unquote(path.split("q=")[1]) for _, path in pages(data / DB_FILE_NAME)[1:2]]
            words += ["deploy", "cache", "token", "migration", "retry", "index", "queue"]
            typed, entered, loaded = browser_search(f"http://127.0.0.1:{port}", words)
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(timeout=15)
    print(table(args.memories, rows, typed, entered, loaded))
    return 0


def table(
    memories: int,
    rows: list[tuple[str, float, float, int]],
    typed: list[float],
    entered: list[float],
    loaded: list[float],
) -> str:
    lines = [
        f"Web UI, {memories:,} memories, 1 server worker",
        "",
        "| page | server p50 ms | p95 ms | weight KB | p50 <= 30 ms | weight <= 150 KB |",
        "| --- | ---: | ---: | ---: | --- | --- |",
    ]
    for label, p50, p95, weight in rows:
        kb = weight / 1024
        lines.append(
            f"| {label} | {p50:.1f} | {p95:.1f} | {kb:.1f} |"
            f" {'pass' if p50 <= TARGET_SERVER_P50_MS else 'FAIL'} |"
            f" {'pass' if kb <= TARGET_WEIGHT_KB else 'FAIL'} |"
        )
    lines += [
        "",
        "| browser search (Chromium) | p50 ms | max ms | target |",
        "| --- | ---: | ---: | --- |",
    ]
    for label, times in (
        ("typed: request to list redrawn", typed),
        ("Enter: key press to results painted", entered),
        ("results page loaded as a link (Navigation Timing)", loaded),
    ):
        p50 = statistics.median(times)
        verdict = "pass" if p50 <= TARGET_SEARCH_MS else "FAIL"
        lines.append(f"| {label} | {p50:.0f} | {max(times):.0f} | <= 150 ms: {verdict} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
