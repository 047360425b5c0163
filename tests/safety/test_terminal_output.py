"""Stored text never drives the terminal: escape sequences, carriage returns, C1 controls and
bidi overrides from memories, facts, rules and lists are printed as visible escapes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.safety.entry_points import run_command

# Clear the screen, write the clipboard (OSC 52), set the title, an OSC 8 link, a CR that
# overwrites the line, an 8-bit CSI, and a right-to-left override that reorders a name.
HOSTILE = (
    "\x1b[2J\x1b]52;c;cm0gLXJmIH4=\x07\x1b]0;pwned\x07\x1b]8;;https://evil.example\x1b\\link"
    "\x1b]8;;\x1b\\ ok\rFAKE \x9b31m red \u202egnp.exe\u202c end"
)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    for args in (
        ("save", f"Body line one {HOSTILE}\n\tindented line two", "--title", f"T {HOSTILE}"),
        ("facts", "add", "payments-api", "database", f"PostgreSQL {HOSTILE}"),
        ("rules", "add", f"Run the tests {HOSTILE}"),
        ("lists", "write", "todo", f"ship {HOSTILE}", "test hooks"),
    ):
        saved = run_command(home, "aletheia", *args)
        assert saved.returncode == 0, saved.stderr
    return home


VIEWS = {
    "show": ("show", "1"),
    "search": ("search", "body", "-p", "*"),
    "timeline": ("timeline", "1"),
    "context": ("context",),
    "facts": ("facts", "history", "payments-api"),
    "rules": ("rules", "list"),
    "lists": ("lists", "read", "todo"),
}


@pytest.mark.parametrize("view", list(VIEWS))
def test_stored_escape_sequences_are_printed_as_visible_text(home: Path, view: str) -> None:
    shown = run_command(home, "aletheia", *VIEWS[view])
    assert shown.returncode == 0, shown.stderr
    assert UNSAFE.findall(shown.stdout) == []
    # lists read shows each item as JSON, as work_state_read does: JSON's escapes
    osc = "\\u001b]52;c;cm0gLXJmIH4=\\u0007" if view == "lists" else "\\x1b]52;c;cm0gLXJmIH4=\\x07"
    assert osc in shown.stdout
    assert "\\u202egnp.exe" in shown.stdout


def test_a_multi_line_body_keeps_its_newlines_and_tabs(home: Path) -> None:
    shown = run_command(home, "aletheia", "show", "1").stdout
    assert "\n\tindented line two" in shown
    assert "ok\\rFAKE \\x9b31m red" in shown


def test_json_output_escapes_c1_and_bidi_characters_and_keeps_the_value(home: Path) -> None:
    shown = run_command(home, "aletheia", "show", "1", "--json")
    assert UNSAFE.findall(shown.stdout) == []
    assert json.loads(shown.stdout)[0]["title"] == f"T {HOSTILE}"
