"""Tokens whose vendor gave them a recognisable shape (``ghp_``, ``AKIA``, ``hvs.``, ``SG.``...).

The formats are the ones documented by the vendors and listed by secret scanners (gitleaks,
trufflehog, GitHub secret scanning). The text is cut into runs of token characters once (one
linear scan); in each run of 20+ characters, each place that holds the first two characters of
a shape is checked against the shapes that start with them only, so that 80 formats cost about
as much as one. A token is found wherever it starts: at the start of its run, after a "-", "_",
"." or "~", glued to the token before it ("ghp_...ghp_..." with no blank between) or after a
word ("TOKENghp_..."); one glued to letters or digits on either side must look random.
"""

from __future__ import annotations

import binascii
import functools
import re
from collections import defaultdict
from collections.abc import Iterator

from aletheia_mem.domain.redaction_values import (
    is_high_entropy,
    is_masked,
    is_placeholder,
    redact_span,
    varies,
)
from aletheia_mem.domain.redaction_words import reads_as_words

# Token characters: vendor tokens never contain "=", ":", "/" or blanks, which separate them
# from the names they are assigned to ("GITHUB_TOKEN=ghp_...", "x-access-token:ghp_...@").
# A run after an escape ("%3D", "\u003d", "\x3d": a token in a URL-encoded callback URL or a
# JSON string) starts after its code, which stands for a "=", ":" or "/" and is no word the
# token is glued to.
_MIN_RUN = 20
_RUN = re.compile(
    r"(?<![A-Za-z0-9_.~\-])(?:(?<=%)[0-9A-Fa-f]{2}|(?<=\\)(?:u[0-9A-Fa-f]{4}|x[0-9A-Fa-f]{2}))?"
    r"(?P<run>[A-Za-z0-9_.~\-]{20,}+)"
)
# A lookahead: the body holds a digit within its first 256 characters (a random body always
# does; unbounded, "sk-sk-sk-..." made each part scan to the end of the run: quadratic).
_DIGIT = r"(?=[A-Za-z_\-]{0,255}+[0-9])"
_MIXED = r"(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])"  # the body mixes cases
# The same for a body of URL-safe base64 (letters, digits, "-" and "_") of 32 characters
_MIXED_URLSAFE = r"(?=[a-z0-9_\-]{0,31}+[A-Z])(?=[A-Z0-9_\-]{0,31}+[a-z])"

