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
from collections import Counter
from collections.abc import Callable
from enum import Enum

__all__ = ["REDACTED", "redact_secrets"]

REDACTED = "[REDACTED]"

# Values that stand for a secret without being one. Matched against the whole value.
_PLACEHOLDER = re.compile(
    r"\$\{.*\}|\$\(.*\)|\$[A-Za-z_]\w*"  # shell and env references
    r"|\{\{.*\}\}|<[^<>]*>|%\(\w+\)s|%\w+%"  # template syntaxes
    r"|(.)\1*"  # masks: ******, xxxxxx
    r"|(?i:none|null|nil|true|false|undefined|changeme|change[_-]me|placeholder|your[_-].*)"
    r"|\[REDACTED\]",
    re.DOTALL,
)
_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # request.headers, os.environ
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z]+){2,}")  # SecretStr, TokenPayload
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_RANDOM_CHARS = re.compile(r"[A-Za-z0-9+/=_\-]{16,}")
_MIN_STRONG_LENGTH = 6
_MIN_ENTROPY_BITS = 3.5


def _is_placeholder(value: str) -> bool:
    return _PLACEHOLDER.fullmatch(value) is not None


def _entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character."""
    size = len(value)
    return -sum(n / size * math.log2(n / size) for n in Counter(value).values())


def _is_high_entropy(value: str) -> bool:
    """Whether ``value`` looks random: 16+ token characters mixing letters and digits."""
    return (
        _RANDOM_CHARS.fullmatch(value) is not None
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

# The body stops at the first "-----"; a key cut before its END line is still redacted.
_PEM = re.compile(
    r"(?P<begin>-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)"
    r"(?P<body>(?:[^-]|-(?!----))*+)"
    r"(?P<end>-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----)?"
)
_PEM_LINES = re.compile(r"\s*+(?:[A-Za-z0-9+/=]++(?:\r?\n|\Z))*+")


def _redact_pem(match: re.Match[str]) -> str:
    body, rest = match["body"], ""
    if match["end"] is None:  # truncated: redact the base64 lines only
        cut = _PEM_LINES.match(body)
        split = cut.end() if cut else 0
        body, rest = body[:split], body[split:]
    core = body.strip()
    if not core:
        return match.group(0)
    lead = body[: body.index(core)]
    trail = body[len(lead) + len(core) :]
    return match["begin"] + lead + REDACTED + trail + rest + (match["end"] or "")


# -- URLs ----------------------------------------------------------------------------------

_URL_PASSWORD = re.compile(
    r"(?<![\w+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,30}+://[^\s:/?#@]*+:(?P<secret>[^\s/?#@]++)@"
)
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


# -- HTTP authorization --------------------------------------------------------------------

_BEARER = re.compile(r"(?<![\w\-])(?i:bearer)[ \t]++(?P<secret>[A-Za-z0-9\-._~+/]{16,}+=*+)")
_BASIC = re.compile(
    r"(?i:authorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?(?i:basic)[ \t]++"
    r"(?P<secret>[A-Za-z0-9+/]{8,}+=*+)"
)
_CHARACTER_KINDS = (str.islower, str.isupper, str.isdigit)


def _redact_bearer(match: re.Match[str]) -> str:
    """Redact the token unless it is a plain word ("Bearer authentication-required")."""
    token = match["secret"]
    kinds = sum(any(kind(c) for c in token) for kind in _CHARACTER_KINDS)
    return _redact_group(match) if kinds >= 2 else match.group(0)


# -- Assignments to secret-looking names ---------------------------------------------------

_NAME_ENDINGS = (
    "pass", "pwd", "passwd", "password", "phrase", "secret", "token",
    "credential", "credentials", "key", "auth",
)  # fmt: skip
_ASSIGNMENT = re.compile(
    r"(?<![\w.])(?P<name>[A-Za-z_][\w.\-]{0,80}+)"
    r"(?i:" + "|".join(f"(?<={ending})" for ending in _NAME_ENDINGS) + ")"
    r"[\"']?[ \t]*+(?P<sep>:=|=>|=(?!=)|:(?!:))[ \t]*+"
    r"(?:\"(?P<dq>(?:[^\"\\\n]|\\.){0,512}+)\""
    r"|'(?P<sq>(?:[^'\\\n]|\\.){0,512}+)'"
    r"|(?P<bare>[^\s\"'`,;&()\[\]{}<>]++))"
)
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


def _name_strength(name: str) -> _Strength:
    """How secret the values of ``name`` are: ``DB_PASSWORD`` strong, ``sort_key`` weak."""
    if _compact(name).endswith(_STRONG_SUFFIXES):
        return _Strength.STRONG
    words = _NAME_WORD.findall(name)
    last = words[-1].lower() if words else ""
    if last in _STRONG_WORDS:
        return _Strength.STRONG
    return _Strength.WEAK if last in _WEAK_WORDS else _Strength.NONE


def _is_code(match: re.Match[str], value: str) -> bool:
    """Whether a bare value is a code expression or prose rather than a literal secret."""
    after = match.string[match.end() : match.end() + 1]
    if after in ("(", "[") or _DOTTED_NAME.fullmatch(value) or _TYPE_NAME.fullmatch(value):
        return True  # call, subscript, attribute access or type annotation
    if after in (",", ")", "}") and _IDENTIFIER.fullmatch(value):
        if "_" in value or not (value.islower() or value.isupper()):
            return True  # a variable passed on: f(password=db_password)
    return match["sep"] == ":" and _VALUE_END.match(match.string, match.end()) is None


def _redact_assignment(match: re.Match[str]) -> str:
    strength = _name_strength(match["name"])
    group = next(g for g in ("dq", "sq", "bare") if match[g] is not None)
    value = match[group]
    if (
        strength is _Strength.NONE
        or any(c.isspace() for c in value)
        or _is_placeholder(value)
        or _PATH.fullmatch(value)
        or _compact(match["name"]).endswith(_compact(value))  # password=password
        or (group == "bare" and _is_code(match, value))
    ):
        return match.group(0)
    if strength is _Strength.STRONG and len(value) >= _MIN_STRONG_LENGTH:
        return _redact_group(match, group)
    if strength is _Strength.WEAK and _is_high_entropy(value):
        return _redact_group(match, group)
    return match.group(0)


def _redact_whole(match: re.Match[str]) -> str:
    return REDACTED


def _redact_secret_group(match: re.Match[str]) -> str:
    return _redact_group(match)


# Order matters: structured secrets first, so later rules see [REDACTED] and leave it alone.
_RULES: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (_PEM, _redact_pem),
    (_URL_PASSWORD, _redact_url_password),
    (_WEBHOOK, _redact_secret_group),
    (_VENDOR_TOKEN, _redact_whole),
    (_BASIC, _redact_secret_group),
    (_BEARER, _redact_bearer),
    (_ASSIGNMENT, _redact_assignment),
)


def redact_secrets(text: str) -> str:
    """Replace the secrets in ``text`` with :data:`REDACTED`, keeping their context.

    Args:
        text: Free text: notes, logs, code, configuration, markdown.

    Returns:
        ``text`` with each recognised secret replaced; innocent text is returned unchanged.
        Redacting the result again returns it unchanged.
    """
    for pattern, replace in _RULES:
        text = pattern.sub(replace, text)
    return text
