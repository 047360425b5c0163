"""Secrets recognised by the line around them: URLs, HTTP headers, command lines and prose.

``postgres://app:p@ss/w#rd@db/prod``, ``Authorization: token 0f3a...``, ``Cookie: sid=...``,
``curl -u me:pw``, ``mysql -pS3cret``, ``sshpass -p S3cret``, ``--password S3cret``,
``smbclient -U me%S3cret``, ``htpasswd -b f me S3cret``, ``IDENTIFIED BY 'S3cret'``,
``echo S3cret | docker login --password-stdin``, "the password is hunter22",
"Password for admin: S3cret", ``gh secret set DB_PASSWORD --body S3cret``,
``aws configure set aws_secret_access_key wJalr...``, ``api_key: wJalr... for staging``,
``.pgpass`` lines; a secret's name is kept (``kubectl get secret db-creds``). Assignments
(``password: ...``) are :mod:`aletheia_mem.domain.redaction_names`' job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from aletheia_mem.domain.redaction_names import (
    Strength,
    compact,
    is_literal_secret,
    is_public_name,
    name_strength,
    name_words,
    names_identifier,
)
from aletheia_mem.domain.redaction_values import (
    character_kinds,
    is_high_entropy,
    is_model_name,
    is_placeholder,
    is_relative_path,
    is_resource_name,
    looks_like_code,
    looks_like_password,
    lower_same_length,
    reads_as_secret,
    redact_span,
)

# -- URLs ----------------------------------------------------------------------------------

# The password runs to the last "@" that is followed by a host, so that it may hold "@", "/"
# or "#" itself (postgres://app:p@ss/w#rd@db/prod). Anchored on "://", a fast literal scan.
# The host is a name, an IPv4 address or a bracketed IPv6 literal ([2001:db8::1], [fe80::1%25en0]).
_URL_USERINFO = re.compile(
    r"://(?P<user>[^\s:/?#@\[\]]{0,128}+):"
    r"(?P<secret>[^\s@]{0,256}+(?:@[^\s@]{0,256}+){0,8})"  # backtracks by "@", not by character
    r"@(?=(?:\[[0-9A-Fa-f:.]{2,45}+(?:%25[\w.~\-]{1,32}+)?\]|[A-Za-z0-9\-.\[\]]++)"
    r"(?::\d{1,5})?(?:[/?#\s\"'`<>),;]|$))"
)
# A token used as the URL's user, without a password: https://<40 hex>@github.com/org/repo
_URL_TOKEN_USER = re.compile(
    r"://(?P<secret>[A-Za-z0-9_\-.~]{32,256}+)@(?=[A-Za-z0-9\-.\[\]]++(?::\d{1,5})?(?:[/?#\s\"'`<>),;]|$))"
)
_MIN_TOKEN_USER = 32
# A URL inside a query string, percent-encoded: next=https%3A%2F%2Falice%3AS3cret%40host
_ENCODED_USERINFO = re.compile(
    r"(?i:%3A%2F%2F)[^\s%&/?#@]{0,128}+(?i:%3A)"
    r"(?P<secret>(?:[^\s%&]|%(?!40|3[Aa]%2[Ff])[0-9A-Fa-f]{2}){1,256}+)(?=%40)"
)
_PORT_AND_PATH = re.compile(r"\d{1,5}(?:/.*)?", re.DOTALL)  # https://host:8080/path/@user
_ENCODED_PORT_AND_PATH = re.compile(r"\d{1,5}(?:%2[Ff].*)?", re.DOTALL)
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
        elif match is None:
            user = _URL_TOKEN_USER.match(text, start, len(text) if following == -1 else following)
            if user and is_high_entropy(user["secret"], _MIN_TOKEN_USER):
                yield user.span("secret")
        start = following


def redact_urls(text: str) -> str:
    """Passwords in URLs and DSNs, and the secret part of webhook URLs."""
    spans: list[tuple[int, int]] = []
    if "://" in text:
        if "@" in text:  # every URL password and token user is followed by one
            spans += _url_passwords(text)
        spans += (match.span("secret") for match in _WEBHOOK.finditer(text))
    if "%" in text and ("%2F%2F" in text or "%2f%2f" in text):
        spans += (
            m.span("secret")
            for m in _ENCODED_USERINFO.finditer(text)
            if not _ENCODED_PORT_AND_PATH.fullmatch(m["secret"])
        )
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


# Cookie: a=1; b=2 (every pair a cookie); Set-Cookie: a=1; Path=/ (the first pair only);
# document.cookie = "a=1".
_COOKIE_HEADER = re.compile(r"(?i:cookie)[\"']?[ \t]*+[:=][ \t]*+[\"']?")
_COOKIE_PAIR = re.compile(
    r"(?P<name>[^=;\s\"',]{1,128}+)=(?P<secret>\"[^\"\n]{0,4096}+\"|[^;\s\"',]{0,4096}+)"
    r"(?P<more>[ \t]*+;[ \t]*+)?"
)


def _is_cookie_secret(name: str, value: str) -> bool:
    """Whether a cookie's ``value`` is a credential: any literal of a session-like name
    (``session=abc123``), a random value of any other (``_gh_sess``, ``__Host-id``)."""
    value = value.strip('"')
    if len(value) < 6 or is_placeholder(value) or value.isalpha():  # "deleted", "expired"
        return False
    if name_strength(name) is Strength.NONE:
        return is_high_entropy(value)
    return True


# curl -b 'sid=...', curl --cookie "a=1; b=2" (a value without "=" names a cookie file)
_CURL_COOKIE = re.compile(r"-(?<!\S-)(?:b|-cookie)(?:[ \t]++|=)[\"']?")
_CURL = re.compile(r"\bcurl\b")


def _cookie_pairs(text: str, at: int, every_pair: bool) -> Iterator[tuple[int, int]]:
    """The secret values among the ``name=value`` pairs from ``at``."""
    pair = _COOKIE_PAIR.match(text, at)
    while pair is not None:
        if _is_cookie_secret(pair["name"], pair["secret"]):
            yield pair.span("secret")
        more = every_pair and pair["more"] is not None
        pair = _COOKIE_PAIR.match(text, pair.end()) if more else None


def _cookie_spans(text: str, lower: str) -> Iterator[tuple[int, int]]:
    for start in _starts(lower, "cookie", 0):
        if start and lower[start - 1].isalnum():
            continue
        header = _COOKIE_HEADER.match(text, start)
        if header is not None:
            every_pair = lower[max(0, start - 4) : start] != "set-"  # Set-Cookie: attributes
            yield from _cookie_pairs(text, header.end(), every_pair)
    if "curl" in lower:
        for flag in _CURL_COOKIE.finditer(text):
            if _CURL.search(_line_start(text, flag.start())):
                yield from _cookie_pairs(text, flag.end(), every_pair=True)


def redact_authorization(text: str) -> str:
    """``Bearer`` tokens anywhere, and the credentials of ``Authorization`` and ``Cookie``
    headers."""
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
    spans += _cookie_spans(text, lower)
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
_SHORT_FLAG = re.compile(rf"-(?<!\S-)(?P<flag>[paw])(?P<gap>[ \t]*+)(?P<secret>{_VALUE})")
_ATTACHED_P = re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mariadb(?:-dump)?)\b")
_SPACED_P = re.compile(
    r"\b(?:sshpass|(?:docker|podman|nerdctl|buildah|skopeo|oras|helm|az|cf)\b.*\blogin"
    r"|helm\b.*\brepo add|keytool|jarsigner)\b"
)
# Where a command starts on its line: the line's start, after a prompt ("$ ", "C:\\> "), a pipe,
# ";", "&&" or "(", with "sudo" or a path before the program. A name that is also a common word
# or part of another ("some-mongo", "net user growth") counts only there.
_COMMAND_AT = r"(?:^|[|;&(`]|[$#>][ \t])[ \t]*+(?:sudo[ \t]++)?(?:[\w.\-]*+/)*+"
# The mongo shells as a word of their own ("some-mongo" and "mongo-express" are other names),
# and their -p value never a port mapping (docker's "-p 27017:27017" on the same line).
_MONGO_COMMAND = re.compile(
    r"(?<![\w\-.])mongo(?:sh|dump|restore|export|import|stat|top)?(?![\w\-])"
)
_PORTS = re.compile(r"\d{1,5}+(?::\d{1,5}+){0,2}+(?:/(?:tcp|udp))?")
_SPACED_A = re.compile(r"\bredis-cli\b")
_SPACED_W = re.compile(r"\bldap(?:search|add|modify|delete|passwd|whoami|compare|modrdn|exop)\b")
# smbclient -U admin%S3cret, rpcclient -U 'DOMAIN\admin%S3cret'
_PERCENT_USER = re.compile(
    r"-(?<!\S-)(?:U|-user)(?:[ \t=]++)[\"']?[^\s%\"']{1,64}+%(?P<secret>[^\s\"']{1,256}+)"
)
_SMB = re.compile(r"\b(?:smbclient|rpcclient|smbget|smbcacls|smbmap|smbtree|winexe|net|mount)\b")
# htpasswd -b[c] FILE USER PASSWORD, htpasswd -nb USER PASSWORD
_HTPASSWD = re.compile(
    r"\bhtpasswd(?P<flags>(?:[ \t]++-[A-Za-z]{1,8}+)++)"
    r"(?P<args>(?:[ \t]++[^\s\-][^\s]{0,255}+){2,3}+)"
)
# net user NAME PASSWORD [/add] (Windows)
_NET_USER = re.compile(
    r"\b(?i:net[ \t]++user)[ \t]++(?:\"[^\"\n]{1,64}+\"|[^\s\"/]{1,64}+)[ \t]++"
    r"(?P<secret>[^\s/\"*][^\s]{0,255}+)"
)
# SQL: CREATE USER ... IDENTIFIED BY 'S3cret', IDENTIFIED WITH plugin BY 'S3cret'
_IDENTIFIED_BY = re.compile(
    r"(?i:identified)[ \t]++(?:(?i:with)[ \t]++[\w\-]{1,64}+[ \t]++)?(?i:by)[ \t]++"
    r"(?:(?i:password)[ \t]++)?(?:'(?P<sq>[^'\n]{1,256}+)'|\"(?P<dq>[^\"\n]{1,256}+)\""
    r"|(?P<bare>[^\s;'\"]{1,256}+))"
)
# The statements that give an account its password: CREATE/ALTER USER, ROLE or LOGIN; GRANT.
_SQL_ACCOUNT = re.compile(r"\b(?i:(?:create|alter)[ \t\n]++(?:user|role|login)|grant)\b")
_AT_COMMAND_END = re.compile(_COMMAND_AT + r"$")
_OPENSSL_PASS = re.compile(r"-(?<!\S-)pass(?:in|out)?[ \t]++pass:(?P<secret>[^\s\"']{1,256}+)")
# echo S3cret | docker login --password-stdin; printf '%s' 'S3cret' | helm registry login ...
_STDIN_FLAG = "--password-stdin"
_ECHOED = re.compile(
    r"\b(?:echo|printf)(?:[ \t]++-[neE]{1,3}+)?"
    r"(?:[ \t]++(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"))?"
    rf"[ \t]++(?P<secret>{_VALUE})[ \t]*+\|(?!\|)"
)


# How far back on its line a short flag looks for its program ("mysql ... -pS3cret"): a line of
# many flags would otherwise be searched again, whole, for each of them.
_PROGRAM_WINDOW = 256


def _line_start(text: str, index: int) -> str:
    """The line before ``index``: its last ``_PROGRAM_WINDOW`` characters at most."""
    floor = max(0, index - _PROGRAM_WINDOW)
    return text[text.rfind("\n", floor, index) + 1 or floor : index]


# Words each program pattern needs in a flag's line: searched for only where one is there (an
# "in" test), since a line of many flags is searched again for each of them. "login" stands for
# the container logins, "repo add" for helm's.
_ATTACHED_P_WORDS = ("mysql", "mariadb")
_SPACED_P_WORDS = ("sshpass", "login", "repo add", "keytool", "jarsigner")


def _holds(head: str, words: tuple[str, ...]) -> bool:
    return any(word in head for word in words)


def _short_flag_is_secret(match: re.Match[str]) -> bool:
    """Whether the short flag at ``match`` gives a password to its line's program."""
    if match["flag"] != "p" and not match["gap"]:
        return False
    head = _line_start(match.string, match.start())
    if match["flag"] == "a":
        return "redis-cli" in head and _SPACED_A.search(head) is not None
    if match["flag"] == "w":
        return "ldap" in head and _SPACED_W.search(head) is not None
    if not match["gap"]:
        return _holds(head, _ATTACHED_P_WORDS) and _ATTACHED_P.search(head) is not None
    if _holds(head, _SPACED_P_WORDS) and _SPACED_P.search(head) is not None:
        return True
    return (
        "mongo" in head
        and _MONGO_COMMAND.search(head) is not None
        and not _PORTS.fullmatch(match["secret"])
    )


