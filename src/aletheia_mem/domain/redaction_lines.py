"""Secrets recognised by the line around them: URLs, HTTP headers, command lines and prose.

``postgres://app:p@ss/w#rd@db/prod``, ``Authorization: token 0f3a...``, ``curl -u me:pw``,
``mysql -pS3cret``, ``sshpass -p S3cret``, ``--password S3cret``, "the password is hunter22".
Assignments (``password: ...``) are :mod:`aletheia_mem.domain.redaction_names`' job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aletheia_mem.domain.redaction_names import Strength, is_literal_secret, name_strength
from aletheia_mem.domain.redaction_values import (
    character_kinds,
    is_placeholder,
    looks_like_code,
    looks_like_password,
    lower_same_length,
    redact_span,
)

# -- URLs ----------------------------------------------------------------------------------

# The password runs to the last "@" that is followed by a host, so that it may hold "@", "/"
# or "#" itself (postgres://app:p@ss/w#rd@db/prod). Anchored on "://", a fast literal scan.
_URL_USERINFO = re.compile(
    r"://(?P<user>[^\s:/?#@\[\]]{0,128}+):"
    r"(?P<secret>[^\s@]{0,256}+(?:@[^\s@]{0,256}+){0,8})"  # backtracks by "@", not by character
    r"@(?=[A-Za-z0-9\-.\[\]]++(?::\d{1,5})?(?:[/?#\s\"'`<>),;]|$))"
)
_PORT_AND_PATH = re.compile(r"\d{1,5}(?:/.*)?", re.DOTALL)  # https://host:8080/path/@user
# Go MySQL DSNs: app:s3cret@tcp(db:3306)/shop
_GO_DSN = re.compile(r"(?<![\w/:@.])[\w.\-]{1,64}:(?P<secret>[^\s:@/]{1,128}+)@(?:tcp|unix)\(")
_WEBHOOK = re.compile(
    r"https?://(?:hooks\.slack\.com/(?:services|workflows|triggers)"
    r"|(?:discord|discordapp)\.com/api/webhooks"
    r"|[\w\-]+\.webhook\.office\.com/webhookb2)/(?P<secret>[A-Za-z0-9_@/\-]++)"
)


def _url_passwords(text: str) -> Iterator[tuple[int, int]]:
    """The password of each URL, read up to the next "://": a password cannot run into the
    next URL ("postgres://app:pw@db/x=https://u@host"), nor hide that URL's own password."""
    start = text.find("://")
    while start != -1:
        following = text.find("://", start + 3)
        match = _URL_USERINFO.match(text, start, len(text) if following == -1 else following)
        secret = "" if match is None else match["secret"]
        if match and not (is_placeholder(secret) or _PORT_AND_PATH.fullmatch(secret)):
            yield match.span("secret")
        start = following


def redact_urls(text: str) -> str:
    """Passwords in URLs and DSNs, and the secret part of webhook URLs."""
    spans: list[tuple[int, int]] = []
    if "://" in text:
        spans += _url_passwords(text)
        spans += (match.span("secret") for match in _WEBHOOK.finditer(text))
    if "@tcp(" in text or "@unix(" in text:
        spans += (m.span("secret") for m in _GO_DSN.finditer(text) if not is_placeholder(m[1]))
    spans.sort()
    return redact_span(text, spans)


# -- HTTP authorization --------------------------------------------------------------------

_BEARER = re.compile(r"[Bb](?<![\w\-][Bb])(?i:earer)[ \t]++(?P<secret>[A-Za-z0-9\-._~+/]{16,}+=*+)")
# Authorization: Basic ..., token <hex>, Bot ..., SSWS ..., or a bare token.
_AUTHORIZATION = re.compile(
    r"[Aa](?i:uthorization)[\"']?[ \t]*+[:=][ \t]*+[\"']?"
    r"(?:(?P<scheme>[A-Za-z][\w\-]{1,24}+)[ \t]++)?(?P<secret>[^\s\"',;]{8,}+)"
)
_SKIPPED_SCHEMES = frozenset({"bearer", "digest", "negotiate", "ntlm", "aws4-hmac-sha256"})


def _starts(lower: str, word: str, back: int) -> Iterator[int]:
    """The positions ``back`` characters before each ``word`` in the lower-cased text."""
    index = lower.find(word)
    while index != -1:
        if index >= back:
            yield index - back
        index = lower.find(word, index + 1)


def redact_authorization(text: str) -> str:
    """``Bearer`` tokens anywhere, and the credentials of ``Authorization`` headers."""
    lower = lower_same_length(text)
    spans: list[tuple[int, int]] = []
    for start in _starts(lower, "earer", 1):
        match = _BEARER.match(text, start)
        if match and character_kinds(match["secret"]) >= 2 and not is_placeholder(match[1]):
            spans.append(match.span("secret"))
    for start in _starts(lower, "uthorization", 1):
        match = _AUTHORIZATION.match(text, start)
        if match is None:
            continue
        scheme, secret = (match["scheme"] or "").lower(), match["secret"]
        if scheme in _SKIPPED_SCHEMES or is_placeholder(secret):
            continue
        if scheme == "basic" or character_kinds(secret) >= 2:
            spans.append(match.span("secret"))
    spans.sort()
    return redact_span(text, spans)


# -- Command lines -------------------------------------------------------------------------

