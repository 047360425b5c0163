"""Secrets recognised by the name they are given: ``DB_PASSWORD=...``, ``"api_key": "..."``.

Strong names (password, secret, token, api key, credential...) redact any literal of 6+
characters; weak names (key, auth, session, cookie, seed, salt, signature) redact only values
that look random. Password names also redact quoted passphrases ("correct horse battery
staple"). Names may be subscripts (``os.environ["DB_PASSWORD"] = ...``) or Terraform variables
(``variable "db_password" { default = ... }``). Code expressions
(``token = request.headers.get("X")``), placeholders, paths and prose ("Session token: expired
soon") are kept.
"""

from __future__ import annotations

import functools
import re
import string
from enum import Enum

from aletheia_mem.domain.redaction_values import (
    is_high_entropy,
    is_placeholder,
    lower_same_length,
    redact_span,
)

_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-/]*")
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*+(?:\.[A-Za-z_]\w*+)++")  # request.headers, os.environ
_TYPE_NAME = re.compile(r"(?:[A-Z][a-z]+)++")  # Keyword, SecretStr, TokenPayload
_TYPE_WORDS = frozenset(
    {"object", "string", "number", "boolean", "integer", "callable", "bytearray", "memoryview"}
)
_COLOR = re.compile(r"#[0-9A-Fa-f]{3,8}")  # pygments and CSS themes: Token: "#f8f8f2"
# db_password, userToken; a digit makes it a literal (s3cr3tPW)
_VARIABLE = re.compile(r"(?=.*(?:_|[a-z][A-Z]))(?!.*\d)[A-Za-z_]\w*")
_MIN_STRONG_LENGTH = 6
_BLANK = re.compile(r"\s")


class Strength(Enum):
    NONE = 0
    WEAK = 1  # only high-entropy values are secrets
    STRONG = 2  # any literal of 6+ characters is a secret


_STRONG_SUFFIXES = (
    "password", "passwd", "passphrase", "secret", "token", "credential", "credentials",
    "apikey", "accesskey", "privatekey", "secretkey", "signingkey", "encryptionkey", "masterkey",
    "secretkeybase", "accountkey", "appkey", "authkey", "sessionkey", "licensekey", "passcode",
)  # fmt: skip
_STRONG_WORDS = frozenset({"pwd", "pass", "pw", "sig"})
_WEAK_SUFFIXES = (
    "key", "auth", "seed", "salt", "session", "sessionid", "sessid", "sess", "sid", "cookie",
    "signature",
)  # fmt: skip
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def compact(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "").replace(" ", "")


def _names(name: str, suffixes: tuple[str, ...], words: frozenset[str]) -> bool:
    """Whether ``name`` ends with one of ``suffixes`` (case and separators aside) or its last
    word is one of ``words``."""
    if compact(name).endswith(suffixes):
        return True
    found = _NAME_WORD.findall(name)
    return bool(found) and found[-1].lower() in words


@functools.lru_cache(maxsize=4096)
def name_strength(name: str) -> Strength:
    """How secret the values of ``name`` are: ``DB_PASSWORD`` strong, ``sort_key`` weak."""
    if _names(name, _STRONG_SUFFIXES, _STRONG_WORDS):
        return Strength.STRONG
    return Strength.WEAK if compact(name).endswith(_WEAK_SUFFIXES) else Strength.NONE


def is_literal_secret(name: str, value: str) -> bool:
    """Whether ``value``, given to ``name`` as a literal, is a secret (no code checks)."""
    if len(value) < _MIN_STRONG_LENGTH:
        return False
    strength = name_strength(name)
    if strength is Strength.NONE or _BLANK.search(value):
        return False
    if (
        is_placeholder(value)
        or _PATH.fullmatch(value)
        or _COLOR.fullmatch(value)
        or compact(name).endswith(compact(value))  # password=password
    ):
        return False
    return strength is Strength.STRONG or is_high_entropy(value)


_PASSWORD_SUFFIXES = ("password", "passwd", "passphrase", "passcode")
_PASSWORD_WORDS = frozenset({"pwd", "pass", "pw"})
# Labels and messages rather than passphrases: "Mot de passe", "Your password is too weak.",
# "Enter it:"
_PASSPHRASE_PROSE = re.compile(r"(?i:.*pass.*)|.*[.?:]", re.DOTALL)
_MIN_PASSPHRASE_LENGTH = 8
_MAX_PASSPHRASE_WORDS = 8