_SHORT_FLAG_WORDS = ("redis-cli", "ldap", *_ATTACHED_P_WORDS, *_SPACED_P_WORDS, "mongo")


def _flag_value(value: str) -> str:
    return value[1:-1] if value[:1] in "\"'" and len(value) > 1 else value


def _piped_passwords(text: str) -> Iterator[tuple[int, int]]:
    """The value echoed into each ``--password-stdin`` command on its line."""
    index = text.find(_STDIN_FLAG)
    while index != -1:
        echoes = list(_ECHOED.finditer(text, index - len(_line_start(text, index)), index))
        if echoes:  # the last echo before the flag is the one piped into it
            echoed = echoes[-1]
            value = _flag_value(echoed["secret"])
            if len(value) >= 3 and not is_placeholder(value):
                yield echoed.span("secret")
        index = text.find(_STDIN_FLAG, index + 1)


def _htpasswd_passwords(text: str) -> Iterator[tuple[int, int]]:
    """The last argument of ``htpasswd -b FILE USER PASSWORD`` (``-nb USER PASSWORD``)."""
    for match in _HTPASSWD.finditer(text):
        flags = match["flags"]
        if "b" not in flags or "D" in flags or "v" in flags:
            continue
        args = match["args"].split()
        if len(args) == 3 - ("n" in flags) and not is_placeholder(args[-1]):
            yield match.end("args") - len(args[-1]), match.end("args")


