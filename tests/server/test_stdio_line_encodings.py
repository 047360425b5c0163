"""``parse_line`` reads a line as UTF-8, every message's encoding (a byte order mark before it
ignored), and no other: a UTF-16 or UTF-32 line, which ``json.loads`` would guess, is no
message. A UTF-8 object is told at its first two bytes."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.server.stdio import parse_line

MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "søk"}}


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig"])
def test_an_object_line_in_utf8_reads_with_or_without_a_byte_order_mark(encoding: str) -> None:
    line = json.dumps(MESSAGE, ensure_ascii=False).encode(encoding)
    assert parse_line(line) == (MESSAGE, True)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"])
def test_an_object_line_in_utf16_or_utf32_is_no_message(encoding: str) -> None:
    line = json.dumps(MESSAGE, ensure_ascii=False).encode(encoding)
    assert parse_line(line) == (None, False)


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _as_utf8_json(line: bytes) -> tuple[object, bool]:
    """What a line is by RFC 8259's UTF-8 alone: its JSON value (no NaN nor Infinity, which
    JSON has not), or no message."""
    if not json.detect_encoding(line).startswith("utf-8"):
        return None, False
    try:
        text = line.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "surrogatepass")
        return json.loads(text, parse_constant=_no_constant), True
    except (ValueError, RecursionError):
        return None, False


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12).map(lambda tail: b"{" + tail))
def test_a_line_opening_an_object_reads_as_utf8_json(line: bytes) -> None:
    assert parse_line(line) == _as_utf8_json(line)


def test_an_object_brace_then_nul_is_utf16_so_no_message() -> None:
    line = '{"a": 1}'.encode("utf-16-le")
    assert line[:2] == b"{\x00"
    assert parse_line(line) == (None, False)
