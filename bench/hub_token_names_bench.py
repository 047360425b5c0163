"""How often a random hub token reads as a name made of words, and so is kept unredacted:
``python bench/hub_token_names_bench.py [--samples N] [--seed S]``.

Too rare to count directly (none in millions of tokens), it is estimated by importance sampling:
bodies of 32 characters are drawn mostly from small letters as often as English uses each, which
read as words far more often, and each that does counts with the chance a random body has of
being it over the chance the draw had. Prints the estimate with its standard error, and the
CamelCase names that are kept or redacted.
"""

from __future__ import annotations

import argparse
import math
import random
import string

from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.domain.redaction_words import ENGLISH_LETTERS, reads_as_words

URLSAFE = 64  # characters a hub token's body is drawn from: letters, digits, "-" and "_"
BODY = 32
# How the draw picks a small letter, a capital, a digit and a separator
DRAW = {"small": 0.74, "capital": 0.2, "digit": 0.04, "separator": 0.02}
NAMES = [
    "ToggleFullScreenModeKeyBindingXY",
    "KeyboardShortcutForZoomingIntoTheMap",
    "getUserProfileSettingsFromTheCache",
    "ShowTheAltTextOfEveryImageOnHover",
    "ImageUrlForHeroV2BannerTopLeftCorner",
    "OpenTheCommandPaletteWithCtrlShiftP",
    "BasculerLePleinEcranDuLecteurVideo",
    "HTTP2ServerConfigForTheEURegionXX",
    "ReadAFileOfSizeNInBytesToABufferX",
    "QuickJsonQueryZoomIndexBoxMaximize",
]


def draw(rng: random.Random) -> tuple[str, float]:
    """A body and the log of its weight: its chance at random over its chance in the draw."""
    kinds, shares = list(DRAW), list(DRAW.values())
    letters, frequency = list(ENGLISH_LETTERS), list(ENGLISH_LETTERS.values())
    total = sum(frequency)
    chars, log_weight = [], 0.0
    for kind in rng.choices(kinds, shares, k=BODY):
        if kind in ("small", "capital"):
            index = rng.choices(range(26), frequency)[0]
            letter = letters[index]
            chars.append(letter if kind == "small" else letter.upper())
            chance = DRAW[kind] * frequency[index] / total
        elif kind == "digit":
            chars.append(rng.choice(string.digits))
            chance = DRAW[kind] / 10
        else:
            chars.append(rng.choice("-_"))
            chance = DRAW[kind] / 2
        log_weight += math.log(1 / URLSAFE / chance)
    return "".join(chars), log_weight


def estimate(samples: int, seed: int) -> tuple[float, float, int]:
    """The chance that a random body reads as words, its standard error, and the hits."""
    rng = random.Random(seed)
    total = squares = 0.0
    hits = 0
    for _ in range(samples):
        body, log_weight = draw(rng)
        if reads_as_words(body):
            weight = math.exp(log_weight)
            hits, total, squares = hits + 1, total + weight, squares + weight * weight
    mean = total / samples
    error = math.sqrt(max(squares / samples - mean * mean, 0.0) / samples)
    return mean, error, hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400_000)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    mean, error, hits = estimate(args.samples, args.seed)
    print(f"random hub tokens read as names: {mean:.2g} (standard error {error:.1g};")
    print(f"{hits:,} of {args.samples:,} drawn bodies read as words)")
    print("\n| name after alt_ | kept |\n|---|---|")
    for name in NAMES:
        kept = redact_secrets(f"alt_{name}") == f"alt_{name}"
        print(f"| {name} | {'yes' if kept else 'no'} |")


if __name__ == "__main__":
    main()
