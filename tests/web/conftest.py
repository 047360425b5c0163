"""Fixtures of the browser tests: one Chromium per module, a fresh page per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from tests.e2e.http_server import RunningServer, running_server
from tests.web.browser import AXE, CHROMIUM, WAIT_MS, launch

pytestmark = pytest.mark.e2e


# One Chromium per module: Playwright's sync API holds an event loop in this thread until it
# stops, and the anyio tests of other folders need the thread free of it.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists() or not AXE.exists():
        pytest.fail("Chromium or axe-core is missing: run `make web-test-deps` first.")
    with sync_playwright() as playwright:
        launched = launch(playwright)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context()
    context.set_default_timeout(WAIT_MS)
    opened = context.new_page()
    dialogs: list[str] = []
    opened.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        yield opened
    finally:
        context.close()
    assert dialogs == [], f"a page opened a dialog: {dialogs}"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A module's folder: the git repository ``shop`` the server runs in, and a home folder."""
    folder = tmp_path_factory.mktemp("web-repo")
    (folder / "shop" / ".git").mkdir(parents=True)
    (folder / "home").mkdir()
    return folder


@pytest.fixture(scope="module")
def server(root: Path) -> Iterator[RunningServer]:
    """A server in ``root/shop`` with ``root/home`` as its home folder."""
    with running_server(root, env={"HOME": str(root / "home")}) as running:
        yield running
