"""What a candidate secret value looks like: placeholder, random, or a plain word.

Shared by every redaction rule (:mod:`aletheia_mem.domain.redaction`), so that ``<your-token>``,
``${DB_PASSWORD}`` or ``xxxxxxxx`` are kept wherever they appear.
"""

from __future__ import annotations

import functools
import math
import re
import string
import unicodedata
from collections import Counter

from aletheia_mem.domain.redaction_trail import note

REDACTED = "[REDACTED]"
_REDACTED_LOWER = REDACTED.lower()

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = re.compile(
    r"\$\w+|<[^<>]*>|%\w+%"  # $TOKEN, <your-token>, %TOKEN%
    r"|(.)\1*"  # masks: ******, xxxxxx
    r"|[xX*.•#]{3,}.{0,4}"  # xxxx1234, ****abcd: masked except the last few characters
    r"|(?i:none|null|nil|true|false|undefined|changeme|change[_-]me|placeholder|redacted"
    r"|(?:your|insert|enter|replace)[_-].*|.*[_-](?:here|goes[_-]here)|replace[_-]?me"
    r"|example|examplepassword|secret|password|\.\.\.|…)"
    r"|\[[A-Z_]+\]|\[redacted\]"  # [MASK], [REDACTED], [redacted] in project keys
    r"|!\w+",  # YAML tags: !vault, !secret, !Ref
    re.DOTALL,
)
# Interpolation anywhere in a value: ${DB_PASSWORD}, $(pass show db), {{ vault }}, '{0}:{1}', %s.
_TEMPLATE = re.compile(r"\$[{(]|\{\{|\{[\w.]*\}|%(?:\(\w+\))?[sd]|\$\$|#\{")
_RANDOM_CHARS = re.compile(r"[A-Za-z0-9+/_\-%.~]+={0,3}")  # "=" only as base64 padding
_MIN_RANDOM_LENGTH = 16
_MIN_ENTROPY_BITS = 3.2
_MIN_HEX_ENTROPY_BITS = 2.9  # hex has at most 4 bits per character
_HEX = re.compile(r"[0-9a-fA-F]+")
_CHARACTER_KINDS = (str.islower, str.isupper, str.isdigit)


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


@functools.lru_cache(maxsize=4)
def lower_same_length(text: str) -> str:
    """``text`` lower-cased with every index unchanged (``str.lower`` may lengthen "İ").

    Cached: the rules of one redaction ask for the same text, unchanged when it holds no
    secret, and a string keeps its hash."""
    lower = text.lower()
    return lower if len(lower) == len(text) else text.translate(_ASCII_LOWER)


# What a form or a log says of a secret: "Password: required", "token=expired"
_STATUS_WORDS = frozenset(
    {
        "required", "optional", "invalid", "incorrect", "missing", "empty", "expired", "revoked",
        "rotated", "hidden", "masked", "unset", "unknown", "disabled", "deleted", "n/a",
    }
)  # fmt: skip


# The examples of vendors' documentation, exactly as written there: public, and kept so that
# examples copied from the docs read as they do there (gitleaks' allowlists keep them too).
_DOCUMENTED_EXAMPLES = frozenset(
    {
        "AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # AWS
        "AKIAI44QH8DHBEXAMPLE", "je7MtGbClwBF/2Zp9Utk/h3yCo8nvbEXAMPLEKEY",
    }
)  # fmt: skip


def is_placeholder(value: str) -> bool:
    """Whether ``value`` stands for a secret (``<token>``, ``${PW}``, ``xxxx``, a documented
    example) or is one."""
    return (
        _PLACEHOLDER.fullmatch(value) is not None
        or value in _DOCUMENTED_EXAMPLES
        or value.lower() in _STATUS_WORDS
        or _TEMPLATE.search(value) is not None
        # redacted already, maybe then lower-cased (project keys): a second pass leaves it alone
        or REDACTED in value
        or _REDACTED_LOWER in value
    )


def is_masked(body: str) -> bool:
    """Whether a token body is a mask or a sequence rather than random (``XXXX``, ``0000``)."""
    distinct = set(body.lower())
    return len(distinct) <= 3 or distinct <= set("x*.-_0<>")


def entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def character_kinds(value: str) -> int:
    """How many of lower case, upper case and digits ``value`` mixes."""
    return sum(any(kind(c) for c in value) for kind in _CHARACTER_KINDS)


def is_high_entropy(value: str, min_length: int = _MIN_RANDOM_LENGTH) -> bool:
    """Whether ``value`` looks random: token characters mixing letters and digits."""
    return (
        len(value) >= min_length
        and _RANDOM_CHARS.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and varies(value)
        and not is_masked(value)
    )


def varies(value: str) -> bool:
    """Whether the characters of ``value`` vary as much as a random value's (in bits each)."""
    return entropy(value) >= (_MIN_HEX_ENTROPY_BITS if _HEX.fullmatch(value) else _MIN_ENTROPY_BITS)


# Tokenizers and models, named after the word "token": cl100k_base, o200k_base, gpt-4o-mini,
# text-embedding-3-small. Lower-case parts, each a word, a number or short ("4o", "100k").
_MODEL_NAME = re.compile(r"[a-z][a-z0-9]*+(?:[_\-.][a-z0-9]++)++")
_MODEL_PART = re.compile(r"[a-z]++|[0-9]++|[a-z0-9]{1,6}+")
_MODEL_NAME_SPLIT = re.compile(r"[_\-.]")


def is_model_name(value: str) -> bool:
    """Whether ``value`` names a tokenizer or a model rather than being a token."""
    return _MODEL_NAME.fullmatch(value) is not None and all(
        _MODEL_PART.fullmatch(part) for part in _MODEL_NAME_SPLIT.split(value)
    )


# Paths without a leading "/": uploads/2024/01/report.pdf, projects/p/secrets/db/versions/1
_PATH_CHARS = re.compile(r"[\w.\-@]++(?:/[\w.\-@]++)++")
_FILE_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}")
_PATH_HEAD = re.compile(r"[a-z]{3,}+[a-z\-]*+/")
_MIN_PATH_SLASHES = 2


def is_relative_path(value: str) -> bool:
    """Whether ``value`` is a path or resource name rather than base64 holding "/"."""
    if "/" not in value or _PATH_CHARS.fullmatch(value) is None:
        return False
    dot = value.rfind(".")
    if dot > value.rfind("/") and _FILE_EXTENSION.fullmatch(value, dot):
        return True
    return value.count("/") >= _MIN_PATH_SLASHES and _PATH_HEAD.match(value) is not None


def is_random_path(value: str) -> bool:
    """Whether a value shaped like a path is base64 holding "/" (``wJalr.../K7MD.../bPx...``),
    maybe with a file extension: every segment mixes kinds of characters, as no directory's
    name does (``uploads/2024/01/Report2.pdf``, ``src/Components/Button2.tsx``)."""
    dot = value.rfind(".")
    stem = value[:dot] if dot > value.rfind("/") else value
    return (
        character_kinds(stem) == len(_CHARACTER_KINDS)
        and is_high_entropy(stem)
        and all(character_kinds(segment) >= 2 for segment in stem.split("/"))
    )


# A file name: a stem and a usual extension (the stem may be a password: hunter2.txt)
_FILE_NAME = re.compile(
    r"(?P<stem>[^\s./]{1,256}+)\.(?i:py|txt|json|ya?ml|toml|ini|cfg|conf|env|pem|key|md|sh|js"
    r"|ts|html?|csv|log|xml|zip|gz|tar|bak)"
)


def is_secret_file_name(value: str) -> bool:
    """Whether ``value`` is a file name whose stem reads as a password (``hunter2.txt``,
    ``kYYqhXHdO2x9.py``) rather than as a name (``password_reset.py``, ``config.py``)."""
    match = _FILE_NAME.fullmatch(value)
    return (
        match is not None
        and looks_like_password(match["stem"])
        and not looks_like_code(match["stem"])
        and _SNAKE_CASE.fullmatch(match["stem"]) is None  # reset_v2.py
    )


# A name in snake case, maybe with numbers: id_ed25519, reset_v2, created_at2
_SNAKE_CASE = re.compile(r"[a-z]++(?:_[a-z0-9]++)++")


# Words joined by hyphens, as in prose: "Kubernetes-managed", "OAuth2-based", "v2-compatible";
# versions: "v1.2.3", "2.0.1-rc1"
_HYPHENATED_WORDS = re.compile(r"[A-Za-z0-9]++(?:-[a-z]{3,}+)++|[vV]?+\d++(?:\.\d++)++(?:-\w++)?+")