# Each shape must match at the start of a run; the first two characters of every alternative
# are its dispatch key (listed explicitly where a shape has several). A longer key is where the
# shape may start: "al" is in every other word, "alt_" is not.
_SHAPES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("AK", "AS", "AB", "AC", "A3"), r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}"),  # AWS
    (("AK",), r"AKCp[A-Za-z0-9]{69}"),  # JFrog
    (("gh",), r"gh[pousr]_[A-Za-z0-9]{36,251}"),  # GitHub
    (("gi",), r"github_pat_[A-Za-z0-9_]{22,255}"),
    (("gl",), r"gl(?:pat|dt|rt|ptt|cbt|ft|soat|imt|oas|agent|ffct)-[A-Za-z0-9_\-]{20,}"),  # GitLab
    (("GR",), r"GR1348941[A-Za-z0-9_\-]{20,}"),  # GitLab runner registration
    (("gl",), r"glc_[A-Za-z0-9_\-]{32,400}"),  # Grafana Cloud
    (("gl",), r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}"),  # Grafana service account
    (("xo",), r"xox[abeoprs]-[A-Za-z0-9\-]{10,}"),  # Slack
    (("xo",), r"xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9\-]{40,}"),
    (("xa",), r"xapp-\d-[A-Za-z0-9\-]{20,}"),  # Slack app-level
    (("xa",), r"xai-[A-Za-z0-9]{70,90}"),  # xAI
    (("sk", "rk"), r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}"),  # Stripe
    (
        ("sk",),
        rf"sk-(?:proj-|svcacct-|admin-|ant-(?:api|admin|sid)\d\d-)?{_DIGIT}[A-Za-z0-9_\-]{{20,}}",
    ),
    (("sk",), r"sk\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{16,}"),  # Mapbox secret
    (("wh",), r"whsec_[A-Za-z0-9]{24,}"),  # Stripe webhook signing
    (("AI",), r"AIza[A-Za-z0-9_\-]{35}"),  # Google API key
    (("GO",), r"GOCSPX-[A-Za-z0-9_\-]{28}"),  # Google OAuth client secret
    (("ya",), r"ya29\.[A-Za-z0-9_\-]{30,}"),  # Google OAuth access token
    (("np",), r"npm_[A-Za-z0-9]{36}"),
    (("py",), r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_\-]{50,}"),
    (("dc",), r"dckr_(?:pat|oat)_[A-Za-z0-9_\-]{27,}"),  # Docker Hub
    (("hf",), rf"hf_{_MIXED}[A-Za-z0-9]{{30,40}}"),  # Hugging Face
    (("ap",), rf"api_org_{_MIXED}[A-Za-z0-9]{{30,40}}"),
    (("SG",), r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}"),  # SendGrid
    (("li",), r"lin_(?:api|oauth)_[A-Za-z0-9]{40}"),  # Linear
    (("hv",), r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),  # HashiCorp Vault
    (("do",), r"do[por]_v1_[a-f0-9]{64}"),  # DigitalOcean
    (("da",), r"dapi[a-f0-9]{32}(?:-\d)?"),  # Databricks
    (("dp",), r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),  # Doppler
    (("HR",), r"HRKU-[A-Za-z0-9_\-]{30,}"),  # Heroku
    (("sh",), r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),  # Shopify
    (("sh",), r"shippo_(?:live|test)_[a-fA-F0-9]{40}"),
    (("AT",), r"AT(?:ATT|CTT)3[A-Za-z0-9_\-]{60,}"),  # Atlassian
    (("LT",), r"LTAI[A-Za-z0-9]{20}"),  # Alibaba Cloud
    (("NR",), r"NR(?:AK|AA|II|JS)-[A-Za-z0-9]{19,32}"),  # New Relic
    (("sn",), r"sntrys_eyJ[A-Za-z0-9_\-]{30,}|sntryu_[a-f0-9]{64}"),  # Sentry
    (("pu",), r"pul-[a-f0-9]{40}"),  # Pulumi
    (("AG",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),  # age
    (("PM",), r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}"),  # Postman
    (("sq",), r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,43}"),  # Square
    (("EA",), r"EAA[A-Za-z0-9]{60,}"),  # Facebook, Square
    (("fi",), r"figd_[A-Za-z0-9_\-]{40}"),  # Figma
    (("se",), rf"secret_{_DIGIT}[A-Za-z0-9]{{43}}"),  # Notion
    (("nt",), r"ntn_[A-Za-z0-9]{40,50}"),
    (("sb",), r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_\-]{20,}"),  # Supabase
    (("ps",), r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_\-.]{32,64}"),  # PlanetScale
    (("gs",), r"gsk_[A-Za-z0-9]{52}"),  # Groq
    (("r8",), r"r8_[A-Za-z0-9]{37}"),  # Replicate
    (("pp",), r"pplx-[A-Za-z0-9]{48}"),  # Perplexity
    (("ts",), r"tskey-[a-z]+-[A-Za-z0-9\-]{20,}"),  # Tailscale
    (("bk",), r"bkua_[a-f0-9]{40}"),  # Buildkite
    (("CF",), r"CFPAT-[A-Za-z0-9_\-]{43}"),  # Contentful
    (("ru",), r"rubygems_[a-f0-9]{48}"),
    (("FL",), r"FLWSECK(?:_TEST)?-[a-fA-F0-9]{32}-X"),  # Flutterwave
    (("rz",), r"rzp_(?:live|test)_[A-Za-z0-9]{14}"),  # Razorpay
    (("SK",), r"SK[0-9a-fA-F]{32}"),  # Twilio API key
    (("ke",), rf"key-{_DIGIT}[0-9a-zA-Z]{{32}}"),  # Mailgun (legacy)
    # JWT, its signature optional: a long payload is read past the scan's limit
    (("ey",), r"eyJ[A-Za-z0-9_\-]{10,}+\.eyJ[A-Za-z0-9_\-]{10,}+(?:\.[A-Za-z0-9_\-]*+)?"),
    (("CL",), r"CLOJARS_[a-z0-9]{60}"),
    (("du",), r"duffel_(?:test|live)_[A-Za-z0-9_\-]{43}"),
    (("EZ",), r"EZAK[a-f0-9]{54}"),  # EasyPost
    (("dt",), r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}"),  # Dynatrace
    (("rd",), r"rdme_[a-z0-9]{70}"),  # ReadMe
    (("pn",), r"pnu_[A-Za-z0-9]{36}"),  # Prefect
    (("ai",), r"aio_[A-Za-z0-9]{28}"),  # Adafruit IO
    (("fo",), r"fo1_[A-Za-z0-9_\-]{43}"),  # Fly.io
    (("fm",), r"fm[12]_[A-Za-z0-9_\-]{40,}"),
    (("nf",), r"nfp_[A-Za-z0-9]{36,40}"),  # Netlify
    (("ck", "cs"), r"c[ks]_[a-f0-9]{40}"),  # WooCommerce
    (("oa",), r"oat_[A-Za-z0-9]{40,}"),  # generic OAuth access tokens (Defang, Linear...)
    (("op",), r"ops_eyJ[A-Za-z0-9_\-]{40,}"),  # 1Password service account
    (("rn",), r"rnd_[A-Za-z0-9]{30,}"),  # Render
    (("ve",), r"vercel_[A-Za-z0-9]{24,}"),
    (("pa",), rf"pat{_MIXED}[A-Za-z0-9]{{14}}\.[a-f0-9]{{64}}"),  # Airtable
    # Aletheia's own hub tokens (hub/tokens.py: ``new_secret``): 24 random bytes in URL-safe
    # base64; a hub's read token must not read an admin token a note holds
    (("alt_",), rf"alt_{_MIXED_URLSAFE}[A-Za-z0-9_\-]{{32}}"),
)
# Shapes without a fixed prefix, tried on runs that contain their marker.
_UNPREFIXED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("Q~", re.compile(r"[A-Za-z0-9_~.\-]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}")),  # Azure AD secret
    ("-us", re.compile(r"[0-9a-f]{32}-us\d{1,2}")),  # Mailchimp
    (".atlasv1.", re.compile(r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-]{60,}")),  # Terraform
    # Mailgun private key; Discord bot token (three dotted base64url parts)
    ("-", re.compile(r"[0-9a-f]{32}-[0-9a-f]{8}-[0-9a-f]{8}")),
    (".", re.compile(r"[MN][A-Za-z0-9]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,38}")),
)