_VALUE = r"(?:\"[^\"\n]{1,256}+\"|'[^'\n]{1,256}+'|[^\s\"'`]{1,256}+)"
# --password S3cret, --api-key=..., --client-secret "..."
_LONG_FLAG = re.compile(
    rf"--(?<![\w\-]--)(?P<name>[A-Za-z][\w\-]{{1,40}}+)(?:=|[ \t]++)(?!-)(?P<secret>{_VALUE})"
)
# curl -u me:S3cret, --user, --proxy-user
_USER_FLAG = re.compile(
    r"-(?<!\S-)(?:u|U|-user|-proxy-user)(?:[ \t=]++)?[\"']?[^\s:\"']{1,64}+:"
    r"(?P<secret>[^\s\"']{1,256}+)"
)
# mysql -pS3cret (attached); sshpass -p S3cret, docker login -p S3cret, redis-cli -a S3cret
_SHORT_FLAG = re.compile(rf"-(?<!\S-)(?P<flag>[pa])(?P<gap>[ \t]*+)(?P<secret>{_VALUE})")
_ATTACHED_P = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb(?:-dump)?)\b")
_SPACED_P = re.compile(
    r"\b(?:sshpass|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm|az|cf)\b.*\blogin"
    r"|helm\b.*\brepo add|keytool|jarsigner)\b"
)
_SPACED_A = re.compile(r"\bredis-cli\b")
_OPENSSL_PASS = re.compile(r"-(?<!\S-)pass(?:in|out)?[ \t]++pass:(?P<secret>[^\s\"']{1,256}+)")


# How far back on its line a short flag looks for its program ("mysql ... -pS3cret"): a line of
# many flags would otherwise be searched again, whole, for each of them.
_PROGRAM_WINDOW = 256


def _line_start(text: str, index: int) -> str:
    """The line before ``index``: its last ``_PROGRAM_WINDOW`` characters at most."""
    floor = max(0, index - _PROGRAM_WINDOW)
    return text[text.rfind("\n", floor, index) + 1 or floor : index]


def _short_flag_is_secret(match: re.Match[str]) -> bool:
    head = _line_start(match.string, match.start())
    if match["flag"] == "a":
        return bool(match["gap"]) and _SPACED_A.search(head) is not None
    if not match["gap"]:
        return _ATTACHED_P.search(head) is not None
    return _SPACED_P.search(head) is not None


def _flag_value(value: str) -> str:
    return value[1:-1] if value[:1] in "\"'" and len(value) > 1 else value


def redact_command_lines(text: str) -> str:
    """Passwords and tokens given to programs as options."""
    spans: list[tuple[int, int]] = []
    if "--" in text:
        for match in _LONG_FLAG.finditer(text):
            value = _flag_value(match["secret"])
            if name_strength(match["name"]) is not Strength.NONE and is_literal_secret(
                match["name"], value
            ):
                spans.append(match.span("secret"))
    if "-u" in text or "-U" in text or "--user" in text or "--proxy-user" in text:
        spans += (
            match.span("secret")
            for match in _USER_FLAG.finditer(text)
            if not (is_placeholder(match["secret"]) or match["secret"].isdigit())
        )
    if " -p" in text or " -a" in text or text.startswith(("-p", "-a")):
        for match in _SHORT_FLAG.finditer(text):
            value = _flag_value(match["secret"])
            if _short_flag_is_secret(match) and not is_placeholder(value) and len(value) >= 3:
                spans.append(match.span("secret"))
    if "pass:" in text:
        spans += (
            m.span("secret") for m in _OPENSSL_PASS.finditer(text) if not is_placeholder(m[1])
        )
    spans.sort()
    return redact_span(text, spans)


# -- Prose and other line shapes ----------------------------------------------------------

_PROSE_NAMES = ("password", "passphrase", "passwd", "pwd", "pw", "secret", "token", "api key")
# "the password for the staging db is Tr0ub4dor&3", "passphrase: Tr0ub4dor&3", "password x9"
_PROSE = re.compile(
    r"(?i:password|passphrase|passwd|pwd|pw|secret|token|api key)s?"
    r"(?:(?P<gap>[ \t](?i:for|of|on|to|in)[ \t][^\n.;:=]{1,30}?)?[ \t]+(?i:is|was)"
    r"(?:[ \t]+(?i:now|still|set to))?"
    r"[ \t]*+:?|[ \t]*+:|[ \t]++)"
    r"[ \t]*+[`\"']?(?P<secret>[^\s`\"'<>]{6,200}+)"
)
_TRAILING = ".,;:!?)]}"
# Telegram bot tokens: 123456789:AAH...
_TELEGRAM = re.compile(r"(?<!\d)\d{8,10}:(?P<secret>AA[A-Za-z0-9_\-]{33})(?![\w\-])")


def _prose_starts(lower: str) -> list[int]:
    """Where a secret word starts a word in ``lower``."""
    starts: set[int] = set()
    for word in _PROSE_NAMES:
        index = lower.find(word)
        while index != -1:
            if index == 0 or not lower[index - 1].isalnum():
                starts.add(index)
            index = lower.find(word, index + 1)
    return sorted(starts)


def redact_prose(text: str) -> str:
    """Passwords written in sentences, netrc lines and Telegram bot tokens."""
    spans: list[tuple[int, int]] = []
    for start in _prose_starts(lower_same_length(text)):
        match = _PROSE.match(text, start)
        if match is None:
            continue
        secret = match["secret"].rstrip(_TRAILING)
        if looks_like_password(secret) and not looks_like_code(secret):
            begin = match.start("secret")
            spans.append((begin, begin + len(secret)))
    if ":AA" in text:
        spans += (match.span("secret") for match in _TELEGRAM.finditer(text))
    spans.sort()
    return redact_span(text, spans)