def _program_passwords(text: str) -> Iterator[tuple[int, int]]:
    """Passwords given as an argument: smbclient -U u%p, htpasswd -b, net user, SQL."""
    if "%" in text and ("-U" in text or "--user" in text):
        for match in _PERCENT_USER.finditer(text):
            head = _line_start(text, match.start())
            if _SMB.search(head) and not is_placeholder(match["secret"]):
                yield match.span("secret")
    lower = lower_same_length(text)
    if "htpasswd" in lower:
        yield from _htpasswd_passwords(text)
    if "net user" in lower:
        for match in _NET_USER.finditer(text):
            command = _AT_COMMAND_END.search(_line_start(text, match.start())) is not None
            if command and not is_placeholder(match["secret"]) and len(match["secret"]) >= 3:
                yield match.span("secret")
    if "identified" in lower:
        for match in _IDENTIFIED_BY.finditer(text):
            statement = text[max(0, match.start() - _PROGRAM_WINDOW) : match.start()]
            if not _SQL_ACCOUNT.search(statement):  # "identified by its address": prose
                continue
            group = "sq" if match["sq"] is not None else "dq" if match["dq"] is not None else "bare"
            if not is_placeholder(match[group]):
                yield match.span(group)


def redact_command_lines(text: str) -> str:
    """Passwords and tokens given to programs as options."""
    spans: list[tuple[int, int]] = []
    if "--" in text:
        for match in _LONG_FLAG.finditer(text):
            value = _flag_value(match["secret"])
            if compact(match["name"]) == "secret" and is_resource_name(value):
                continue  # gcloud's --secret=api-key: the secret's name
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
    if (" -" in text and (" -p" in text or " -a" in text or " -w" in text)) or text.startswith(
        ("-p", "-a")
    ):
        for match in _SHORT_FLAG.finditer(text) if _holds(text, _SHORT_FLAG_WORDS) else ():
            value = _flag_value(match["secret"])
            if len(value) >= 3 and _short_flag_is_secret(match) and not is_placeholder(value):
                spans.append(match.span("secret"))
    if "pass:" in text:
        spans += (
            m.span("secret") for m in _OPENSSL_PASS.finditer(text) if not is_placeholder(m[1])
        )
    if _STDIN_FLAG in text:
        spans += _piped_passwords(text)
    spans += _program_passwords(text)
    spans.sort()
    return redact_span(text, spans)


