"""Texts made of one rule's anchor repeated are redacted without judging each repeat in full.

The shortcuts change no output: each is checked against the code it replaced (kept below) on
adversarial, generated and corpus texts. How fast they are is ``bench/redaction_adversarial.py``'s
figure; here the work skipped is counted instead.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain import (
    redaction_lines,
    redaction_names,
    redaction_values,
    redaction_vendors,
)
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.domain.redaction_names import Strength, compact, name_strength
from aletheia_mem.domain.redaction_values import redact_span
from aletheia_mem.domain.redaction_vendors import vendor_token_spans

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redaction_adversarial import UNITS
from redaction_corpus import load_corpus

LENGTH = 20_000


def _sized(unit: str, length: int = LENGTH) -> str:
    return (unit * (length // len(unit) + 1))[:length]


def reference_short_flag_is_secret(match: re.Match[str]) -> bool:
    """``redaction_lines._short_flag_is_secret`` before the program words were looked for."""
    head = redaction_lines._line_start(match.string, match.start())
    if match["flag"] == "a":
        return bool(match["gap"]) and redaction_lines._SPACED_A.search(head) is not None
    if match["flag"] == "w":
        return bool(match["gap"]) and redaction_lines._SPACED_W.search(head) is not None
    if not match["gap"]:
        return redaction_lines._ATTACHED_P.search(head) is not None
    if redaction_lines._SPACED_P.search(head) is not None:
        return True
    return redaction_lines._MONGO_COMMAND.search(head) is not None and not (
        redaction_lines._PORTS.fullmatch(match["secret"])
    )


def reference_is_literal_secret(name: str, value: str) -> bool:
    """``redaction_names.is_literal_secret`` before a weak name's entropy was checked first."""
    if len(value) < redaction_names._MIN_STRONG_LENGTH:
        return False
    strength = name_strength(name)
    if strength is Strength.NONE or redaction_names._BLANK.search(value):
        return False
    compact_name = compact(name)
    if (
        redaction_values.is_placeholder(value)
        or redaction_names._PATH.fullmatch(value)
        or (
            "/" in value
            and redaction_values.is_relative_path(value)
            and not redaction_values.is_random_path(value)
        )
        or redaction_names._COLOR.fullmatch(value)
        or compact_name.endswith(compact(value))
    ):
        return False
    if strength is Strength.STRONG:
        return not (
            compact_name in redaction_names._TOKEN_WORDS and redaction_values.is_model_name(value)
        )
    if redaction_values.is_identifier(value) and (
        compact_name == "key" or compact_name.endswith(redaction_names._ID_KEYS)
    ):
        return False
    if redaction_names._HEX_DIGEST.fullmatch(value) and compact_name.endswith(
        redaction_names._DIGEST_KEYS
    ):
        return False
    return redaction_values.is_high_entropy(value)


_COMMAND_PARTS = [
    "mysql", "mysqldump", "mariadb-dump", "xmysql", "sshpass", "docker", "podman", " login",
    "login", "helm", " repo add", "keytool", "mongo", "mongosh", "some-mongo", "redis-cli",
    "ldapsearch", "ldap", " -p", "-p", " -pS3cr3t!", " -a ", " -w ", " -P ", " ", "  ", "\n",
    "$ ", "sudo ", "|", ";", "x", "Tr0ub4dor&3", "27017:27017", '"q x"', "'s3cret'", "-",
]  # fmt: skip
_NAME_PARTS = [
    "key", "api_key", "password", "token", "session", "cache_key", "seed", "auth", "=", ": ",
    ":", '"', "'", " ", "\n", "&", ";", ")", "a", "Xq7vR2mK9pLw3ZtB8nYc", "==", "deadbeef" * 5,
    "hunter22", "export ", "self.", "value", "[", "]", "-", "_",
]  # fmt: skip


def _adversarial_texts() -> list[str]:
    texts = [_sized(unit) for unit in UNITS.values()]
    texts += [_sized(unit) for unit in ("mysql -pabc ", "amysql -pabc ", "docker x -p abc ")]
    texts += ["x" * 300 + " mysql -pS3cr3t!", "mongo" + " x" * 130 + " -p S3cr3t!"]
    return texts


def _corpus_texts() -> list[str]:
    return [case.text for case in load_corpus()]


