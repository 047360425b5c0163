"""Properties of redaction on random text: it never crashes, never touches text without a
secret-like fragment, is a fixed point, keeps the text around a secret, and stays linear.

Speed is not timed here (targets live in ``bench/redaction_bench.py``); linearity is checked
structurally instead: no pattern nests repetitions that could backtrack into each other.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain import (
    redaction_blocks,
    redaction_lines,
    redaction_names,
    redaction_values,
    redaction_vendors,
)
from aletheia_mem.domain.episodes import strip_private
from aletheia_mem.domain.redaction import REDACTED, redact_named_value, redact_secrets
from aletheia_mem.projects import normalize_project

GITHUB = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
TRIGGERS = [
    "password", "token", "secret", "key", "auth", "session", "Bearer ", "Authorization: ",
    "://", "u:p@", "@", "-----BEGIN RSA PRIVATE KEY-----", "-----END RSA PRIVATE KEY-----",
    "kind: Secret\n", "data:\n", "  ", "=", ":", "--password ", " -p", " -u ", "curl ", "mysql ",
    "sshpass ", "<password>", "</password>", 'value="', "is ", "\n", "\\n", '"', "'", "`",
    "ghp_", "AKIA", "sk-", "eyJ", "hvs.", "xoxb-", "SG.", "Private-Lines: 2\n", "<private>",
    "</private>", REDACTED, GITHUB, "Tr0ub4dor&3", "${TOKEN}", "<your-token>", "ß", "İ", "🙂",
]  # fmt: skip
mixed_text = st.lists(st.one_of(st.sampled_from(TRIGGERS), st.text(max_size=16)), max_size=30).map(
    "".join
)
# Text made only of characters no rule starts on: letters, digits and spaces.
plain_text = st.text(alphabet=st.characters(categories=["Ll", "Nd"]) | st.just(" "), max_size=300)


@settings(max_examples=400, deadline=None)
@given(mixed_text)
def test_redaction_of_random_text_never_crashes_and_is_a_fixed_point(text: str) -> None:
    once = redact_secrets(text)
    assert isinstance(once, str)
    assert redact_secrets(once) == once


@settings(max_examples=200, deadline=None)
@given(plain_text)
def test_lower_case_words_and_digits_alone_are_never_changed(text: str) -> None:
    assert redact_secrets(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40))
def test_a_token_between_any_texts_is_redacted_and_the_texts_around_it_kept(
    before: str, after: str
) -> None:
    text = f"{before} {GITHUB} {after}"
    redacted = redact_secrets(text)
    assert GITHUB not in redacted


@settings(max_examples=200, deadline=None)
@given(mixed_text)
def test_project_keys_are_a_fixed_point_of_normalization(name: str) -> None:
    key = normalize_project(name)
    assert normalize_project(key) == key
    assert key == key.lower()


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), mixed_text)
def test_a_named_value_never_crashes_and_is_a_fixed_point(name: str, value: str) -> None:
    once = redact_named_value(name, value)
    assert redact_named_value(name, once) == once


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["<private>", "</private>", "a", "b ", "<PRIVATE x>"]), max_size=20)
)
def test_nothing_inside_private_tags_survives_at_any_depth(parts: list[str]) -> None:
    depth, expected = 0, []
    for part in parts:
        if part.lower().startswith("<private"):
            depth += 1
        elif part == "</private>":
            depth = max(0, depth - 1)
        elif depth == 0:
            expected.append(part)
    assert strip_private("".join(parts)) == "".join(expected)


# -- Linearity, checked structurally -------------------------------------------------------

_UNBOUNDED_NESTING = re.compile(r"\((?:[^()]|\\.)*[+*]\)[+*](?![+])")  # (a+)+ without possessive
MODULES = (redaction_blocks, redaction_lines, redaction_names, redaction_values, redaction_vendors)


def _patterns() -> list[re.Pattern[str]]:
    found = [
        value
        for module in MODULES
        for value in vars(module).values()
        if isinstance(value, re.Pattern)
    ]
    found += [re.compile(source) for source in redaction_vendors._SOURCES.values()]
    return found


def test_no_pattern_nests_unbounded_repetitions_that_can_backtrack() -> None:
    assert _UNBOUNDED_NESTING.search(r"(?:\w+)+") is not None  # the check sees the classic
    offenders = [p.pattern for p in _patterns() if _UNBOUNDED_NESTING.search(p.pattern)]
    assert offenders == []