def _dispatch_sources() -> dict[str, str]:
    grouped: dict[str, list[str]] = defaultdict(list)
    for keys, shape in _SHAPES:
        for key in keys:
            grouped[key[:2]].append(shape)
    return {key: "|".join(shapes) for key, shapes in grouped.items()}


# Compiled on first use, per key: a process that never meets a "gh..." run never compiles it,
# which keeps the start of the CLI, the hooks and the servers fast.
_SOURCES = _dispatch_sources()
_COMPILED: dict[str, re.Pattern[str]] = {}


def _shape_for(key: str) -> re.Pattern[str] | None:
    shape = _COMPILED.get(key)
    if shape is None and key in _SOURCES:
        shape = _COMPILED[key] = re.compile(_SOURCES[key])
    return shape


_TRIM = "._~-"
# How far one try of a shape reads. A shape that reads this far is a token, read once more to
# its end: many starts in one long run ("eyJ-eyJ-...", "sk-proj-...-sk-proj-...") then cost
# this much each, not the rest of the run each.
_SCAN = 256
_WORD_CHAR = re.compile(r"[A-Za-z0-9]")
_SEPARATOR = re.compile(r"[_.~\-]")
# A random token glued to other letters or digits: 16 letters and digits, in a part that changes
# between lower case, upper case and digits 3 times or more (16 random ones change about 6 times).
_MIN_RANDOM = 16
_KINDS = re.compile(r"[a-z]++|[A-Z]++|[0-9]++")
_MIN_KIND_CHANGES = 3
# A token glued after a word ("TOKENghp_...", "xxAKIA..."): the word is read this far back, to
# a separator, the start of the run or a token. Digits or mixed case there make it part of a
# blob (base64, base32, hex), where a prefix comes up by chance.
_WORD_WINDOW = 24
_WORD = re.compile(r"[a-z]*+(?:[A-Z][a-z]++)*+|[A-Z]++")  # xx, TOKEN, myToken, GitHubToken
# Prefixes too short to be told inside other letters and digits: "EAA" (Facebook) and "A3T" (AWS)
# followed by letters and digits come up in base64 ("ssh-rsa AAAAB3NzaC1yc2EAAAADAQAB...") and
# base32 by chance.
_ONLY_APART = ("EA", "A3")
# Prefixes that begin names too ("alt_Text_For_The_Hero_Image_v2", "alt_KEY_BINDING_2"): a token
# of theirs must look random wherever it stands, not only glued. Its body of URL-safe base64 is
# cut by "-" and "_" into parts too short to judge alone ("Uf-Q8by_sauw3A-aWi_69bz"), so it is
# random when a part is no part of a name (a word, Word or WORD, a number after it or alone)
# and the whole does not read as words run together ("ToggleFullScreenModeKeyBindingX").
_RANDOM_ONLY = ("alt_",)
# Prefixes whose bodies are letters and digits with no separator, which begin CamelCase names
# too ("hf_ModelLoaderConfigurationForTransformers", "oat_ThisIsTheConfigurationLoader"): a
# body without digits that reads as words run together, judged whole to the end of its letters
# and digits, is a name, unless it has the 34 letters of a Hugging Face token (gitleaks and
# detect-secrets: hf_[A-Za-z]{34}). Of a million random bodies of 34 letters, one read as words,
# so that length is always a token; a random oat_ body of 40 letters and digits has no digit
# about once in a thousand, and then reads as words about once in a million.
_NAMED_PREFIXES = ("hf_", "oat_")
_LETTERS = re.compile(r"[A-Za-z0-9]{0,256}+")
_HUGGING_FACE_BODY = 34