def _short_flags_agree(text: str) -> None:
    for match in redaction_lines._SHORT_FLAG.finditer(text):
        value = redaction_lines._flag_value(match["secret"])
        old = reference_short_flag_is_secret(match) and len(value) >= 3
        new = len(value) >= 3 and redaction_lines._short_flag_is_secret(match)
        assert new == old, (text, match.start())
    if not redaction_lines._holds(text, redaction_lines._SHORT_FLAG_WORDS):
        assert not any(
            reference_short_flag_is_secret(match)
            for match in redaction_lines._SHORT_FLAG.finditer(text)
        )


def _assignments_agree(text: str) -> None:
    lower = redaction_names.lower_same_length(text)
    run_end = 0
    for match in redaction_names._ASSIGNMENT.finditer(lower):
        name = redaction_names._name_before(text, match.start())
        if match["bare"] is None:
            value = match["dq"] if match["dq"] is not None else match["sq"]
            assert redaction_names.is_literal_secret(name, value) == (
                reference_is_literal_secret(name, value)
            )
            continue
        start = match.start("bare")
        if start >= run_end:
            run_end = redaction_names._BARE_VALUE.match(text, start).end()  # type: ignore[union-attr]
        value = text[start : start + redaction_names._MAX_JUDGED_LENGTH]
        assert redaction_names.is_literal_secret(name, value) == (
            reference_is_literal_secret(name, value)
        )
        short = run_end - start < redaction_names._MIN_STRONG_LENGTH
        if name and short and text[run_end : run_end + 1] not in redaction_names._TAIL_STARTS:
            assert redaction_names._bare_secret_end(text, match, name, run_end) == 0


def reference_assignment_spans(text: str, lower: str) -> list[tuple[int, int]]:
    """``redaction_names._assignment_spans`` before a word after ":" was tested for a digit."""
    n = redaction_names
    spans: list[tuple[int, int]] = []
    done = run_end = 0
    for match in n._ASSIGNMENT.finditer(lower):
        if match["bare"] is None:
            start = match.start("dq" if match["dq"] is not None else "sq")
        else:
            start = match.start("bare")
            if start >= run_end:
                run_end = n._BARE_VALUE.match(text, start).end()  # type: ignore[union-attr]
            if run_end - start < n._MIN_STRONG_LENGTH and text[run_end : run_end + 1] not in (
                n._TAIL_STARTS
            ):
                continue
        name = n._name_before(text, match.start()) if start >= done else ""
        if not name:
            continue
        if match["bare"] is None:
            end = n._quoted_secret_end(text, match, name)
        else:
            end = n._bare_secret_end(text, match, name, run_end)
        if end and not n.is_public_name(text, text.rfind(name, 0, match.start()), name):
            spans.append((start, end))
            done = end
    return spans


def _assignment_spans_agree(text: str) -> None:
    lower = redaction_names.lower_same_length(text)
    found = redaction_names._assignment_spans(text, lower)
    assert found == reference_assignment_spans(text, lower), text[:200]


@pytest.mark.parametrize("source", ["adversarial", "corpus"])
def test_shortcuts_judge_as_the_code_they_replaced(source: str) -> None:
    texts = _adversarial_texts() if source == "adversarial" else _corpus_texts()
    texts += [_sized(unit) for unit in ("password: ", "token: x ", "password:Tr0ub4dor ")]
    texts += [_sized(unit) for unit in ("token is abcdefg ", "password: Abcdefg ")]
    for text in texts:
        _short_flags_agree(text)
        _assignments_agree(text)
        _assignment_spans_agree(text)
        _prose_agrees(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_COMMAND_PARTS), max_size=120))
def test_short_flags_are_judged_as_before_on_generated_lines(parts: list[str]) -> None:
    _short_flags_agree("".join(parts))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_NAME_PARTS), max_size=60), st.text(max_size=20))
def test_assignments_are_judged_as_before_on_generated_text(parts: list[str], tail: str) -> None:
    _assignments_agree("".join(parts) + tail)
    _assignment_spans_agree("".join(parts) + tail)


_COLON_PARTS = [
    "password", "api_key", "token", "key", "session", ":", ": ", " ", "\n", "for staging",
    "hunter", "2", "\u00b2", "\u0663", "Tr0ub4dor", "kYYqhXHdO2x9", "Xq7vR2mK9pLw3ZtB8nYc", "&",
    ";", ",", ")", "#", "(", "x", "-", "_", "/", "é",
]  # fmt: skip


_WEAK_PARTS = [
    "key=", "session=", "seed:", "api_key=", "password=", "Xq7vR2mK9pLw3ZtB8nYc", "=", "==", "===",
    "====", "\u00e9", "a1", "/", "+", "%", "~", ".", "-", "_", "&", ";", "x" * 10, " ", ":",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_WEAK_PARTS), max_size=60))
