"""Tokens glued to each other or to a word, with no blank or separator between them.

"ghp_" + 36 characters right before another "ghp_" token kept the second one's tail: the first
token's body, read greedily, ran on over "ghp" and stopped at "_", and the rest ("_Q1w2...")
started no token. A token of fixed length followed by a letter or digit (two AWS key IDs) was
taken for a longer word and kept whole, and a token glued after a word ("TOKENghp_...") was never
tried. Every vendor format is checked here glued two and three times, after and before a word and
before the next format; words and blobs that hold a prefix by chance are kept.

The fake tokens are random and were never valid credentials; they are split after their vendor
prefix, or built from the corpus's prefixes, so that secret scanners do not flag this file.
"""

from __future__ import annotations

import base64
import random
import string
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain.redaction import REDACTED, redact_secrets
from aletheia_mem.domain.redaction_vendors import _ONLY_APART
from tests.cost import GROWTH, LINEAR_BOUND, cpu_ratio

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from redaction_corpus import VENDORS

R = REDACTED
GH = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
GH2 = "ghp_" + "Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGgHhJjKk"
GHO = "gho_" + "Zx81Lm0Qp2Rt7Yu3Io9Pa4Sd6Fg5Hj1Kk2Ll3"
GHS = "ghs_" + "9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX"
AWS = "AKIA" + "Z7QWERTYUIOP1234"
AWS2 = "AKIA" + "QW3RTZ7YU1OP5K68"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
STRIPE2 = "sk_live_" + "9Fh2Kd8Lm3Np7Qr1St5Uv0Wx"
NPM = "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


def survivors(redacted: str, tokens: list[str]) -> list[str]:
    """The pieces of 8 characters of ``tokens`` still in ``redacted``: none may be."""
    return [
        token[i : i + 8]
        for token in tokens
        for i in range(len(token) - 7)
        if token[i : i + 8] in redacted
    ]


EXACT = [
    pytest.param(GH + GH2, R, id="two-github-tokens"),
    pytest.param(GH + GH2 + GH, R, id="three-github-tokens"),
    pytest.param(GHO + GHS, R, id="github-oauth-then-server"),
    pytest.param(f"leaked {GH}{GH2} in the CI log", f"leaked {R} in the CI log", id="in-prose"),
    pytest.param(AWS + AWS2, R + R, id="two-aws-key-ids"),
    pytest.param(AWS + AWS2 + AWS, R + R + R, id="three-aws-key-ids"),
    pytest.param(STRIPE + STRIPE2, R, id="two-stripe-keys"),
    pytest.param(NPM + NPM, R + R, id="two-npm-tokens"),
    pytest.param(AWS + GH, R + R, id="aws-then-github"),
    pytest.param(f"token {GH}{AWS}", f"token {R}", id="github-then-aws"),
    pytest.param(f"leaked foo{GH} in the log", f"leaked foo{R} in the log", id="after-a-word"),
    pytest.param(f"export GITHUB_TOKEN{GH}", f"export GITHUB_TOKEN{R}", id="after-a-name"),
    pytest.param(f"key x{AWS} rotated", f"key x{R} rotated", id="aws-after-a-letter"),
    pytest.param(f"key {AWS}x rotated", f"key {R}x rotated", id="aws-before-a-letter"),
    pytest.param(f"key xx{AWS}yy rotated", f"key xx{R}yy rotated", id="aws-between-letters"),
    pytest.param(f"see {GH}foo", f"see {R}", id="github-before-a-word"),
    # a prefix with its separator after digits: no base64, base32 or hex holds "_" or "-"
    pytest.param(f"123{GH}", f"123{R}", id="github-after-digits"),
    pytest.param(f"run 20240512{GHO} x", f"run 20240512{R} x", id="github-oauth-after-a-date"),
    pytest.param(f"2024{STRIPE}", f"2024{R}", id="stripe-after-digits"),
    pytest.param("99glpat-" + "Xq7Rt9Lp2Vn5Kw8Zs4Dm1", f"99{R}", id="gitlab-after-digits"),
    pytest.param(
        "0sk-ant-api03-" + "Xq7Rt9Lp2Vn5Kw8Zs4Dm1Ab3Cd5Ef7", f"0{R}", id="anthropic-after-digits"
    ),
    # after letters of one case and digits (hex, "v2"), and after an escaped "=" or ":" in a
    # URL-encoded callback URL or a JSON string: the code of the escape is no word
    pytest.param(f"3d{GH}", f"3d{R}", id="github-after-hex"),
    pytest.param(f"v2{GH}", f"v2{R}", id="github-after-a-letter-and-a-digit"),
    pytest.param(f"?next=%2Fcb%3Ftoken%3D{GH}", f"?next=%2Fcb%3Ftoken%3D{R}", id="github-in-url"),
    pytest.param(f"x%3A{GH}", f"x%3A{R}", id="github-after-an-escaped-colon"),
    pytest.param(f"k\\u003d{AWS}", f"k\\u003d{R}", id="aws-after-a-json-escape"),
    pytest.param(f"key%3D{AWS}", f"key%3D{R}", id="aws-after-an-escaped-equals"),
    pytest.param(f"Bearer%20{AWS}", f"Bearer%20{R}", id="aws-after-an-escaped-blank"),
]


