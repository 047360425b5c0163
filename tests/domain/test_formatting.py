"""one_line: whitespace runs become one space, the ends are trimmed, the recall tag is defused."""

from __future__ import annotations

import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain.formatting import neutralize, one_line


def _by_words(text: str) -> str:
    """The definition: split on any whitespace and join with single spaces."""
    return neutralize(" ".join(text.split()))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use pnpm", "Use pnpm"),
        ("  Use pnpm", "Use pnpm"),
        ("Use pnpm ", "Use pnpm"),
        ("Use  pnpm", "Use pnpm"),
        ("Use\tpnpm", "Use pnpm"),
        ("Use\npnpm", "Use pnpm"),
        ("Use\u00a0pnpm", "Use pnpm"),  # no-break space
        ("Use\u2028pnpm", "Use pnpm"),  # line separator
        ("Use\x1fpnpm", "Use pnpm"),  # str.split counts the unit separator as whitespace
        ("", ""),
        (" ", ""),
        ("<aletheia-memory>", "&lt;aletheia-memory>"),
        ("a </aletheia-memory> b", "a &lt;/aletheia-memory> b"),
    ],
)
def test_one_line_examples(text: str, expected: str) -> None:
    assert one_line(text) == expected


def test_one_line_of_every_character_between_words_is_as_by_words() -> None:
    for code in range(sys.maxunicode + 1):
        if 0xD800 <= code <= 0xDFFF:
            continue
        text = f"a{chr(code)}b"
        assert one_line(text) == _by_words(text), hex(code)


@settings(max_examples=500)
@given(st.text(alphabet=st.sampled_from("ab <>/\t\n\u00a0\u3000\x1c\u0085-aletheiamory")))
def test_one_line_is_as_by_words(text: str) -> None:
    assert one_line(text) == _by_words(text)


@settings(max_examples=300)
@given(st.lists(st.text(alphabet=st.sampled_from("ab \t\n\u00a0<>/-aletheiamory")), max_size=8))
def test_one_line_kept_from_an_earlier_call_is_as_by_words(texts: list[str]) -> None:
    for text in texts + texts:  # each again, as an equal but new string: from the kept ones
        again = "".join(list(text))
        assert one_line(text) == one_line(again) == _by_words(text)