def test_weak_names_values_are_judged_as_before(parts: list[str]) -> None:
    _assignment_spans_agree("".join(parts))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_COLON_PARTS), max_size=60))
def test_values_after_a_colon_are_judged_as_before(parts: list[str]) -> None:
    _assignment_spans_agree("".join(parts))


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("keyKEY=:;&\"' -p\nx0a"), max_size=200))
def test_weak_and_strong_values_are_judged_as_before(value: str) -> None:
    for name in ("key", "api_key", "session", "password", "token", "cache_key", "color"):
        assert redaction_names.is_literal_secret(name, value) == (
            reference_is_literal_secret(name, value)
        )


class _CountingPattern:
    """A compiled pattern that counts its searches (the work a shortcut skips)."""

    def __init__(self, pattern: re.Pattern[str]) -> None:
        self.pattern, self.searches = pattern, 0

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        self.searches += 1
        return self.pattern.search(text, *args)

    def match(self, text: str, *args: int) -> re.Match[str] | None:
        self.searches += 1
        return self.pattern.match(text, *args)


def test_a_line_of_short_flags_without_a_program_searches_no_program(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counted = [
        _CountingPattern(getattr(redaction_lines, name))
        for name in ("_ATTACHED_P", "_SPACED_P", "_MONGO_COMMAND", "_SPACED_A", "_SPACED_W")
    ]
    for name, spy in zip(
        ("_ATTACHED_P", "_SPACED_P", "_MONGO_COMMAND", "_SPACED_A", "_SPACED_W"),
        counted,
        strict=True,
    ):
        monkeypatch.setattr(redaction_lines, name, spy)
    for unit in (" -p", " -pabc", " -p abc", " -a abc", " -w abc"):
        assert redact_secrets(_sized(unit)) == _sized(unit)
    assert sum(spy.searches for spy in counted) == 0
    # A program on the line is still looked for, and its password still found
    assert redact_secrets("x -pabc " * 40 + "mysql -uroot -pS3cr3t!") == (
        "x -pabc " * 40 + "mysql -uroot -p[REDACTED]"
    )


@pytest.mark.parametrize(
    ("unit", "skipped"),
    [
        ("key=", "is_placeholder"),  # a weak name's value is not random: judged no further
        ("key=a", "is_placeholder"),
        ("session=x", "is_placeholder"),
        ("key: ", "_name_before"),  # values of 4 characters: too short, not even named
        ("password: ", "_name_before"),  # a word before more words, without a digit
        ("key=", "is_literal_secret"),  # a weak name's value with "=" inside: not random
        ("key=a", "is_literal_secret"),
        ("session=x", "is_literal_secret"),
        ("api_key: deadline ", "_name_before"),
    ],
)
def test_repeated_names_are_not_judged_one_by_one(
    unit: str, skipped: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = getattr(redaction_names, skipped)
    calls: list[object] = []

    def counting(*args: object) -> object:
        calls.append(args)
        return original(*args)

    monkeypatch.setattr(redaction_names, skipped, counting)
    text = _sized(unit) + "."  # the last value, before no other word, is judged
    assert redaction_names.redact_assignments(text) == text
    assert calls == []


def test_a_weak_name_still_redacts_a_random_value_and_a_strong_name_any_literal() -> None:
    assert redact_secrets("key=" * 100 + " key=Xq7vR2mK9pLw3ZtB8nYc") == (
        "key=" * 100 + " key=[REDACTED]"
    )
    assert redact_secrets("key: " * 100 + "password=hunter22") == "key: " * 100 + (
        "password=[REDACTED]"
    )


# -- Vendor tokens -------------------------------------------------------------------------


def reference_token_spans(
    run: str, offset: int, begin: int = 0, reach: int = 0
) -> Iterator[tuple[int, int]]:
    """``redaction_vendors._token_spans`` before a start's shape was tested first."""
    v = redaction_vendors
    if v._unprefixed_token(run) and not v.is_masked(run[-16:]):
        yield offset, offset + len(run)
        return
    for key in v._key_starts().finditer(run, begin):
        start = key.start()
        if start < reach - v._SCAN:
            continue
        glued = start > reach and v._WORD_CHAR.match(run, start - 1) is not None
        if glued and not v._after_a_word(run, start, reach):
            continue
        limit = min(len(run), start + v._SCAN)
        shaped = v._shape_end(run, start, limit)
        end = v._token_end(run, start, limit, shaped, glued=glued) if shaped else 0
        if end > reach:
            yield offset + start, offset + end
            reach = end


def reference_run_spans(run: str, offset: int) -> list[tuple[int, int]]:
    """``redaction_vendors._run_spans`` before a run without a token was read once only."""
    trimmed = run.rstrip(redaction_vendors._TRIM)
    spans = list(reference_token_spans(trimmed, offset))
    closed = run.rstrip(".~")
    if len(closed) > len(trimmed):
        begin = spans[-1][0] - offset if spans else 0
        reach = spans[-2][1] - offset if len(spans) > 1 else 0
        last = list(reference_token_spans(closed, offset, begin, reach))[-1:]
        if last and last[0][1] > offset + len(trimmed) and (not spans or last[0][0] > spans[-1][0]):
            spans += last
    return spans


def _vendor_tokens_agree(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    found = vendor_token_spans(text), redaction_vendors.redact_vendor_tokens(text)
    with monkeypatch.context() as patched:
        patched.setattr(redaction_vendors, "_run_spans", reference_run_spans)
        expected = vendor_token_spans(text), redaction_vendors.redact_vendor_tokens(text)
    assert found == expected, text[:200]


_TOKEN = "ghp_" + "Xq7vR2mK9pLw3ZtB8nYcXq7vR2mK9pLw3ZtB"
_GOOGLE_KEY_WITHOUT_LAST = "AIza" + "Xq7vR2mK9pLw3ZtB8nYcXq7vR2mK9pLw3Z"
_DATABRICKS = "dapi3f2a9c1b7e4d5f60718293a4b5c6d7e8"
_VENDOR_PARTS = [
    "ghp_", "gh", "AKIA", "ASIA", "eyJ", "sk-", "sk-proj-", "alt_", "hf_", "AIza", "glpat-",
    "xoxb-", _TOKEN, _TOKEN[4:], "Xq7vR2mK9pLw3ZtB8nYc", "0123456789", "a" * 30, "TOKEN", "_",
    "-", ".", "~", "x", "9", " ", "=", "AAAA" * 10, _GOOGLE_KEY_WITHOUT_LAST, _DATABRICKS,
    "abc123", "q1" * 150, "glpat-",
]  # fmt: skip


@pytest.mark.parametrize("source", ["adversarial", "corpus"])
def test_vendor_tokens_are_found_as_by_the_code_they_replaced(
    source: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = _adversarial_texts() if source == "adversarial" else _corpus_texts()
    texts += [_sized(unit) for unit in ("ghp_", "sk-", "eyJ-", "alt_", "AIza")]
    texts += [_sized("ghp_", 3000) + _TOKEN + "_", _sized("sk-", 600) + _TOKEN + "-_-"]
    texts += [_sized("ghp_", 3000) + _GOOGLE_KEY_WITHOUT_LAST + "-"]  # its last "-" trimmed off
    # A prefix with its separator is read through small letters and digits up to the "_"
    texts += [f"abc123{_DATABRICKS}{'q1' * 400}_", f"x9{_DATABRICKS}{_DATABRICKS * 30}-"]
    for text in texts:
        _vendor_tokens_agree(text, monkeypatch)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_VENDOR_PARTS), max_size=80))
def test_vendor_tokens_are_found_as_before_on_generated_runs(parts: list[str]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        _vendor_tokens_agree("".join(parts), monkeypatch)


@pytest.mark.parametrize("unit", ["ghp_", "sk-", "eyJ"])
def test_a_run_of_one_prefix_repeated_is_read_once_and_judged_nowhere(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    judged: list[int] = []
    shaped: list[int] = []
    token_end, shape_end = redaction_vendors._token_end, redaction_vendors._shape_end

    def counting_token_end(run: str, start: int, *args: int, glued: bool) -> int:
        judged.append(start)
        return token_end(run, start, *args, glued=glued)

    def counting_shape_end(run: str, start: int, limit: int) -> int:
        shaped.append(start)
        return shape_end(run, start, limit)

    monkeypatch.setattr(redaction_vendors, "_token_end", counting_token_end)
    monkeypatch.setattr(redaction_vendors, "_shape_end", counting_shape_end)
    text = _sized(unit)
    assert redaction_vendors.redact_vendor_tokens(text) == text
    assert judged == []  # no shape at any start: nothing else is judged there
    starts = len(re.findall(re.escape(unit[:2]), text))
    assert len(shaped) <= starts + 2 * redaction_vendors._SCAN  # read once, not twice
    # A token at the end of such a run is still found
    assert redaction_vendors.redact_vendor_tokens(text + " " + _TOKEN) == text + " [REDACTED]"
    assert redaction_vendors.redact_vendor_tokens(f"{text} {_GOOGLE_KEY_WITHOUT_LAST}-") == (
        text + " [REDACTED]"
    )


# -- Prose ---------------------------------------------------------------------------------

# redaction_lines._SPACED before its value needed a digit
_REFERENCE_SPACED = re.compile(
    r"[a-z][a-z0-9_.\-]{0,90}+"
    r"(?P<sep>[ \t]++(?:is|was)|[ \t]*+(?:[|,:]|->|=>))?"
    r"[ \t]++[`\"']?(?P<secret>[a-z0-9+/=_\-.~]{6,256}+)"
)


def reference_redact_prose(text: str) -> str:
    """``redaction_lines.redact_prose`` before values without a digit, or of small letters
    only, were skipped."""
    r = redaction_lines
    spans: list[tuple[int, int]] = []
    lower = redaction_values.lower_same_length(text)
    hints = r._hints(lower)
    for hint in r._SPACED_HINTS:
        for index in hints[hint]:
            match = _REFERENCE_SPACED.match(lower, index)
            if match is not None:
                spans += r._spaced_secret(text, lower, match)
    for start in r._prose_starts(lower, hints):
        match = r._PROSE.match(text, start)
        if match is None:
            continue
        begin = match.start("secret")
        if match["secret"].startswith("-"):
            match = r._FLAG_VALUE.match(text, begin)
            if match is None:
                continue
            begin = match.start("secret")
        secret = match["secret"].rstrip(r._TRAILING)
        if r._SECRET_BEFORE_NAME.fullmatch(lower, start, begin) and r.is_resource_name(secret):
            continue
        if (
            r.looks_like_password(secret)
            and not r.looks_like_code(secret)
            and not r.is_relative_path(secret)
            and not r._innocent_prose(lower, start, secret)
        ):
            spans.append((begin, begin + len(secret)))
    if ":AA" in text:
        spans += (match.span("secret") for match in r._TELEGRAM.finditer(text))
    if text.count(":") >= r._PGPASS_MIN_COLONS:
        spans += r._pgpass_passwords(text)
    spans.sort()
    return redact_span(text, spans)


def _prose_agrees(text: str) -> None:
    assert redaction_lines.redact_prose(text) == reference_redact_prose(text), text[:200]


_PROSE_PARTS = [
    "secret", "password", "token", "api key", "pass", "pw", "credential", "key", " ", "  ",
    "\t", " is ", " was ", ": ", ":", "|", ",", "->", "=>", "`", "'", '"', "-", "--password",
    "abcdefgh", "Abcdefgh", "abcDefgh", "hunter22", "h\u00b2nter", "stra\u00dfe", "\u01c5abcdef",
    "Xq7vR2mK9pLw3ZtB8nYc", "deadbeef" * 5, "!", ".", "\n", "for admin", "\u212a", "\u0130",
]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_PROSE_PARTS), max_size=60))
def test_prose_is_redacted_as_before_on_generated_text(parts: list[str]) -> None:
    _prose_agrees("".join(parts))