# -- Prose and other line shapes ----------------------------------------------------------

# "the password for the staging db is Tr0ub4dor&3", "passphrase: Tr0ub4dor&3", "password x9",
# "Password for admin: Tr0ub4dor&3" (a prompt and what was typed)
_PROSE = re.compile(
    r"(?i:password|passphrase|passwd|pwd|pw|secret|token|api key)s?"
    r"(?:(?:[ \t](?i:for|of|on|to|in)[ \t][^\n.;:=]{1,30}?)?"
    r"[ \t]+(?i:is|was)(?:[ \t]+(?i:now|still|set to))?[ \t]*+:?"
    r"|[ \t](?i:for|of|on|to|in)[ \t][^\n.;:=]{1,30}+:"  # a prompt: "Password for admin:"
    r"|[ \t]*+:|[ \t]++)"
    r"[ \t]*+[`\"']?(?P<secret>[^\s`\"'<>]{6,200}+)"
)
_TRAILING = ".,;:!?)]}"
_FLAG_VALUE = re.compile(
    r"--?[A-Za-z][\w\-]{0,40}+(?:=|[ \t]++)[`\"']?(?P<secret>[^\s`\"'<>]{6,200}+)"
)
# Telegram bot tokens: 123456789:AAH...
_TELEGRAM = re.compile(r"(?<!\d)\d{8,10}:(?P<secret>AA[A-Za-z0-9_\-]{33})(?![\w\-])")
# A .pgpass line, alone on its line: hostname:port:database:username:password, ":" escaped "\:".
# Found by its port field (a fast scan for ":"), then matched from the start of its line.
_PGPASS_HOST_LENGTH = 128
_PGPASS_FIELD = r"(?:[^\s:\\]|\\.){1,128}+"
_PGPASS_PORT = re.compile(r":(?:\d{1,5}|\*):")
_PGPASS = re.compile(
    rf"[ \t]{{0,8}}+{_PGPASS_FIELD}:(?:\d{{1,5}}|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:"
    r"(?P<secret>(?:[^\s:\\]|\\.){1,256}+)[ \t]*+(?=\r?\n|\Z)"
)
_PGPASS_MIN_COLONS = 4