@functools.lru_cache(maxsize=4096)
def is_password_name(name: str) -> bool:
    """Whether ``name`` holds a password (``DB_PASSWORD``, ``passphrase``, ``pwd``)."""
    return _names(name, _PASSWORD_SUFFIXES, _PASSWORD_WORDS)


def is_passphrase(name: str, value: str) -> bool:
    """Whether a quoted ``value`` of several words, given to a password name, is a passphrase
    (``"correct horse battery staple"``) rather than a label or a message."""
    words = value.split()
    return (
        2 <= len(words) <= _MAX_PASSPHRASE_WORDS
        and len(value) >= _MIN_PASSPHRASE_LENGTH
        and is_password_name(name)
        and not is_placeholder(value)
        and _PASSPHRASE_PROSE.fullmatch(value) is None
    )


def is_quoted_secret(name: str, value: str) -> bool:
    """Whether a quoted literal ``value`` given to ``name`` is a secret."""
    return is_literal_secret(name, value) or is_passphrase(name, value)


# -- Assignments ---------------------------------------------------------------------------

# The scan jumps from one ":" or "=" to the next (a fast character-class scan). Lookbehinds keep
# the separators that follow the last three letters of a secret name (then an optional quote and
# blank, or a quoted subscript: ["DB_PASSWORD"] =), or a run of blanks; the full name is checked
# in Python. The value is read in a
# lookahead, so a rejected candidate ("Fixed: password=...") never hides the assignments in it.
# Matched on the lower-cased text (same length, same positions): case-sensitive alternatives
# are much cheaper than (?i:...) ones.
_NAME_END = (
    r"(?:ass|pwd|swd|ord|ase|ret|ken|ial|als|key|uth|ion|sid|nid|eed|alt|kie|ure|sig|ess|ode"
    r"|[\W_]pw)"
)
_ASSIGNMENT = re.compile(
    r"(?P<sep>[:=](?<=[a-z0-9_\"' \t\-\]][:=])"  # one cheap check first: "==" runs stop here
    rf"(?:(?<={_NAME_END}[:=])|(?<={_NAME_END}[\"' \t][:=])|(?<={_NAME_END}[\"'][ \t][:=])"
    rf"|(?<=\]=)(?<={_NAME_END}[\"']\]=)|(?<=\][ \t]=)(?<={_NAME_END}[\"']\][ \t]=)"
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
# A value is judged by its first characters (the whole of it is redacted): each of the many
# separators of one run ("key=key=key=...") would otherwise scan the rest of the run again.
_MAX_JUDGED_LENGTH = 256
# What may follow a bare value after ":" (YAML, headers), as opposed to running prose.
_VALUE_END = re.compile(r"[ \t]*+(?:[,;)}\]#(\"'`]|//|\r?\n|\Z)")
# A secret's bare value runs on through "&", ";" and closing brackets up to a blank
# (password=Tr0ub4dor&3), unless another parameter follows: ?password=x&user=bob, Pwd=x;Db=y.
_VALUE_TAIL = re.compile(r"(?:[&;)\]}<>](?![\w.\-\[\]]{1,64}+=)[^\s\"'`,;&()\[\]{}<>]++)*+")
_TAIL_STARTS = frozenset("&;)]}<>")


def _name_before(text: str, index: int) -> str:
    """The name assigned to by the separator at ``index``: ``"api_key"`` in ``"api_key": ``."""
    head = text[max(0, index - _MAX_NAME_LENGTH) : index].rstrip(" \t")
    if head.endswith(('"]', "']")):  # a subscript: os.environ["DB_PASSWORD"] = ...
        head = head[:-1]
    if head.endswith(('"', "'")):
        head = head[:-1]
    return head[len(head.rstrip(_NAME_CHARS)) :].lstrip("-.0123456789")


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


def _bare_secret_end(text: str, match: re.Match[str], name: str, run_end: int) -> int:
    """Where the bare value at ``match`` ends if it is a secret of ``name``, else 0."""
    start, end = match.start("bare"), run_end
    if text[end : end + 1] in _TAIL_STARTS:
        end = _VALUE_TAIL.match(text, end).end()  # type: ignore[union-attr]
    whole = judged = text[start : min(end, start + _MAX_JUDGED_LENGTH)]
    if end > run_end and name_strength(name) is not Strength.STRONG:
        judged = whole[: run_end - start]  # a weak name's value: by its random part (key=Xq7..&3)
    return end if is_literal_secret(name, judged) and not _is_code(match, whole, end) else 0


def _quoted_secret_end(text: str, match: re.Match[str], name: str) -> int:
    """Where the quoted value of ``match`` ends if it is a secret of ``name``, else 0."""
    start, end = match.span("dq" if match["dq"] is not None else "sq")
    return end if is_quoted_secret(name, text[start : min(end, start + _MAX_JUDGED_LENGTH)]) else 0


def redact_assignments(text: str) -> str:
    """Redact the literal values assigned to secret-looking names."""
    spans: list[tuple[int, int]] = []
    done = run_end = 0
    for match in _ASSIGNMENT.finditer(lower_same_length(text)):
        if match["bare"] is None:
            start = match.start("dq" if match["dq"] is not None else "sq")
        else:
            start = match.start("bare")
            if start >= run_end:  # a new run; positions inside a run share its end
                run_end = _BARE_VALUE.match(text, start).end()  # type: ignore[union-attr]
        name = _name_before(text, match.start()) if start >= done else ""
        if not name:
            continue
        if match["bare"] is None:
            end = _quoted_secret_end(text, match, name)
        else:
            end = _bare_secret_end(text, match, name, run_end)
        if end:
            spans.append((start, end))
            done = end
    return redact_span(text, spans)


# -- Terraform variables -------------------------------------------------------------------

# variable "db_password" { default = "S3cr3tP4ss" }: the default is judged by the variable's name.
_TF_VARIABLE = re.compile(r"\bvariable[ \t]++\"(?P<name>[\w\-]{1,80}+)\"[ \t]*+\{")
_TF_DEFAULT = re.compile(
    r"(?<![\w.])default[ \t]*+=[ \t]*+\"(?P<secret>(?:[^\"\\\n]|\\.){1,512}+)\""
)
_TF_BLOCK_LENGTH = 1024  # how far after "variable" its default is looked for


def redact_terraform_variables(text: str) -> str:
    """Redact the literal defaults of Terraform variables with secret-looking names."""
    if "variable" not in text or "default" not in text:
        return text
    spans: list[tuple[int, int]] = []
    variables = list(_TF_VARIABLE.finditer(text))
    starts = [variable.start() for variable in variables] + [len(text)]
    for variable, following in zip(variables, starts[1:], strict=True):
        block_end = min(variable.end() + _TF_BLOCK_LENGTH, following)
        default = _TF_DEFAULT.search(text, variable.end(), block_end)
        if default and is_quoted_secret(variable["name"], default["secret"]):
            spans.append(default.span("secret"))
    return redact_span(text, spans)


# -- XML -----------------------------------------------------------------------------------

# <password>s3cret</password>, <add key="DbPassword" value="s3cret" />
_XML_ELEMENT = re.compile(r"<(?P<name>[A-Za-z_][\w.\-:]{0,60}+)>(?P<secret>[^<>\s]{1,512}+)</")
_XML_KEY_VALUE = re.compile(
    r"(?i:key|name)=\"(?P<name>[^\"\n]{1,80}+)\"[ \t]++(?i:value)=\"(?P<secret>[^\"\n]{1,512}+)\""
)


def redact_xml(text: str) -> str:
    """Redact secret values of XML elements and ``key=".." value=".."`` settings."""
    spans: list[tuple[int, int]] = []
    patterns = [_XML_ELEMENT] if "</" in text else []
    if 'value="' in text or 'VALUE="' in text or 'Value="' in text:
        patterns.append(_XML_KEY_VALUE)
    for pattern in patterns:
        for match in pattern.finditer(text):
            name = match["name"].rsplit(":", 1)[-1]
            if is_literal_secret(name, match["secret"]):
                spans.append(match.span("secret"))
    spans.sort()
    return redact_span(text, spans)