def _names_words(run: str, body: int) -> bool:
    """Whether the letters at ``body`` in ``run`` read as words run together (a name)."""
    word = _LETTERS.match(run, body).group()  # type: ignore[union-attr]
    return len(word) != _HUGGING_FACE_BODY and word.isalpha() and reads_as_words(word)


_NAME_PART = re.compile(r"[A-Z]?+[a-z]*+[0-9]*+|[A-Z]++[0-9]*+")
_SMALL_LETTERS = re.compile(r"[a-z]{0,32}+")  # the rest of a word
# After digits, or letters of one case and digits ("123ghp_", "abc1alt_", "x9alt_", hex "3dghp_"),
# or a word and a number ("Token2ghp_"), only a prefix with its separator: "ghp_", "glpat-",
# "xoxb-", "sk-ant-", "github_pat_", "alt_" hold a "_" or "-" that no base64, base32 or hex
# does. A prefix without one ("AKIA", "EAA") comes up after digits in those by chance, and any
# prefix after letters of random case (in URL-safe base64).
_SEPARATED_PREFIX = re.compile(r"[a-z][a-z0-9]{2,}+[_\-]|[a-z]{2}[_\-][a-z]{3,}+[_\-]")
_CODE = re.compile(r"[a-z0-9]++|[A-Z0-9]++|(?:[a-z]*+(?:[A-Z][a-z]++)++|[A-Z]++)[0-9]++")


@functools.cache
def _key_starts() -> re.Pattern[str]:
    """Where the key of a shape is, glued to what comes before or not."""
    rests: dict[str, set[str]] = defaultdict(set)
    for keys, _ in _SHAPES:
        for key in keys:
            rests[key[0]].add(key[1:])

    def after(first: str) -> str:
        seconds = "".join(sorted(rest for rest in rests[first] if len(rest) == 1))
        longer = [re.escape(rest) for rest in sorted(rests[first]) if len(rest) > 1]
        return "|".join(([f"[{seconds}]"] if seconds else []) + longer)

    return re.compile("|".join(f"{first}(?={after(first)})" for first in sorted(rests)))


def _unprefixed_token(run: str) -> bool:
    """Whether the whole run is a token of a shape without a fixed prefix."""
    return any(marker in run and shape.fullmatch(run) for marker, shape in _UNPREFIXED)


def _shape_end(run: str, start: int, limit: int) -> int:
    """Where the shape that ``run`` has at ``start`` ends when read up to ``limit``, or 0."""
    shape = _shape_for(run[start : start + 2])
    match = shape.match(run, start, limit) if shape is not None else None
    return 0 if match is None else match.end()


def _looks_random(token: str) -> bool:
    """Whether a token glued to other letters or digits is random, not a part of longer words:
    its letters and digits vary, and a part as long as a word changes between lower case, upper
    case and digits again and again ("PACIFIC2024CONFE" in "ASIAPACIFIC2024CONFERENCE" twice;
    "sk-2024-release-candidate" in "disk-2024-release-candidate" has no such part). A hub
    token, judged so wherever it stands, holds a part that is no part of a name instead
    (``_RANDOM_ONLY``)."""
    parts = _SEPARATOR.split(token)
    body = "".join(parts)
    if token.startswith(_RANDOM_ONLY):
        changes = not all(_NAME_PART.fullmatch(part) for part in parts[1:]) and not (
            reads_as_words(token.partition("_")[2])
        )
    else:
        changes = any(len(_KINDS.findall(part)) > _MIN_KIND_CHANGES for part in parts)
    return len(body) >= _MIN_RANDOM and changes and varies(body) and not is_masked(body)