def reads_as_secret(value: str, strong: bool) -> bool:
    """Whether a word followed by more words, after a secret name and a separator, is the
    secret rather than prose (``api_key: <key> for staging``, not ``api_key: from the env``):
    a random value, or after a strong name one that mixes lower and upper case and digits
    (``kYYqhXHdO2x9``; not ``AES256``, ``HMAC-SHA256``, ``id_ed25519``, ``gcp-sa-2024``)."""
    if (
        is_placeholder(value)
        or looks_like_code(value)
        or is_relative_path(value)
        or _HYPHENATED_WORDS.fullmatch(value) is not None
        or _SNAKE_CASE.fullmatch(value) is not None
    ):
        return False
    if is_high_entropy(value):
        return True
    return strong and character_kinds(value) == len(_CHARACTER_KINDS)


# A Kubernetes or Secret Manager secret's name: lower-case words and numbers joined by "-", the
# first a word (db-creds, my-app-tls-2024, api-key)
_RESOURCE_NAME = re.compile(r"[a-z]{2,}+(?:-[a-z0-9]++)++")


def is_resource_name(value: str) -> bool:
    """Whether ``value`` reads as a secret's name (``db-creds``) rather than its value."""
    return _RESOURCE_NAME.fullmatch(value) is not None


# A canonical UUID or a ULID: identifiers, named "key" or "session" as often as not
_IDENTIFIER = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|[0-7][0-9A-HJKMNP-TV-Z]{25}"
)


def is_identifier(value: str) -> bool:
    """Whether ``value`` is a UUID or a ULID."""
    return _IDENTIFIER.fullmatch(value) is not None


def looks_like_password(value: str) -> bool:
    """Whether a word given after "password is" is a password rather than prose.

    A password mixes kinds of characters (``hunter22``, ``Tr0ub4dor&3``); a word of one case
    without digits or symbols (``required``, ``incorrect``) is prose.
    """
    if len(value) < 6 or is_placeholder(value):
        return False
    # a soft hyphen or a zero-width character is no symbol: it prints as nothing
    symbols = any(not c.isalnum() and unicodedata.category(c) != "Cf" for c in value)
    return (
        symbols
        or any(c.isdigit() for c in value)
        or (character_kinds(value) >= 2 and any(c.isupper() for c in value[1:]))
    )


_CODE = re.compile(
    r"(?:~|\.{1,2})?/[\w.\-/]*"  # a path
    r"|[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++"  # attribute access: request.headers
    r"|(?=.*(?:_|[a-z][A-Z]))(?!.*\d)[A-Za-z_]\w*"  # a variable: db_password, userToken
    r"|.*[()\[\]{}=].*"  # a call, a subscript, an expression
    r"|#[0-9A-Fa-f]{3,8}",  # a colour: Token: "#f8f8f2"
    re.DOTALL,
)


def looks_like_code(value: str) -> bool:
    """Whether ``value`` is a path, a name, an expression or a colour rather than a secret."""
    return _CODE.fullmatch(value) is not None


# A private key's BEGIN or END line is no part of a secret: a value or token glued to one
# ("password=...-----BEGIN RSA PRIVATE KEY-----") ends before it, so that the block stays whole.
_ARMOR = re.compile(r"-----(?:BEGIN|END)")


def _before_armor(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    cut: list[tuple[int, int]] = []
    for start, end in spans:
        armor = _ARMOR.search(text, start, end)
        if armor is None:
            cut.append((start, end))
        elif armor.start() > start:
            cut.append((start, armor.start()))
    return cut


def redact_span(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with each of the sorted ``spans`` replaced by REDACTED (overlapping spans as
    one)."""
    if spans and "-----" in text:
        spans = _before_armor(text, spans)
    if not spans:
        return text
    note(spans, len(REDACTED))
    parts: list[str] = []
    done = 0
    for start, end in spans:
        if start < done:  # inside the last one: redacted with it, to whichever end is further
            done = max(done, end)
            continue
        parts += (text[done:start], REDACTED)
        done = end
    parts.append(text[done:])
    return "".join(parts)