def _pgpass_passwords(text: str) -> Iterator[tuple[int, int]]:
    """The password of each line shaped like a .pgpass entry, each line read once."""
    port = _PGPASS_PORT.search(text)
    while port is not None:
        floor = max(0, port.start() - _PGPASS_HOST_LENGTH - 8)
        line = text.rfind("\n", floor, port.start()) + 1
        match = _PGPASS.match(text, line) if line or not floor else None  # else: host too long
        if match and looks_like_password(match["secret"]):
            yield match.span("secret")
        line_end = text.find("\n", port.end())
        port = _PGPASS_PORT.search(text, line_end) if line_end != -1 else None


# Where the prose and spaced rules may start, found by one fast scan per word: "pass" stands for
# password, passphrase and passwd, "pw" for pwd, "key" for "api key"; "credential" starts only
# the spaced rule.
_HINTS = ("pass", "pw", "secret", "token", "key", "credential")
_SPACED_HINTS = frozenset({"pass", "secret", "token", "key", "credential"})
_PROSE_HINTS = frozenset(_HINTS) - {"credential"}


def _hints(lower: str) -> dict[str, list[int]]:
    """The positions of each of ``_HINTS`` in ``lower``."""
    found: dict[str, list[int]] = {}
    for hint in _HINTS:
        positions = found[hint] = []
        index = lower.find(hint)
        while index != -1:
            positions.append(index)
            index = lower.find(hint, index + len(hint))
    return found


def _prose_starts(lower: str, hints: dict[str, list[int]]) -> list[int]:
    """Where a secret word starts a word in ``lower``."""
    starts: set[int] = set()
    for hint, positions in hints.items():
        if hint not in _PROSE_HINTS:
            continue
        for index in positions:
            if hint == "key":
                if not lower.startswith("api ", index - 4):
                    continue
                index -= 4
            if index == 0 or not lower[index - 1].isalnum():
                starts.add(index)
    return sorted(starts)