@pytest.mark.parametrize(("text", "expected"), EXACT)
def test_glued_tokens_are_replaced_and_the_words_around_them_kept(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected
    assert redact_secrets(expected) == expected


# -- Every vendor format ---------------------------------------------------------------------

_RNG = random.Random(20260512)
_ALIKE = {**dict.fromkeys(string.digits, string.digits), **dict.fromkeys("abcdef", "abcdef")}


def _random(alphabet: str, size: int) -> str:
    while True:  # a random body mixes letters and digits where its alphabet has both
        body = "".join(_RNG.choice(alphabet) for _ in range(size))
        if any(c.isdigit() for c in body) == any(c.isdigit() for c in alphabet) and any(
            c.isalpha() for c in body
        ) == any(c.isalpha() for c in alphabet):
            return body


def _token(prefix: str, alphabet: str, size: int, suffix: str) -> str:
    # the corpus's fixed suffixes ("0f" * 16) would read as masks: their digits and hex letters
    # are drawn anew too
    tail = "".join(_RNG.choice(_ALIKE.get(c, c)) for c in suffix)
    return prefix + (_random(alphabet, size) if size else "") + tail


FAMILIES = {family: [_token(*shape) for _ in range(3)] for family, *shape in VENDORS}
# Found glued to a token, not after a word: see test_a_short_prefix_inside_base64_is_kept.
APART = {family for family, tokens in FAMILIES.items() if tokens[0].startswith(_ONLY_APART)}
_NEXT = dict(zip(FAMILIES, [*list(FAMILIES)[1:], next(iter(FAMILIES))], strict=True))


def _arrangements() -> list[object]:
    params = []
    for family, (one, two, three) in FAMILIES.items():
        following = FAMILIES[_NEXT[family]][0]
        cases = {
            "two": ([one, two], f"{one}{two}"),
            "three": ([one, two, three], f"{one}{two}{three}"),
            "before-a-word": ([one], f"leaked {one}foo in the log"),
            "next-format": ([one, following], f"{one}{following}"),
            "two-in-an-assignment-value": ([one, two], f"note: value {one}{two}, rotated"),
        }
        if family not in APART:
            cases["after-a-word"] = ([one], f"leaked foo{one} in the log")
            cases["between-words"] = ([one], f"leaked xx{one}yy in the log")
            cases["after-a-word-and-glued"] = ([one, two], f"leaked TOKEN{one}{two}")
        params += [
            pytest.param(tokens, text, id=f"{family}-{name}")
            for name, (tokens, text) in cases.items()
        ]
    return params


@pytest.mark.parametrize(("tokens", "text"), _arrangements())
def test_nothing_of_a_glued_token_of_any_format_survives(tokens: list[str], text: str) -> None:
    redacted = redact_secrets(text)
    assert survivors(redacted, tokens) == []
    assert redact_secrets(redacted) == redacted


GLUABLE = sorted(
    {token for family, tokens in FAMILIES.items() if family not in APART for token in tokens}
)


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=string.ascii_lowercase, max_size=8),
    st.lists(st.sampled_from(GLUABLE), min_size=1, max_size=3),
    st.text(alphabet=string.ascii_letters + string.digits, max_size=8),
)
def test_glued_tokens_between_any_letters_never_survive(
    before: str, tokens: list[str], after: str
) -> None:
    text = f"leaked: {before}{''.join(tokens)}{after} (rotated)"
    redacted = redact_secrets(text)
    assert survivors(redacted, tokens) == []
    assert redacted.startswith("leaked: ")
    assert redacted.endswith(" (rotated)")
    assert redact_secrets(redacted) == redacted