def _token_end(run: str, start: int, limit: int, end: int, *, glued: bool) -> int:
    """Where the vendor token at ``start`` in ``run``, whose shape read up to ``limit``
    (``_SCAN`` characters on, or the run's end) ends at ``end``, ends, or 0 if it is none.

    ``glued``: letters of no token come right before it. A token glued to letters or digits on
    either side must look random ("ASIAPACIFIC..." is a word; "AKIA...1234x" a token).
    """
    read = run[start:end]
    if is_masked(read[-16:]) or is_placeholder(read):
        return 0  # a mask ("ghp_xxxx..."), a placeholder ("xoxb-your-token-here")
    if read.startswith(_NAMED_PREFIXES) and _names_words(run, start + read.index("_") + 1):
        return 0  # a name: "hf_ModelLoaderConfigurationForTransformers"
    if end == limit < len(run):  # a long token: judged by what was read, then read to its end
        if glued and not _looks_random(read):
            return 0
        shape = _shape_for(run[start : start + 2])
        whole = shape.match(run, start) if shape is not None else None
        return end if whole is None else whole.end()
    glued_after = (
        _WORD_CHAR.match(run, end) is not None
        and not _shape_end(run, end, min(len(run), end + _SCAN))  # unless another token follows
    )
    if read.startswith(_RANDOM_ONLY):  # a name cut at the token's length is judged with its
        word = _SMALL_LETTERS.match(run, end)  # last word whole ("IntoTh" + "e")
        read = run[start : word.end() if word else end]
    if (glued or glued_after or read.startswith(_RANDOM_ONLY)) and not _looks_random(read):
        return 0
    return end


def _after_a_word(run: str, start: int, reach: int) -> bool:
    """Whether the letters right before ``start`` make a word a token may be glued to
    ("TOKENghp_...", "xxAKIA..."): the part back to a separator, the start of the run or a token
    (the last ``_WORD_WINDOW`` characters at most) is lower case, upper case or capitalised
    words, or letters of one case and digits before a prefix with its separator ("123ghp_",
    "x9alt_", "3dghp_"). After letters of random case a prefix comes up by chance (in base64,
    base32, hex), and so do the shortest ones anywhere and the ones without a separator after
    digits."""
    if run.startswith(_ONLY_APART, start):
        return False
    last = _SEPARATOR.split(run[max(reach, start - _WORD_WINDOW) : start])[-1]
    if _WORD.fullmatch(last) is not None:
        return True
    return _CODE.fullmatch(last) is not None and _SEPARATED_PREFIX.match(run, start) is not None


def _token_spans(
    run: str, offset: int, begin: int = 0, reach: int = 0
) -> Iterator[tuple[int, int]]:
    """The vendor tokens in one run, wherever they start: at its start, after a "-", "_", "."
    or "~", glued after a word or after another token, even where that token's greedy body
    took the start of this one ("ghp_<36>ghp" + "_<36>": the second "ghp" is tried again).
    ``begin``: read on from there, where the tokens found before end at ``reach``."""
    if _unprefixed_token(run) and not is_masked(run[-16:]):
        yield offset, offset + len(run)
        return
    size = len(run)
    for key in _key_starts().finditer(run, begin):
        start = key.start()
        if start < reach - _SCAN:
            continue  # well inside a token found
        # No shape here, no token whatever stands before it: tested first, as the cheapest
        # necessary condition (a run of one prefix repeated, "ghp_ghp_...", has no shape at all)
        limit = min(size, start + _SCAN)
        end = _shape_end(run, start, limit)
        if not end:
            continue
        glued = start > reach and _WORD_CHAR.match(run, start - 1) is not None
        if glued and not _after_a_word(run, start, reach):
            continue
        end = _token_end(run, start, limit, end, glued=glued)
        if end > reach:
            yield offset + start, offset + end
            reach = end


# The secret access key beside its key ID, in the console's CSV (AKIA...,wJalr...) or a table.
_AWS_ID = ("AKIA", "ASIA")
_AWS_SECRET_AFTER = re.compile(
    r"[ \t]*+[,|;:\t][ \t]*+(?P<secret>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])"
)


