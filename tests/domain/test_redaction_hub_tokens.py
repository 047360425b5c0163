"""Aletheia's own hub tokens (``alt_`` and 32 URL-safe random characters) are redacted with no
keyword beside them, as the other vendors' tokens are, and names that begin with ``alt_`` are
kept.

A hub token saved as typed ("use alt_... for the shop hub") was stored whole: a read token of
the hub could read an admin token from a note. A token of fixed length whose last character is
"-" or "_" (one hub token in 32; a Google API key ending in "-") was cut at it, read as too short,
and kept. The fake tokens are random and were never valid credentials; they are split after the
prefix so that secret scanners do not flag this file.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Iterator

import pytest

from aletheia_mem.domain import redaction_vendors
from aletheia_mem.domain.redaction import REDACTED, redact_secrets
from aletheia_mem.domain.redaction_vendors import _run_spans, _token_spans, vendor_token_spans
from aletheia_mem.domain.redaction_words import reads_as_words
from aletheia_mem.hub.tokens import new_secret
from tests.cost import GROWTH, LINEAR_BOUND, cpu_ratio
from tests.e2e.leaky import HUB, HUB_DASHED

Span = tuple[int, int]

HUB2 = "alt_" + "Q1w2E3r4T5y6U7i8O9p0AaSsDdFfGg-h"
UNDERSCORED = "alt_" + "b0FWHX_RVYzyggzomxhz-jzKdqvgnt__"
URLSAFE = string.ascii_letters + string.digits + "-_"
R = REDACTED
# The tokens, as typed and as redacted: glued to each other, and ending with "-" or "_" (which
# a sentence's end was cut from)
TOKENS = {
    "one": (HUB, R),
    "two-glued": (HUB + HUB2, R + R),
    "three-glued": (HUB + HUB_DASHED + HUB2, R * 3),
    "ending-with-a-dash": (HUB_DASHED, R),
    "ending-with-underscores": (UNDERSCORED, R),
}
# Where a token stands ({}): no keyword beside it, glued to words, digits and punctuation
PLACES = """\
use {} for the shop hub
hub: {}
{}
({}).
'{}', then
hub{}
TOKEN{} rotated
2024{}
see {}foo
hub: {}-- old
ALETHEIA_HUB_TOKEN={} aletheia sync
Authorization: Bearer {}
""".splitlines()


@pytest.mark.parametrize("place", PLACES)
@pytest.mark.parametrize(("token", "redacted"), TOKENS.values(), ids=list(TOKENS))
def test_a_hub_token_is_redacted_without_a_keyword_beside_it(
    token: str, redacted: str, place: str
) -> None:
    expected = place.format(redacted)
    assert redact_secrets(place.format(token)) == expected
    assert redact_secrets(expected) == expected


def test_a_token_ending_with_an_underscore_is_redacted_after_one_that_took_its_start() -> None:
    """A New Relic key's body ("NRAK-" and up to 32) took the "alt" of the hub token after it;
    read again with its last "_", the hub token overlapped the key and was left out."""
    key = "NRAK-" + "0TY1WGFX33UW9YE7ZRKRDZB5TYK"
    text = f"leaked: {key}{UNDERSCORED} (rotated)"
    assert redact_secrets(text) == f"leaked: {R} (rotated)"


def test_a_google_key_ending_with_a_dash_is_redacted() -> None:
    """Cut at its last "-" as a hub token was, it was one character short and kept."""
    key = "AIza" + "SyJ58m1CiAhzCueQpBenQtYh5Xj8TPQxjq-"
    assert redact_secrets(f"key {key} here, {key}.") == f"key {R} here, {R}."


@pytest.mark.parametrize(
    "disguise",
    [
        pytest.param(lambda t: "".join(chr(ord(c) + 0xFEE0) for c in t), id="full-width"),
        pytest.param(lambda t: t.replace("a", "\u0430", 1), id="cyrillic-a"),
        pytest.param(lambda t: t[:12] + "\u200b" + t[12:], id="zero-width-space"),
    ],
)
def test_a_hub_token_in_look_alike_characters_is_redacted(disguise: Callable[[str], str]) -> None:
    text = f"use {disguise(HUB)} for the shop hub"
    assert redact_secrets(text) == f"use {R} for the shop hub"


def test_every_token_the_hub_makes_is_redacted_wherever_it_stands() -> None:
    tokens = [new_secret() for _ in range(3000)]
    # and the ones that end with "-" or "_", which a sentence's end was cut from
    rng = random.Random(7)
    tokens += [
        "alt_" + "".join(rng.choice(URLSAFE) for _ in range(31)) + "-_"[n % 2] for n in range(400)
    ]
    survived = []
    for number, token in enumerate(tokens):
        text = PLACES[number % len(PLACES)].format(token)
        redacted = redact_secrets(text)
        if any(token[i : i + 8] in redacted for i in range(4, len(token) - 7)):
            survived.append((text, redacted))
    assert survived == []


# What comes right before a token glued to it: URL-encoded and JSON-escaped "=", ":" and "/"
# (a token in a callback URL), hex, letters of one case and digits, words. A letter and a digit
# before the prefix ("%3D", "x9", "abc1") made it read as a blob that holds the prefix by chance.
GLUED_BEFORE = [
    "https://app/login?next=%2Fmcp%3Ftoken%3D",
    "%3D",
    "%3d",
    "%3A",
    "%2F",
    "Bearer%20",
    "\\u003d",
    "\\u003D",
    "\\x3d",
    "3d",
    "3D",
    "x9",
    "v2",
    "abc1",
    "ABC1",
    "Token2",
    "3f2a9c1b7e4d5f60718293a4b5c6d7e8f9012345",
    "1",
    "d",
    "word",
    "TOKEN",
    "&#61;",
]


def test_a_token_glued_after_an_escape_digits_or_a_word_is_redacted() -> None:
    tokens = [new_secret() for _ in range(300)]
    survived = [
        text
        for token in tokens
        for before in GLUED_BEFORE
        if token in redact_secrets(text := f"see {before}{token} then")
    ]
    assert survived == []


@pytest.mark.parametrize("before", ["%3D", "\\u003d", "x9", "abc1", "3d", "v2"])
@pytest.mark.parametrize(
    "name", ["alt_text", "alt_key_binding", "alt_ToggleFullScreenModeKeyBindingX"]
)
def test_a_name_glued_after_an_escape_or_digits_is_kept(before: str, name: str) -> None:
    text = f"see {before}{name} then"
    assert redact_secrets(text) == text


INNOCENT = [
    "alt_text",
    "alt_key_binding",
    'img.alt_text = "A cat on a mat"',
    "set alt_text_for_the_hero_image_banner_top in the CMS",
    "alt_Text_For_The_Hero_Image_Banner_Top_Left",
    "alt_Image_Url_For_Hero_v2_Banner_Top_Left",
    "alt_HTTP2_Server_Config_For_The_EU_Region_X",
    "alt_Key_Binding_For_Ctrl_Shift_F12_Toggle",
    "ALT_TEXT_FOR_THE_HERO_IMAGE_BANNER_TOP_LEFT",
    "data-alt_Text-For-The-Main-Hero-Image-Banner",
    "default_value_for_the_alt_text_attribute_here",
    "salt_rounds_for_the_password_hasher_config",
    "asphalt_Road_Surface_Temperature_Readings_2024",
    "cobalt_Blue_Theme_For_The_Dark_Mode_Settings",
    "Hub tokens start with alt_ and are shown once.",
    "Authorization: Bearer alt_...",
    "alt_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "alt_XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",
    "alt_<your-hub-token-goes-here-now>",
    "alt_YOUR_HUB_TOKEN_GOES_HERE_PLEASE_X",
    # a prefix glued after letters of random case comes up in URL-safe base64 by chance
    "Zk9xQaXalt_" + "R4ndXy9Zq8Lm2Np5Vt7Wk3Hs6Jd1Fb0G",
]


@pytest.mark.parametrize("text", INNOCENT)
def test_a_name_beginning_with_the_prefix_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


# Words run together after the prefix, 32 characters or more: read as a token, and redacted
CAMEL_CASE = [
    "alt_ToggleFullScreenModeKeyBindingXY",
    "alt_KeyboardShortcutForZoomingIntoTheMap",  # cut at 32 inside "The"
    "alt_getUserProfileSettingsFromTheCache",
    "alt_ShowTheAltTextOfEveryImageOnHover",
    "img.alt_ImageUrlForHeroV2BannerTopLeftCorner = x",
    "bind alt_OpenTheCommandPaletteWithCtrlShiftP to F1",
    "alt_AutoScrollBehaviourForLongDocuments.",
    "alt_Hero-ImageBannerTopLeftCornerTextLabel",
    "alt_BasculerLePleinEcranDuLecteurVideo",
    "see alt_ToggleFullScreenModeKeyBindingXY, then",
]


@pytest.mark.parametrize("text", CAMEL_CASE)
def test_a_camel_case_name_after_the_prefix_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


def test_no_random_token_body_reads_as_words() -> None:
    """What keeps a CamelCase name: one or two random bodies in a billion read as words
    (bench/hub_token_names_bench.py); none of these does."""
    rng = random.Random(31)
    bodies = ["".join(rng.choice(URLSAFE) for _ in range(32)) for _ in range(100_000)]
    bodies += [new_secret().removeprefix("alt_") for _ in range(20_000)]
    assert [body for body in bodies if reads_as_words(body)] == []
    assert all(reads_as_words(text.split("alt_")[1].split()[0]) for text in CAMEL_CASE[:4])


def test_url_safe_random_blobs_are_kept() -> None:
    rng = random.Random(12)
    blobs = [
        "".join(rng.choice(URLSAFE) for _ in range(rng.choice((24, 48, 96)))) for _ in range(400)
    ]
    assert [blob for blob in blobs if "alt_" not in blob and redact_secrets(blob) != blob] == []


@pytest.mark.parametrize(
    "unit",
    [
        pytest.param(HUB, id="glued-hub-tokens"),
        pytest.param(HUB_DASHED, id="glued-hub-tokens-ending-with-a-dash"),
        pytest.param("xalt_", id="prefixes-after-a-letter"),
        pytest.param("salt_Ab1-", id="short-bodies"),
    ],
)
def test_many_hub_token_starts_in_a_run_ending_with_a_dash_cost_linear_time(unit: str) -> None:
    """A run ending with "-" or "_" is read twice (without them, then with them): still once
    per character each."""
    small, large = (unit * (size // len(unit)) + "-" for size in (5_000, 5_000 * GROWTH))
    ratio = cpu_ratio(redact_secrets, large, small)
    assert ratio < LINEAR_BOUND, f"{ratio:.1f} x (linear: 8 x; quadratic: 64 x)"


def test_a_run_of_tokens_ending_with_a_dash_is_read_again_only_from_its_last_token(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The run was read a second time whole, with its last "-": twice the cost of a run of many
    tokens. The second reading now starts at the last token the first one found."""
    starts: list[int] = []

    def noting_start(run: str, offset: int, begin: int = 0, reach: int = 0) -> Iterator[Span]:
        starts.append(begin)
        return _token_spans(run, offset, begin, reach)

    monkeypatch.setattr(redaction_vendors, "_token_spans", noting_start)
    # Bodies of letters and digits only: a body ending in "-" or "_" may join its neighbour into
    # one span (still redacted whole), which made the count of spans differ by chance.
    run = "".join(_plain_tokens(300))
    spans = vendor_token_spans(run + "-")
    assert len(spans) == 300
    assert starts == [0, spans[-1][0]]


