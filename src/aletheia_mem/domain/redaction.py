"""Redact secrets from free text before it enters the shared memory.

:func:`redact_secrets` replaces every secret it recognises with :data:`REDACTED` and keeps the
context around it (``password=[REDACTED]``, ``postgres://app:[REDACTED]@db/prod``,
``Authorization: Bearer [REDACTED]``), so that notes stay useful to the next agent.

Recognised secrets:

* tokens with a vendor shape: AWS access key ids, GitHub, GitLab, Slack, Stripe, OpenAI,
  Anthropic, Google and npm tokens, and JWTs;
* PEM private key blocks (the ``BEGIN`` and ``END`` lines are kept);
* passwords in URLs (``scheme://user:password@host``) and Slack or Discord webhook URLs;
* ``Bearer`` tokens and ``Authorization: Basic`` credentials;
* literal values assigned to secret-looking names (``DB_PASSWORD=...``, ``"api_key": "..."``,
  ``export GITHUB_TOKEN=...``). Strong names (password, secret, token, api key, credential...)
  redact any literal of 6+ non-space characters; the weak names ``key`` and ``auth`` redact
  only high-entropy values.

Deliberately kept: placeholders (``${DB_PASSWORD}``, ``$TOKEN``, ``<your-token>``,
``{{ vault_password }}``, ``None``, ``null``, masks such as ``******``, and the well-known
default ``changeme``), code expressions (``token = request.headers.get("X")``,
``password=password``), file paths, and assigned values that contain whitespace.

Every pattern is precompiled and made of possessive or bounded repetitions, so matching stays
linear on adversarial input. The output is a fixed point: redacting it again changes nothing.
"""

from __future__ import annotations

import math
import re
import string
from collections import Counter
from collections.abc import Callable
from enum import Enum
from functools import partial

__all__ = ["REDACTED", "redact_secrets"]

REDACTED = "[REDACTED]"

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = re.compile(
    r"\$\w+|<[^<>]*>|%\w+%"  # $TOKEN, <your-token>, %TOKEN%
    r"|(.)\1*"  # masks: ******, xxxxxx
    r"|(?i:none|null|nil|true|false|undefined|changeme|change[_-]me|placeholder|your[_-].*)"
    r"|\[[A-Z_]+\]",  # [MASK], [REDACTED]
    re.DOTALL,
)
# Interpolation anywhere in a value: ${DB_PASSWORD}, $(pass show db), {{ vault }}, '{0}:{1}', %s.
_TEMPLATE = re.compile(r"\$[{(]|\{\{|\{[\w.]*\}|%(?:\(\w+\))?[sd]")
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # request.headers, os.environ
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z]+)++")  # Keyword, SecretStr, TokenPayload
_TYPE_WORDS = frozenset(
    {"object", "string", "number", "boolean", "integer", "callable", "bytearray", "memoryview"}
)
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")  # pygments and CSS themes: Token: "#f8f8f2"
_VARIABLE = re.compile(r"(?=.*(?:_|[a-z][A-Z]))[A-Za-z_]\w*")  # db_password, userToken
_RANDOM_CHARS = re.compile(r"[A-Za-z0-9+/=_\-]+")
_MIN_STRONG_LENGTH = 6
_MIN_RANDOM_LENGTH = 16
_MIN_ENTROPY_BITS = 3.5


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None or _TEMPLATE.search(value) is not None


def _entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def _is_high_entropy(value: str) -> bool:
    """Whether ``value`` looks random: 16+ token characters mixing letters and digits."""
    return (
        len(value) >= _MIN_RANDOM_LENGTH
        and _RANDOM_CHARS.fullmatch(value) is not None
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and _entropy(value) >= _MIN_ENTROPY_BITS
    )


def _redact_group(match: re.Match[str], group: str = "secret") -> str:
    """The whole match with only ``group`` replaced by :data:`REDACTED`."""
    start, end = match.span(group)
    offset = match.start()
    whole = match.group(0)
    return whole[: start - offset] + REDACTED + whole[end - offset :]