@pytest.mark.parametrize("unit", ["secret ", "password: ", "token is abcdefg "])
def test_words_after_a_secret_word_are_not_judged_one_by_one(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    for name in ("_spaced_secret", "looks_like_password"):
        original = getattr(redaction_lines, name)

        def counting(*args: object, original: object = original) -> object:
            calls.append(str(args[-1])[:20])
            return original(*args)  # type: ignore[operator]

        monkeypatch.setattr(redaction_lines, name, counting)
    text = _sized(unit)
    assert redaction_lines.redact_prose(text) == text
    assert calls == []
    # A password after such words is still found
    assert redaction_lines.redact_prose(text + " password: hunter22") == (
        text + " password: [REDACTED]"
    )


@pytest.mark.parametrize("unit", ["key=", "token: x ", "secret "])
def test_a_text_without_a_blank_or_a_digit_is_not_searched_for_spaced_values(
    unit: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = _CountingPattern(redaction_lines._SPACED)
    monkeypatch.setattr(redaction_lines, "_SPACED", spy)
    text = _sized(unit)
    assert redaction_lines.redact_prose(text) == text
    assert spy.searches == 0
    assert redaction_lines.redact_prose(text + " the api key is Xq7vR2mK9pLw3ZtB8nYc") == (
        text + " the api key is [REDACTED]"
    )
