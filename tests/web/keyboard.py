"""Keyboard checks for the browser tests: Tab reaches every control in order, each with a
visible focus ring, and a control is activated the way a keyboard user would."""

from __future__ import annotations

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
    """Press Tab round a freshly loaded page until focus comes back where it started; returns
    the marks reached, from the first control of the page.

    Asserts that Tab reaches every control, in the order of the page (round from a control that
    took the focus on load), and that each shows a focus ring. A date field's parts (month, day,
    year) are Tab stops of one control.
    """
    count = int(page.evaluate(MARK_CONTROLS))
    reached: list[int] = []
    focused = page.evaluate(FOCUSED)  # an autofocus field
    for _ in range(MAX_TABS):
        if focused is not None:
            assert focused["mark"] is not None, f"focus on an unlisted element: {focused['text']}"
            assert focused["ring"], f"no visible focus on {focused['text']}"
            mark = int(focused["mark"])
            if reached and mark == reached[0] and len(reached) > 1:
                break  # round again
            if not reached or mark != reached[-1]:
                reached.append(mark)
        page.keyboard.press("Tab")
        focused = page.evaluate(FOCUSED)
    first = reached.index(0) if 0 in reached else 0
    reached = reached[first:] + reached[:first]
    assert reached == list(range(count)), f"tab order {reached}, expected {count} controls"
    return reached


def tab_to(page: Page, target: Locator) -> None:
    """Press Tab (round the page if need be) until ``target`` has the focus."""
    handle = target.element_handle()
    for _ in range(MAX_TABS):
        page.keyboard.press("Tab")
        if page.evaluate("(el) => document.activeElement === el", handle):
            return
    raise AssertionError(f"Tab never reached {target}")