def _plain_tokens(count: int) -> list[str]:
    tokens: list[str] = []
    while len(tokens) < count:
        if (token := new_secret()).removeprefix("alt_").isalnum():
            tokens.append(token)
    return tokens


def _read_again_whole(run: str) -> list[tuple[int, int]]:
    """The tokens of one run as it was read before: the second reading from its start."""
    trimmed, closed = run.rstrip("._~-"), run.rstrip(".~")
    spans = list(_token_spans(trimmed, 0))
    if len(closed) > len(trimmed):
        last = list(_token_spans(closed, 0))[-1:]
        if last and last[0][1] > len(trimmed) and (not spans or last[0][0] > spans[-1][0]):
            spans += last
    return spans


def test_reading_again_from_the_last_token_finds_what_reading_the_whole_run_again_does() -> None:
    rng = random.Random(5)
    alnum = string.ascii_letters + string.digits
    pieces: list[Callable[[], str]] = [
        lambda: "alt_" + "".join(rng.choices(URLSAFE, k=rng.choice((31, 32, 33)))),
        lambda: "ghp_" + "".join(rng.choices(alnum, k=rng.choice((35, 36, 37)))),
        lambda: "AIza" + "".join(rng.choices(URLSAFE, k=rng.choice((34, 35, 36)))),
        lambda: "glpat-" + "".join(rng.choices(URLSAFE, k=rng.randrange(18, 30))),
        lambda: "xoxb-" + "".join(rng.choices(alnum + "-", k=rng.randrange(8, 30))),
        lambda: "".join(rng.choices(URLSAFE, k=rng.randrange(1, 12))),
        lambda: rng.choice(["-", "_", "--", "-_", ".", "TOKEN", "2024", "salt_", "alt_", "Key"]),
        lambda: "alt_ToggleFullScreenModeKeyBinding" + rng.choice(["", "X", "XY", "XYZ"]),
    ]
    runs = [
        "".join(rng.choice(pieces)() for _ in range(rng.randrange(1, 7)))
        + rng.choice(["-", "_", "-_", "__", ".-", "_-", "~-"])
        for _ in range(20_000)
    ]
    assert [run for run in runs if _run_spans(run, 0) != _read_again_whole(run)] == []
