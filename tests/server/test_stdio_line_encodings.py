"""``parse_line`` reads a line in whichever encoding ``json.loads`` finds in bytes (RFC 8259's
UTF-8, 16 or 32, with or without a BOM), a UTF-8 object told at its first two bytes."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.server.stdio import parse_line

ENCODINGS = ["utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le"]
MESSAGE = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "søk"}}


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_an_object_line_reads_the_same_in_each_encoding(encoding: str) -> None:
    line = json.dumps(MESSAGE, ensure_ascii=False).encode(encoding)
    assert parse_line(line) == (MESSAGE, True)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=12).map(lambda tail: b"{" + tail))
def test_a_line_opening_an_object_reads_as_json_loads_reads_it(line: bytes) -> None:
    try:
        expected = (json.loads(line), True)
    except (ValueError, RecursionError):
        expected = (None, False)
    assert parse_line(line) == expected


def test_an_object_brace_then_nul_is_utf16_not_utf8() -> None:
    line = '{"a": 1}'.encode("utf-16-le")
    assert line[:2] == b"{\x00"
    assert parse_line(line) == ({"a": 1}, True)
