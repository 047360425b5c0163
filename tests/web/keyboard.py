"""Keyboard checks for the browser tests: Tab reaches every control in order, each with a
visible focus ring, and a control is activated the way a keyboard user would."""

from __future__ import annotations

from collections.abc import Callable

from playwright.sync_api import Locator, Page

MAX_TABS = 200
# Every control a keyboard user must reach: visible, enabled, not taken out of the tab order.
MARK_CONTROLS = """() => {
  const found = [...document.querySelectorAll(
    "a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]"
  )].filter((el) => el.tabIndex >= 0 && !el.disabled && el.getClientRects().length > 0
    && getComputedStyle(el).visibility !== "hidden");
  found.forEach((el, index) => { el.dataset.kb = String(index); });
  return found.length;
}"""
# The focused control's mark, and whether its focus shows (an outline or a shadow).
FOCUSED = """() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const ring = (style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0)
    || style.boxShadow !== "none";
  return { mark: el.dataset.kb ?? null, ring, text: el.outerHTML.slice(0, 120) };
}"""


def tab_through(page: Page) -> list[int]:
    """Walk a freshly loaded page with Tab and Shift+Tab; returns the marks reached, from the
    first control of the page.

    Asserts that Tab reaches every control in the order of the page, from the control that took
    the focus on load (or the first) to the last, that Shift+Tab reaches the ones before it in
    reverse, and that each shows a focus ring. A date field's parts (month, day, year) are Tab
    stops of one control. The walk never goes round past the page's end: there Chromium hands
    the focus to the browser and back, and a Tab pressed while it comes back lands past the
    first control.
    """
    count = int(page.evaluate(MARK_CONTROLS))
    start = _mark(page)  # an autofocus field
    if start is None:
        page.keyboard.press("Tab")
        start = _mark(page)
        assert start == 0, f"the first Tab of the page reached {start}, not the first control"
    forward = [start, *_walk(page, "Tab", lambda mark, last: mark > last, start)]
    page.evaluate("(mark) => document.querySelector(`[data-kb='${mark}']`).focus()", start)
    backward = _walk(page, "Shift+Tab", lambda mark, last: mark < last, start)
    reached = [*reversed(backward), *forward]
    assert reached == list(range(count)), f"tab order {reached}, expected {count} controls"
    return reached


def _walk(page: Page, key: str, onward: Callable[[int, int], bool], start: int) -> list[int]:
    """Press ``key`` until the focus leaves the page or goes round; the marks reached on the way."""
    reached: list[int] = []
    last = start
    for _ in range(MAX_TABS):
        page.keyboard.press(key)
        mark = _mark(page)
        if mark == last:
            continue  # the next part of a date field
        if mark is None or not onward(mark, last):
            return reached
        reached.append(mark)
        last = mark
    raise AssertionError(f"{key} never left the page")


def _mark(page: Page) -> int | None:
    """The focused control's mark (None when nothing on the page has the focus)."""
    focused = page.evaluate(FOCUSED)
    if focused is None:
        return None
    assert focused["mark"] is not None, f"focus on an unlisted element: {focused['text']}"
    assert focused["ring"], f"no visible focus on {focused['text']}"
    return int(focused["mark"])


def tab_to(page: Page, target: Locator) -> None:
    """Press Tab (round the page if need be) until ``target`` has the focus."""
    handle = target.element_handle()
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if page.evaluate("(el) => document.activeElement === el", handle):
            return
    raise AssertionError(f"Tab never reached {target}")
