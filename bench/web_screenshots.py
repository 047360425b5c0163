"""Screenshots of each web UI page into docs/screenshots/: ``python bench/web_screenshots.py``.

Seeds a small demo store through the JSON API of a real ``aletheia-server``, starts a real
``aletheia-sync`` hub with an admin token, and photographs each page in Debian's Chromium.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from playwright.sync_api import Page, sync_playwright

from aletheia_mem.clock import system_clock
from aletheia_mem.config import DB_FILE_NAME
from aletheia_mem.domain.repositories import note_repository
from aletheia_mem.hub.tokens import create_token
from aletheia_mem.storage.entries import AuditEntry
from aletheia_mem.storage.sqlite import SqliteStore
from http_bench import start_server
from web_bench import CHROMIUM, CHROMIUM_ARGS

OUT = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
MEMORIES = [
    (
        "decision",
        "Billing moved from MySQL to Postgres 16",
        "We moved billing to Postgres 16 for"
        " row-level security; MySQL 5.7 is read-only until March.",
        ["billing/db.py"],
    ),
    (
        "gotcha",
        "pnpm, not npm, in the shop repo",
        "npm install breaks the workspace links; always run pnpm install at the root.",
        ["package.json", "pnpm-lock.yaml"],
    ),
    (
        "bugfix",
        "Fixed flaky checkout test",
        "The checkout test raced the cart cache; it now waits for the cache-warmed event.",
        ["tests/test_checkout.py"],
    ),
    ("discovery", "Staging runs on port 8081", "Staging's gateway listens on 8081, not 8080.", []),
    (
        "feature",
        "Gift cards in checkout",
        "Gift cards are applied before tax; see ADR 14.",
        ["checkout/gift_cards.py"],
    ),
    ("note", "Release train: Tuesdays", "Releases leave on Tuesdays at 10:00 UTC.", []),
]


def api(url: str, method: str, path: str, body: object) -> object:
    request = urllib.request.Request(  # noqa: S310  (the demo server's own URL)
        url + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310
        return json.loads(answer.read())


def seed(url: str) -> None:
    for kind, title, text, files in MEMORIES:
        api(
            url,
            "POST",
            "/api/memories",
            {"type": kind, "title": title, "text": text, "files": files},
        )
        time.sleep(0.01)
    api(
        url,
        "POST",
        "/api/facts",
        {
            "subject": "billing",
            "predicate": "database",
            "object": "MySQL 5.7",
            "valid_from": "2025-01-10",
        },
    )
    api(
        url,
        "POST",
        "/api/facts",
        {
            "subject": "billing",
            "predicate": "database",
            "object": "Postgres 16",
            "valid_from": "2026-06-01",
        },
    )
    api(
        url,
        "POST",
        "/api/facts",
        {
            "subject": "billing",
            "predicate": "owner",
            "object": "team-payments",
            "valid_from": "2025-03-01",
        },
    )
    api(
        url,
        "POST",
        "/api/rules",
        {
            "then": "Use pnpm, never npm",
            "scopeTier": "project",
            "scopeName": "shop",
            "evidence_memory_ids": [2],
        },
    )
    api(url, "POST", "/api/rules", {"then": "Run the linter before committing"})
    api(url, "POST", "/api/memories/4/pin", {"pinned": True})
    api(
        url,
        "PUT",
        "/api/work-state/todo",
        {"items": ["Write the gift-card migration", "Review PR 212", "Ship on Tuesday"]},
    )


def start_hub(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    argv = [sys.executable, "-m", "aletheia_mem.hub.main", "--hub-db", str(db), "--port", "0"]
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, env=dict(os.environ))
    assert process.stderr is not None
    seen, deadline = b"", time.monotonic() + 30
    while time.monotonic() < deadline:
        if select.select([process.stderr], [], [], 0.2)[0]:
            seen += os.read(process.stderr.fileno(), 4096)
            found = re.search(rb"listening on (http://\S+)", seen)
            if found:
                return process, found.group(1).decode()
    process.kill()
    raise SystemExit(f"the hub did not start: {seen!r}")


def shoot(page: Page, url: str, name: str) -> None:
    page.goto(url)
    page.screenshot(path=str(OUT / f"{name}.png"), full_page=True)
    print(f"docs/screenshots/{name}.png")


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="aletheia-shots-") as folder:
        data, cwd = Path(folder) / "data", Path(folder) / "shop"
        (cwd / ".git").mkdir(parents=True)
        (cwd / "CLAUDE.md").write_text("# Shop\n\nNotes for agents.\n", encoding="utf-8")
        server, port = start_server(data, cwd, 1)
        billing = Path(folder) / "billing"  # a repository a coding tool started in
        (billing / ".git").mkdir(parents=True)
        (billing / "AGENTS.md").write_text("# Billing\n", encoding="utf-8")
        memory = SqliteStore(data / DB_FILE_NAME)
        note_repository(memory.repositories(), billing, system_clock())
        memory.close()
        hub_db = Path(folder) / "hub.db"
        store = SqliteStore(hub_db)
        admin, _ = create_token(store, system_clock, scope="admin", projects=None, name="ops")
        create_token(store, system_clock, scope="sync", projects=("shop",), name="alice-laptop")
        now = system_clock()
        for tool, project, result in (
            ("search", "shop", "ok"),
            ("save_memory", "shop", "ok"),
            ("save_memory", "billing", "refused"),
        ):
            store.add_audit(AuditEntry(now, "alice-laptop", tool, project, result))
        store.close()
        hub, hub_url = start_hub(hub_db)
        url = f"http://127.0.0.1:{port}"
        try:
            seed(url)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
                )
                page = browser.new_page(viewport={"width": 1200, "height": 800})
                for name, path in (
                    ("memories", "/"),
                    ("memories-search", "/?q=billing&project=*"),
                    ("memory-detail", "/memories/1"),
                    ("facts", "/facts?subject=billing&as_of=2025-12-01"),
                    ("rules", "/rules"),
                    ("rules-write-to-tools", "/rules/sync"),
                    ("lists", "/lists?project=shop&name=todo"),
                    ("context", "/context?project=shop"),
                ):
                    shoot(page, url + path, name)
                page.goto(hub_url + "/sign-in")
                page.get_by_label("Admin token").fill(admin)
                page.get_by_role("button", name="Sign in").click()
                shoot(page, hub_url + "/tokens", "hub-tokens")
                shoot(page, hub_url + "/audit", "hub-audit")
                browser.close()
        finally:
            for process in (server, hub):
                process.send_signal(signal.SIGTERM)
                process.wait(timeout=15)
    return 0


if __name__ == "__main__":
    sys.exit(main())