# -- PEM private keys ----------------------------------------------------------------------

# The body holds base64, blanks, "Proc-Type: 4,ENCRYPTED" style headers and "\n" escapes (keys
# inside JSON strings); it stops at the first "-----". A key cut before its END line is still
# redacted, up to its last base64 line.
_PEM = re.compile(
    r"(?P<begin>-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)"
    r"(?P<body>(?:[A-Za-z0-9+/=\s:,.\\]|-(?!----))*+)"
    r"(?P<end>-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)?"
)
_PEM_LINES = re.compile(r"(?:\s|\\n)*+(?:[A-Za-z0-9+/=]++(?:\r?\n|\\n|\Z))*+")
_PEM_BLANK = re.compile(r"(?:\s|\\n)*+")  # blanks and "\n" escapes around the base64
_PEM_BLANK_REVERSED = re.compile(r"(?:\s|n\\)*+")  # the same, read from the end


def _redact_pem(match: re.Match[str]) -> str:
    body, rest = match["body"], ""
    if match["end"] is None:  # truncated: redact whole base64 lines only
        lines = _PEM_LINES.match(match.string, match.start("body"))
        split = min(len(body), lines.end() - match.start("body")) if lines else 0
        body, rest = body[:split], body[split:]
    lead = _PEM_BLANK.match(body).end()  # type: ignore[union-attr]
    trail = len(body) - _PEM_BLANK_REVERSED.match(body[::-1]).end()  # type: ignore[union-attr]
    if lead >= trail:
        return match.group(0)
    return match["begin"] + body[:lead] + REDACTED + body[trail:] + rest + (match["end"] or "")


# -- URLs ----------------------------------------------------------------------------------

# Anchored on "://" (a fast literal scan); the scheme is context and needs no checking.
_URL_PASSWORD = re.compile(r"://[^\s:/?#@]*+:(?P<secret>[^\s/?#@]++)@")
_WEBHOOK = re.compile(
    r"https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)"
    r"|(?:discord|discordapp)\.com/api/webhooks)/(?P<secret>[A-Za-z0-9_/\-]++)"
)


def _redact_url_password(match: re.Match[str]) -> str:
    return match.group(0) if _is_placeholder(match["secret"]) else _redact_group(match)


# -- Tokens with a vendor shape (the whole token is replaced) ----------------------------

_VENDOR_SHAPES = (
    r"(?:AKIA|ASIA)[A-Z0-9]{16}",  # AWS access key id
    r"gh[pousr]_[A-Za-z0-9]{30,}+",  # GitHub
    r"github_pat_[A-Za-z0-9_]{22,}+",
    r"glpat-[A-Za-z0-9_\-]{20,}+",  # GitLab
    r"xox[abeoprs]-[A-Za-z0-9\-]{10,}+",  # Slack
    r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}+",  # Stripe
    r"whsec_[A-Za-z0-9]{24,}+",
    r"sk-(?=[A-Za-z_\-]*+[0-9])[A-Za-z0-9_\-]{20,}+",  # OpenAI, Anthropic (sk-ant-)
    r"AIza[A-Za-z0-9_\-]{35}",  # Google API key
    r"npm_[A-Za-z0-9]{30,}+",
    r"eyJ[A-Za-z0-9_\-]++\.eyJ[A-Za-z0-9_\-]++\.[A-Za-z0-9_\-]*+",  # JWT
)
_VENDOR_TOKEN = re.compile(r"(?<![\w\-])(?:" + "|".join(_VENDOR_SHAPES) + r")(?![\w\-])")
# Substrings every vendor token contains: text without any of them skips the regex.
_VENDOR_HINTS = (
    "AKIA", "ASIA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "xox",
    "_live_", "_test_", "whsec_", "sk-", "AIza", "npm_", "eyJ",
)  # fmt: skip


# -- HTTP authorization --------------------------------------------------------------------