# A random value after a strong name and blanks, a table cell, "is", ":" or "->" rather than
# "=": "aws configure set aws_secret_access_key wJalr...", "| AWS_SECRET_ACCESS_KEY | wJalr... |",
# "set -x OPENAI_API_KEY 9f8e...", "the aws secret access key is wJalr...", "api_key: <key> for
# staging", "STRIPE_KEY -> <key>". The name may be a few words ("secret access key"); the value
# must look random, or after a separator and a strong name read as a password with a digit.
_SPACED = re.compile(
    r"[a-z][a-z0-9_.\-]{0,90}+"  # from a hint on
    r"(?P<sep>[ \t]++(?:is|was)|[ \t]*+(?:[|,:]|->|=>))?"
    r"[ \t]++[`\"']?(?=[a-z+/=_\-.~]{0,255}+[0-9])(?P<secret>[a-z0-9+/=_\-.~]{6,256}+)"
)
# The lookahead before the value: a digit in it, which both a random value (is_high_entropy)
# and a value after a separator need (_spaced_secret), so that a hint before no such value
# ("secret secret ...") is not judged. The text there holds the same digits: a character whose
# lower case is an ASCII digit is that digit.
_SEPARATOR_CHARS = "|,:->"
_WORDS_BEFORE = re.compile(r"(?:[A-Za-z]{2,12}+[ \t]++){1,3}+$")
_IDENTIFIER_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-")
_MAX_NAME = 80
_ASCII_DIGIT = re.compile(r"[0-9]")
# A text this long is first searched for what _SPACED needs anywhere (a note's hints are few)
_LONG_TEXT = 1000


def _spaced_secrets(
    text: str, lower: str, hints: dict[str, list[int]]
) -> Iterator[tuple[int, int]]:
    if len(lower) > _LONG_TEXT and (
        ("\t" not in lower and " " not in lower) or _ASCII_DIGIT.search(lower) is None
    ):
        return  # _SPACED needs a blank and a digit: "key=key=..." is not tried hint by hint
    for hint in _SPACED_HINTS:
        for index in hints[hint]:
            match = _SPACED.match(lower, index)
            if match is not None:
                yield from _spaced_secret(text, lower, match)


def _spaced_secret(text: str, lower: str, match: re.Match[str]) -> Iterator[tuple[int, int]]:
    begin = match.start("secret")
    secret = text[begin : match.end("secret")].rstrip(_TRAILING)
    random = is_high_entropy(secret)
    if not random and not (match["sep"] and any(c.isdigit() for c in secret)):
        return  # a value that is not random needs a separator ("is", ":") and a digit
    start = match.start()
    floor = max(0, start - _MAX_NAME)
    while start > floor and lower[start - 1] in _IDENTIFIER_CHARS:
        start -= 1
    # the identifier, without a separator glued to it ("api_key:", "STRIPE_KEY->")
    end = start + len(lower[start:begin].split(None, 1)[0].rstrip(_SEPARATOR_CHARS))
    if _is_spaced_name(text, start, end, secret, random) and not (
        is_placeholder(secret)
        or is_relative_path(secret)
        or _innocent_prose(lower, match.start(), secret)  # "token: gpt-4o-mini for summaries"
    ):
        yield begin, begin + len(secret)


def _is_spaced_name(text: str, start: int, end: int, secret: str, random: bool) -> bool:
    """Whether the identifier at ``start:end``, maybe with the words before it, names
    ``secret``: a strong name, or for a random value a secret's key (``STRIPE_KEY``, "the
    datadog key")."""
    if random and _is_named_key(text, start, text[start:end]):
        return True
    words = _WORDS_BEFORE.search(text, max(0, start - 40), start)  # "aws secret access" key
    for name_start in (start, *([words.start()] if words else [])):
        name = text[name_start:end]
        if name_strength(name) is Strength.STRONG and not is_public_name(text, name_start, name):
            return random or reads_as_secret(secret, strong=True)
    return random and words is not None and _is_vendor_hex_key(text, start, text[start:end], secret)


