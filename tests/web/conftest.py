"""Fixtures of the browser tests: one Chromium per module, a fresh page per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

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