# Both start with a character class, which lets the scan skip ahead quickly.
_BEARER = re.compile(r"[Bb](?<![\w\-][Bb])(?i:earer)[ \t]++(?P<secret>[A-Za-z0-9\-._~+/]{16,}+=*+)")
_BASIC = re.compile(
    r"[Aa](?i:uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?(?i:basic)[ \t]++"
    r"(?P<secret>[A-Za-z0-9+/]{8,}+=*+)"
)
_CHARACTER_KINDS = (str.islower, str.isupper, str.isdigit)


def _redact_bearer(match: re.Match[str]) -> str:
    """Redact the token unless it is a plain word ("Bearer authentication-required")."""
    token = match["secret"]
    kinds = sum(any(kind(c) for c in token) for kind in _CHARACTER_KINDS)
    return _redact_group(match) if kinds >= 2 else match.group(0)


# -- Assignments to secret-looking names ---------------------------------------------------

# The scan jumps from one ":" or "=" to the next (a fast character-class scan). Lookbehinds keep
# the separators that follow the last three letters of a secret name (then an optional quote and
# blank), or a run of blanks; the full name is checked in Python. The value is read in a
# lookahead, so a rejected candidate ("Fixed: password=...") never hides the assignments in it.
_NAME_END = r"(?i:ass|pwd|swd|ord|ase|ret|ken|ial|als|key|uth)"
_ASSIGNMENT = re.compile(
    r"(?P<sep>[:=]"
    rf"(?:(?<={_NAME_END}[:=])|(?<={_NAME_END}[\"' \t][:=])|(?<={_NAME_END}[\"'][ \t][:=])"
    r"|(?<=[ \t]{2}[:=]))"
    r"(?:(?<=:)=|(?<==)>|(?<==)(?!=)|(?<=:)(?!:)))"
    r"(?=[ \t]*+(?:\"(?P<dq>(?:[^\"\\\n]|\\.){0,512}+)\""
    r"|'(?P<sq>(?:[^'\\\n]|\\.){0,512}+)'"
    r"|(?P<bare>(?=[^\s\"'`,;&()\[\]{}<>]))))"  # empty: marks where a bare value starts
)
# Measured outside the lookahead, once per run of value characters, to stay linear.
_BARE_VALUE = re.compile(r"[^\s\"'`,;&()\[\]{}<>]++")
_NAME_CHARS = string.ascii_letters + string.digits + "_.-"
_MAX_NAME_LENGTH = 80
# What may follow a bare value after ":" (YAML, headers), as opposed to running prose.
_VALUE_END = re.compile(r"[ \t]*+(?:[,;)}\]#]|//|\r?\n|\Z)")
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_STRONG_SUFFIXES = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
    "apikey", "accesskey", "privatekey", "secretkey", "signingkey", "encryptionkey", "masterkey",
)  # fmt: skip
_STRONG_WORDS = frozenset({"pwd", "pass"})
_WEAK_WORDS = frozenset({"key", "auth"})


class _Strength(Enum):
    NONE = 0
    WEAK = 1  # only high-entropy values are secrets
    STRONG = 2  # any literal of 6+ characters is a secret


def _compact(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "")


def _name_before(text: str, index: int) -> str:
    """The name assigned to by the separator at ``index``: ``"api_key"`` in ``"api_key": ``."""
    head = text[max(0, index - _MAX_NAME_LENGTH) : index].rstrip(" \t")
    if head.endswith(('"', "'")):
        head = head[:-1]
    return head[len(head.rstrip(_NAME_CHARS)) :].lstrip("-.0123456789")


def _name_strength(name: str) -> _Strength:
    """How secret the values of ``name`` are: ``DB_PASSWORD`` strong, ``sort_key`` weak."""
    if _compact(name).endswith(_STRONG_SUFFIXES):
        return _Strength.STRONG
    words = _NAME_WORD.findall(name)
    last = words[-1].lower() if words else ""
    if last in _STRONG_WORDS:
        return _Strength.STRONG
    return _Strength.WEAK if last in _WEAK_WORDS else _Strength.NONE