# -- Kept: prefixes inside words and blobs ---------------------------------------------------

INNOCENT = [
    pytest.param("ASIAPACIFICREGIONALOFFICEBUILDING", id="upper-case-word"),
    pytest.param("the ASIAPACIFIC2024CONFERENCE schedule", id="upper-case-word-and-year"),
    pytest.param("MALAKIA2024CONFERENCEHALLBOOKINGS", id="prefix-inside-an-upper-case-word"),
    pytest.param("SLOVAKIAREPUBLICEMBASSYBRATISLAVA", id="aws-prefix-inside-a-word"),
    pytest.param("kiosk-2024-release-candidate-build", id="openai-prefix-after-a-word"),
    pytest.param("disk-2024-backup-volume-east-01", id="hyphenated-words"),
    pytest.param("mask_test_harness_for_the_new_renderer", id="stripe-prefix-in-snake-case"),
    pytest.param("weighs_all_the_things_together_in_batch_2024", id="github-prefix-in-words"),
    pytest.param("pnpm_store_path_for_the_workspace_root", id="npm-prefix-in-words"),
    pytest.param("desk-proj-2024-layout-for-the-new-office", id="openai-project-in-words"),
    pytest.param("RISKASSESSMENTPROCEDUREDOCUMENT2024", id="upper-case-words-and-digits"),
    pytest.param("TASKS3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345", id="word-and-a-sha"),
    # a prefix without a separator after digits comes up in base32 and hex by chance
    pytest.param("MZXW6YTBOI2024AKIAZ7QWERTYUIOP1234", id="aws-prefix-after-digits"),
    pytest.param("a9Xk2Qz7ghp_" + "R4ndXy9Zq8Lm2Np5Vt7Wk3Hs6Jd1Fb0Gc4Qa", id="after-random-case"),
    pytest.param("monkey-business-2024-quarterly-report-final", id="mailgun-prefix-in-words"),
    pytest.param("assets/logo-dark-sk-2024-version-final.png", id="path"),
    pytest.param(
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ci",
        id="ssh-public-key",
    ),
]


@pytest.mark.parametrize("text", INNOCENT)
def test_a_prefix_inside_words_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


def test_a_short_prefix_inside_base64_is_kept() -> None:
    """ "EAA" (Facebook) after letters in base64: an RSA public key holds "c2EAAAADAQAB"."""
    key = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7" + "kq7Xr3mN5pT1wY6sE4dF9hL2cB0uR8xKa" * 3
    assert redact_secrets(key) == key


@pytest.mark.parametrize(
    "encode",
    [
        pytest.param(lambda raw: raw.hex(), id="hex"),
        pytest.param(lambda raw: base64.b64encode(raw).decode(), id="base64"),
    ],
)
def test_random_blobs_are_kept(encode: Callable[[bytes], str]) -> None:
    rng = random.Random(11)
    blobs = [encode(rng.randbytes(rng.choice((24, 48, 96, 300)))) for _ in range(400)]
    assert [blob for blob in blobs if redact_secrets(blob) != blob] == []


# -- Cost ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "unit",
    [
        pytest.param(GH, id="glued-github-tokens"),
        pytest.param(AWS, id="glued-aws-key-ids"),
        pytest.param("x" + GH[:6], id="github-prefixes-after-a-letter"),
        pytest.param("xsk-1", id="openai-prefixes-after-a-letter"),
        pytest.param("eyJ-", id="jwt-headers-in-one-run"),
        pytest.param("xeyJ", id="jwt-headers-after-a-letter"),
        pytest.param("sk-proj-" + GH[4:] + "-", id="openai-keys-before-a-mask"),
        pytest.param("glpat-" + AWS + "-", id="gitlab-and-aws-before-a-mask"),
    ],
)
def test_many_token_starts_in_one_run_cost_linear_time(unit: str) -> None:
    """Each start was read to the end of the run: "eyJ-" * 2,500 took 100 ms, 8 times the text
    60 times as long; a mask at the end of the run made every "sk-proj-..." before it be read
    to it again."""
    small, large = (unit * (size // len(unit)) + "x" * 16 for size in (5_000, 5_000 * GROWTH))
    ratio = cpu_ratio(redact_secrets, large, small)
    assert ratio < LINEAR_BOUND, f"{ratio:.1f} x (linear: 8 x; quadratic: 64 x)"