def _aws_secrets(text: str, spans: list[tuple[int, int]]) -> Iterator[tuple[int, int]]:
    for start, end in spans:
        if text.startswith(_AWS_ID, start):
            match = _AWS_SECRET_AFTER.match(text, end)
            if match and is_high_entropy(match["secret"]):
                yield match.span("secret")


# A token wrapped in base64 ("echo Z2hwX... | base64 -d", a Docker auth of "user:ghp_..."):
# each long run of base64 that decodes to printable ASCII is searched for tokens in turn.
_BASE64_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{28,4096}+={0,2}(?![A-Za-z0-9+/=])")
_MIN_BASE64 = 28


_SMALL_ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"


def _rereading_start(trimmed: str) -> int:
    """Where a run in which no token was found is read again with the "_" or "-" it ends with.
    A start before it reads none of those, so is judged as in the first reading, where none
    was found: a start reads two shapes at most (its own and one glued after it: ``_SCAN``
    characters each), the words around it, and, for a prefix with its separator
    (``_SEPARATED_PREFIX``), small letters and digits on from its second or fourth character,
    which reach the end only inside the run's last stretch of those ("ghp_ghp_..._" is read
    once, not twice)."""
    stretch = len(trimmed.rstrip(_SMALL_ALNUM))  # where its last stretch of those starts
    return max(0, min(len(trimmed) - 2 * _SCAN, stretch - 3))


def _run_spans(run: str, offset: int) -> list[tuple[int, int]]:
    """The vendor tokens in one run of token characters, read without the ".", "_", "~" and "-"
    it ends with (a sentence's full stop, a dash after it), and then, where it ends with "_" or
    "-", with those: a token of fixed length may end with one ("AIza" + 34 + "-", a hub token
    "alt_" + 31 + "_"). The second reading adds its last token when that one ends in them and
    is new (a token of any length was found without them: "glpat-...-" keeps its last "-"),
    also where the token before took its first letters ("NRAK-<27>alt" + "_<31>_")."""
    trimmed = run.rstrip(_TRIM)
    spans = list(_token_spans(trimmed, offset))
    closed = run.rstrip(".~")
    if len(closed) > len(trimmed):
        # Read again from the last token found, as the first reading stood there: a token added
        # starts after it, and the tokens before it are read alike (a run of many tokens is
        # not read twice); without a token found, from _rereading_start.
        begin = spans[-1][0] - offset if spans else _rereading_start(trimmed)
        reach = spans[-2][1] - offset if len(spans) > 1 else 0
        last = list(_token_spans(closed, offset, begin, reach))[-1:]
        if last and last[0][1] > offset + len(trimmed) and (not spans or last[0][0] > spans[-1][0]):
            spans += last
    return spans


def _wraps_token(run: str) -> bool:
    """Whether the base64 ``run`` decodes to text holding a vendor token."""
    try:
        decoded = binascii.a2b_base64(run + "=" * (-len(run) % 4)).decode("ascii")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return decoded.isprintable() and _vendor_spans(decoded, decode=False) != []


def _vendor_spans(text: str, *, decode: bool) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    wrapped: list[tuple[str, int]] = []  # words that may be base64 of a token
    cursor = 0
    # Splitting on blanks is the fastest way through prose; only long words are scanned.
    for word in [word for word in text.split() if len(word) >= _MIN_RUN]:
        offset = text.find(word, cursor)
        cursor = offset + len(word)
        for found in _RUN.finditer(word):
            spans += _run_spans(found["run"], offset + found.start("run"))
        if len(word) >= _MIN_BASE64:
            wrapped.append((word, offset))
    if not decode:
        return spans
    for word, offset in wrapped:
        # base64 of text mixes cases; a URL is no base64
        if not (word.islower() or word.isupper()) and "://" not in word:
            spans += (
                (offset + match.start(), offset + match.end())
                for match in _BASE64_RUN.finditer(word)
                if _wraps_token(match.group())
            )
    return sorted(spans)


def vendor_token_spans(text: str) -> list[tuple[int, int]]:
    """Where the vendor tokens in ``text`` are, sorted (not those wrapped in base64)."""
    return _vendor_spans(text, decode=False)


def redact_vendor_tokens(text: str) -> str:
    """Replace every vendor-shaped token in ``text``, also wrapped in base64."""
    spans = _vendor_spans(text, decode=True)
    if spans:
        spans = sorted([*spans, *_aws_secrets(text, spans)])
    return redact_span(text, spans)