def _is_code(match: re.Match[str], value: str, end: int) -> bool:
    """Whether a bare value is a code expression or prose rather than a literal secret."""
    text, start, colon = match.string, match.start("bare"), match["sep"] == ":"
    after = text[end : end + 1]
    if (
        after in ("(", "[")  # call or subscript
        or value in _TYPE_WORDS
        or _DOTTED_NAME.fullmatch(value)  # attribute access
        or _TYPE_NAME.fullmatch(value)  # class name
        or (colon and after in (",", ")") and value.isidentifier())  # def f(token: object, ...)
    ):
        return True
    if _VARIABLE.fullmatch(value) and (
        after in (",", ")", "}") or (not colon and text[start - 1] in " \t")
    ):
        return True  # a variable: f(password=db_password), self.passwd = password_mgr
    return colon and _VALUE_END.match(text, end) is None  # prose: "Session token: expired soon"


def _is_secret_value(match: re.Match[str], name: str, value: str, end: int) -> bool:
    """Whether ``value``, assigned to ``name`` and ending at ``end``, is a literal secret."""
    strength = _name_strength(name)
    if strength is _Strength.NONE or len(value) < (
        _MIN_STRONG_LENGTH if strength is _Strength.STRONG else _MIN_RANDOM_LENGTH
    ):
        return False
    if (
        any(c.isspace() for c in value)
        or _is_placeholder(value)
        or _PATH.fullmatch(value)
        or _COLOR.fullmatch(value)
        or _compact(name).endswith(_compact(value))  # password=password
        or (match["bare"] is not None and _is_code(match, value, end))
    ):
        return False
    return strength is _Strength.STRONG or _is_high_entropy(value)


def _redact_assignments(text: str) -> str:
    """Redact the literal values assigned to secret-looking names."""
    parts: list[str] = []
    done = run_end = 0
    for match in _ASSIGNMENT.finditer(text):
        name = _name_before(text, match.start())
        if match["bare"] is None:
            group = "dq" if match["dq"] is not None else "sq"
            start, end = match.span(group)
        else:
            start = match.start("bare")
            if start >= run_end:  # a new run; positions inside a run share its end
                run_end = _BARE_VALUE.match(text, start).end()  # type: ignore[union-attr]
            end = run_end
        if start >= done and name and _is_secret_value(match, name, text[start:end], end):
            parts += (text[done:start], REDACTED)
            done = end
    return "".join([*parts, text[done:]]) if parts else text


def _redact_secret_group(match: re.Match[str]) -> str:
    return _redact_group(match)


def _only_with(hints: tuple[str, ...], rule: Callable[[str], str]) -> Callable[[str], str]:
    """``rule``, skipped (cheap substring tests) on text that contains none of ``hints``."""

    def guarded(text: str) -> str:
        return rule(text) if any(hint in text for hint in hints) else text

    return guarded


# Order matters: structured secrets first, so later rules see [REDACTED] and leave it alone.
_RULES: tuple[Callable[[str], str], ...] = (
    partial(_PEM.sub, _redact_pem),
    partial(_URL_PASSWORD.sub, _redact_url_password),
    partial(_WEBHOOK.sub, _redact_secret_group),
    _only_with(_VENDOR_HINTS, partial(_VENDOR_TOKEN.sub, REDACTED)),
    _only_with(("uthorization", "UTHORIZATION"), partial(_BASIC.sub, _redact_secret_group)),
    partial(_BEARER.sub, _redact_bearer),
    _redact_assignments,
)


def redact_secrets(text: str) -> str:
    """Replace the secrets in ``text`` with :data:`REDACTED`, keeping their context.

    Args:
        text: Free text: notes, logs, code, configuration, markdown.

    Returns:
        ``text`` with each recognised secret replaced; innocent text is returned unchanged.
        Redacting the result again returns it unchanged.
    """
    for rule in _RULES:
        text = rule(text)
    return text
