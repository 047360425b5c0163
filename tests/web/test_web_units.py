"""The UI's small defences, checked directly: redirects stay local, forms are bounded, and
the list editor keeps what it is given."""

from __future__ import annotations

import pytest

from aletheia_mem.web.base import safe_next, submitted
from aletheia_mem.web.lists import item_line, parse_lines
from aletheia_mem.web.render import ENV
from aletheia_mem.web.security import (
    MAX_FORM_FIELDS,
    SESSION_SECONDS,
    new_session_cookie,
    parse_form,
    session_cookie_valid,
)


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "/\\evil.example",
        "https://evil.example/",
        "javascript:alert(1)",
        "/memories/1\r\nSet-Cookie: x=1",
        "",
        None,
    ],
)
def test_a_return_address_that_could_leave_the_site_goes_home(target: str | None) -> None:
    assert safe_next(target) == "/"


def test_a_local_return_address_is_kept() -> None:
    assert safe_next("/memories/12?done=pin") == "/memories/12?done=pin"


def test_a_form_with_too_many_fields_is_read_as_empty() -> None:
    body = "&".join(f"f{n}=x" for n in range(MAX_FORM_FIELDS + 1)).encode()
    assert parse_form(body) == {}
    assert parse_form(b"csrf=abc&reason=%3Cb%3E") == {"csrf": "abc", "reason": "<b>"}


def test_the_list_editor_keeps_text_and_objects_line_by_line() -> None:
    items = ["plain", {"task": "x", "done": False}, "{not json"]
    text = "\n".join(item_line(item) for item in items)
    assert parse_lines(text + "\n\n  \n") == items
    assert parse_lines("[1, 2]\nnull\nNaN\n1e999") == ["[1, 2]", "null", "NaN", "1e999"]


def test_the_list_editor_gives_back_every_item_as_it_was() -> None:
    items = [
        "first line\nsecond line",
        "split\u2028here\x85too",
        '{"looks": "like an object"}',
        '"quoted"',
        "  padded  ",
        "",
        "42",
        42,
        2.5,
        True,
        {"task": "x", "done": False},
    ]
    text = "\n".join(item_line(item) for item in items)
    assert len(text.splitlines()) == len(items)
    assert parse_lines(text) == items
    assert [type(item) for item in parse_lines(text)] == [type(item) for item in items]


def test_the_list_editor_shows_control_and_format_characters_as_escapes_it_reads_back() -> None:
    hostile = "\u202eexe.txt\u2066 \u200b\u200d\u061c\x1b[31m\x00\x9b\U000e0041 end"
    items = [hostile, {"k": hostile}, "\\u202e is six characters", "caf\u00e9 \u6771\u4eac"]
    text = "\n".join(item_line(item) for item in items)
    assert parse_lines(text) == items
    assert all(char in "\n" or char.isprintable() for char in text), text
    assert item_line("caf\u00e9 \u6771\u4eac") == "caf\u00e9 \u6771\u4eac"  # letters stay letters


def test_every_value_a_template_prints_shows_its_control_characters_as_escapes() -> None:
    # Any template, also one written later: the rule is the environment's, not a filter's.
    template = ENV.from_string('<p title="{{ v }}">{{ v }} {{ v|upper }}</p><i>{{ v|exact }}</i>')
    html = template.render(v="a\u202eb<\x1b\u200b")
    assert html == (
        '<p title="a\\u202eb&lt;\\x1b\\u200b">'
        "a\\u202eb&lt;\\x1b\\u200b A\\u202eB&lt;\\x1b\\u200b</p>"
        "<i>a\u202eb&lt;\x1b\u200b</i>"
    )


@pytest.mark.parametrize("shown", ["Rule \\u202eexe", "Rule \u202eexe edited", ""])
def test_a_field_sent_back_as_shown_means_the_stored_value(shown: str) -> None:
    form = {"then": shown, "then.stored": "Rule \u202eexe"}
    assert submitted(form, "then") == ("Rule \u202eexe" if shown == "Rule \\u202eexe" else shown)
    assert submitted({"then": shown}, "then") == shown


def test_a_sign_in_cookie_ends_after_its_days_even_when_copied() -> None:
    now = 1_800_000_000.0
    cookie = new_session_cookie("key-1", now)
    assert session_cookie_valid("key-1", cookie, now + SESSION_SECONDS - 1)
    assert not session_cookie_valid("key-1", cookie, now + SESSION_SECONDS)
    assert not session_cookie_valid("key-2", cookie, now)  # another key signs all out
    nonce, expires, signature = cookie.split(".")
    later = f"{nonce}.{int(expires) + 10**6}.{signature}"
    assert not session_cookie_valid("key-1", later, now)  # the expiry is signed
    assert not session_cookie_valid("key-1", f"{nonce}.{signature}", now)  # the old form
    assert not session_cookie_valid("key-1", "\udce9.1.x", now)