# A vendor's key in hex after its name and "key" ("the datadog key 3f9a...", "sentry key is
# ..."): 32 hex digits or more, as Datadog's, Algolia's or Sentry's keys are. A word of grammar,
# an identifier's kind or a store of items before "key" names no vendor: "the key is <md5>",
# "use key <sha>", "cache key", "primary key", "the redis key <md5>", "GPG key", "ssh key" (a
# fingerprint).
_HEX_KEY = re.compile(r"[0-9a-fA-F]{32,}+")
_VENDOR_BEFORE = re.compile(r"(?<![\w.\-])([A-Za-z]{2,20}+)[ \t]++$")
_NO_VENDOR_WORDS = frozenset(
    {
        "the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "their", "its",
        "his", "her", "same", "which", "what", "whose", "each", "every", "any", "some", "no",
        "one", "by", "for", "from", "to", "of", "in", "on", "at", "with", "as", "via", "per",
        "use", "using", "used", "set", "get", "new", "old", "next", "last", "first", "is", "was",
        "and", "or", "but", "if", "then", "ssh", "host", "shard", "routing", "index", "map",
        "dict", "table", "commit", "git", "group", "join", "composite", "natural", "surrogate",
        "compound", "api", "redis", "memcached", "file", "files", "bucket", "blob", "kv",
        "db", "database", "row", "record", "document", "doc", "item", "entry", "lock", "job",
        "task", "queue", "topic", "content", "manifest", "image", "layer", "build", "artifact",
        "upload", "path", "url", "hash", "sha", "md", "digest", "checksum", "etag", "version",
        "tree", "object", "dedupe", "storage", "store", "local", "remote", "json",
    }
)  # fmt: skip


def _is_named_key(text: str, start: int, name: str) -> bool:
    """Whether ``name`` is an identifier of several words ending in "key" that names a secret
    (``STRIPE_KEY``, ``sendgridKey``), not an identifier's (``cache_key``) or a public key's."""
    return (
        compact(name).endswith("key")
        and len(name_words(name)) >= 2
        and name_strength(name) is not Strength.NONE
        and not names_identifier(name)
        and not is_public_name(text, start, name)
    )


def _is_vendor_hex_key(text: str, start: int, name: str, secret: str) -> bool:
    if name.lower() != "key" or _HEX_KEY.fullmatch(secret) is None:
        return False
    vendor = _VENDOR_BEFORE.search(text, max(0, start - 24), start)
    return (
        vendor is not None
        and vendor[1].lower() not in _NO_VENDOR_WORDS
        and not names_identifier(vendor[1] + name)
        and not is_public_name(text, start, name)
    )


# "secret" and blanks before a secret's name: "kubectl describe secret my-app-tls"
_SECRET_BEFORE_NAME = re.compile(r"secrets?+[ \t]++")

_IDIOM = re.compile(r"secrets?[ \t]++(?:to|of)[ \t]")  # "the secret to fast builds is ..."


def _innocent_prose(lower: str, start: int, secret: str) -> bool:
    """Whether a word after a secret word is prose: an idiom, a tokenizer after "token"."""
    if lower.startswith("token", start):
        return is_model_name(secret)
    return _IDIOM.match(lower, start) is not None


def redact_prose(text: str) -> str:
    """Passwords written in sentences and prompts, netrc and .pgpass lines, Telegram bot
    tokens, random values after a strong name and blanks."""
    spans: list[tuple[int, int]] = []
    lower = lower_same_length(text)
    hints = _hints(lower)
    spans += _spaced_secrets(text, lower, hints)
    for start in _prose_starts(lower, hints):
        match = _PROSE.match(text, start)
        if match is None:
            continue
        begin = match.start("secret")
        if match["secret"].startswith("-"):  # a flag: "DB_PASSWORD --body S3cret", its value
            match = _FLAG_VALUE.match(text, begin)
            if match is None:
                continue
            begin = match.start("secret")
        secret = match["secret"].rstrip(_TRAILING)
        if secret.isalpha() and secret.islower():
            continue  # no symbol, digit or capital: no looks_like_password ("secret secret ...")
        if _SECRET_BEFORE_NAME.fullmatch(lower, start, begin) and is_resource_name(secret):
            continue  # a secret's name: "kubectl get secret db-creds"
        if (
            looks_like_password(secret)
            and not looks_like_code(secret)
            and not is_relative_path(secret)
            and not _innocent_prose(lower, start, secret)
        ):
            spans.append((begin, begin + len(secret)))
    if ":AA" in text:
        spans += (match.span("secret") for match in _TELEGRAM.finditer(text))
    if text.count(":") >= _PGPASS_MIN_COLONS:
        spans += _pgpass_passwords(text)
    spans.sort()
    return redact_span(text, spans)
