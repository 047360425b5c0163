"""Secrets recognised by the name they are given: ``DB_PASSWORD=...``, ``"api_key": "..."``.

Strong names (password, secret, token, api key, credential...) redact any literal of 6+
characters; weak names (key, auth, session, cookie, seed, salt, signature) redact only values
that look random. Password names also redact quoted passphrases ("correct horse battery
staple"). Names may be subscripts (``os.environ["DB_PASSWORD"] = ...``) or Terraform variables
(``variable "db_password" { default = ... }``). Code expressions
(``token = request.headers.get("X")``), placeholders, paths and prose ("Session token: expired
soon") are kept; a word that reads as a class name (``PasswordField``) is code too, except after
a secret name and "=" without blanks, as in .env, INI and properties files and shell ``export``
(``DB_PASSWORD=CorrectHorseBatteryStaple``, ``db_password=CorrectHorseBatteryStaple``: two
words at least after a lower-case name, which is not a call's keyword argument).
"""

from __future__ import annotations

import bisect
import functools
import re
import string
from collections.abc import Iterator
from enum import Enum

from aletheia_mem.domain.redaction_values import (
    character_kinds,
    is_high_entropy,
    is_identifier,
    is_model_name,
    is_placeholder,
    is_random_path,
    is_relative_path,
    is_resource_name,
    is_secret_file_name,
    looks_like_code,
    looks_like_password,
    lower_same_length,
    reads_as_secret,
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
    "privatekeyid",  # a Google service-account key file: "private_key_id": "<40 hex>"
)  # fmt: skip
_STRONG_WORDS = frozenset({"pwd", "pass", "pw", "sig"})
_WEAK_SUFFIXES = (
    "key", "auth", "seed", "salt", "session", "sessionid", "sessid", "sess", "sid", "cookie",
    "signature",
)  # fmt: skip
_NAME_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def name_words(name: str) -> list[str]:
    """The words of ``name``: ``STRIPE_KEY``, ``stripeKey`` and ``stripe-key`` have two."""
    return _NAME_WORD.findall(name)


def compact(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "").replace(".", "").replace(" ", "")


def _names(name: str, suffixes: tuple[str, ...], words: frozenset[str]) -> bool:
    """Whether ``name`` ends with one of ``suffixes`` (case and separators aside) or its last
    word is one of ``words``."""
    if compact(name).endswith(suffixes):
        return True
    found = _NAME_WORD.findall(name)
    return bool(found) and found[-1].lower() in words


# Public halves and their names: "GPG key: 9DC8...", "mapbox public token pk.eyJ..."
_PUBLIC_SUFFIXES = ("publickey", "publishablekey", "pubkey", "gpgkey", "pgpkey", "publictoken")
# Weak names of identifiers, whose UUID or ULID is no secret ("heroku_key: <uuid>" is one)
_ID_KEYS = (
    "idempotencykey", "primarykey", "partitionkey", "sortkey", "rangekey", "hashkey", "rowkey",
    "cachekey", "dedupekey", "dedupkey", "foreignkey", "objectkey", "lookupkey", "uniquekey",
    "requestkey", "messagekey", "eventkey", "session",
)  # fmt: skip


def names_identifier(name: str) -> bool:
    """Whether ``name`` names an identifier (``cache_key``, ``idempotency key``), no secret."""
    return compact(name).endswith(_ID_KEYS)


# A hex digest (MD5 to SHA-512) as the value of an identifier's name: cache_key=<sha1> (a
# session's hex value is its secret: session=<32 hex>, as PHP's)
_HEX_DIGEST = re.compile(r"[0-9a-fA-F]{32,128}+")
_DIGEST_KEYS = tuple(name for name in _ID_KEYS if name != "session")

# The bare word "token" names tokenizers and models as often as credentials
_TOKEN_WORDS = frozenset({"token", "tokens", "tokenizer"})


# A whole word: one glued to what comes before it ("...xyzGPG key") names nothing public.
_WORD_BEFORE = re.compile(r"(?<![A-Za-z0-9])([A-Za-z]{1,20}+)[ \t]$")


def is_public_name(text: str, start: int, name: str) -> bool:
    """Whether ``name`` at ``start`` with the word before it names a public value
    ("GPG key", "public token")."""
    if not name[-5:].lower().endswith(("key", "token")):  # how every public name ends
        return False
    before = _WORD_BEFORE.search(text, max(0, start - 21), start)
    return before is not None and compact(before[1] + name).endswith(_PUBLIC_SUFFIXES)


@functools.lru_cache(maxsize=4096)
def name_strength(name: str) -> Strength:
    """How secret the values of ``name`` are: ``DB_PASSWORD`` strong, ``sort_key`` weak."""
    if compact(name).endswith(_PUBLIC_SUFFIXES):
        return Strength.NONE
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
    if strength is Strength.WEAK and not is_high_entropy(value):
        return False  # the last check below, and the cheapest to fail ("key=key=key=...")
    compact_name = compact(name)
    if (
        is_placeholder(value)
        or _PATH.fullmatch(value)
        or ("/" in value and is_relative_path(value) and not is_random_path(value))
        or _COLOR.fullmatch(value)
        or compact_name.endswith(compact(value))  # password=password
    ):
        return False
    if strength is Strength.STRONG:
        return not (compact_name in _TOKEN_WORDS and is_model_name(value))  # token: cl100k_base
    if is_identifier(value) and (compact_name == "key" or compact_name.endswith(_ID_KEYS)):
        return False
    if _HEX_DIGEST.fullmatch(value) and compact_name.endswith(_DIGEST_KEYS):
        return False  # cache_key=<sha1>: a digest
    return is_high_entropy(value)


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
    r"|[\W_]pw|yid|_id(?<=y_id))"  # private_key_id, privateKeyId
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


# An environment variable's name: DB_PASSWORD, API_KEY, AWS_SECRET_ACCESS_KEY
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*+(?:_[A-Z0-9]++)*+")
# Words that make a CamelCase value a placeholder (DummyValue, FooBar) or the name of a class
# or setting about the secret (PasswordField, SecretStr, TokenAuthentication)
_NOT_PASSPHRASE_WORDS = frozenset(
    {
        "your", "my", "dummy", "fake", "sample", "example", "test", "foo", "bar", "baz", "some",
        "password", "passwd", "passphrase", "pass", "pwd", "secret", "secrets", "token", "key",
        "credential", "credentials", "auth",
    }
)  # fmt: skip
# Objects whose attributes are code, not settings: self.password=PasswordField
_CODE_OWNERS = ("self.", "this.", "cls.")


def _ends_word(lower: str, end: int) -> bool:
    """Whether a value ending at ``end`` ends its word: a blank, the end, or a shell ";" before
    one (``export DB_PASSWORD=CorrectHorse; ./deploy.sh``)."""
    if end < len(lower) and lower[end] == ";":
        end += 1
    return end == len(lower) or lower[end].isspace()


def _is_keyword_argument(lower: str, name_start: int) -> bool:
    """Whether the name at ``name_start`` follows "(" or "," (a call's keyword argument, also
    on a line of its own), rather than a line start, a blank or a shell word."""
    before = lower[max(0, name_start - _MAX_NAME_LENGTH) : name_start].rstrip()
    return before.endswith(("(", ","))


# A shell's "export " before a name: at a line's start or after a blank, ";", "&", "|" or "("
_EXPORT = re.compile(r"(?:^|(?<=[\s;&|(]))export[ \t]++$")
_EXPORT_WINDOW = 16


def _is_exported(lower: str, name_start: int) -> bool:
    """Whether the name at ``name_start`` follows a shell's ``export`` (``export db_password=``):
    a shell variable, whose CamelCase value is a literal even as one word."""
    return _EXPORT.search(lower, max(0, name_start - _EXPORT_WINDOW), name_start) is not None


def _is_env_literal(match: re.Match[str], name: str, value: str, end: int) -> bool:
    """Whether a bare value that reads as a name (``CorrectHorseBatteryStaple``) is the literal
    of a .env, shell, INI or properties assignment: ``DB_PASSWORD=CorrectHorseBatteryStaple``,
    ``export db_password=CorrectHorse;``. The name names a secret, "=" has no blank on either
    side and the value ends its word (a shell ";" may end it). A lower-case name (code as often
    as a setting) needs a value of two words or more, outside a call's arguments and an
    object's attributes, unless ``export`` makes it a shell variable (``export
    db_password=Sunshine;``). Code (``PASSWORD = PasswordField``, ``f(password=PasswordField)``),
    values naming a secret (``MyApiKey``, ``PasswordField``) and placeholders written in
    CamelCase (``YourSecretHere``, ``DummyValue``) are kept."""
    lower, start = match.string, match.start("bare")  # matched on the lower-cased text
    if not (
        match["sep"] == "="
        and match.start() == start - 1
        and lower.endswith(name.lower(), 0, match.start())
        and name_strength(name) is Strength.STRONG
        and name_strength(value) is Strength.NONE  # YourPassword, GithubToken: a placeholder
        and _ends_word(lower, end)
    ):
        return False
    words = _NAME_WORD.findall(value)
    if is_placeholder("_".join(words)) or any(w.lower() in _NOT_PASSPHRASE_WORDS for w in words):
        return False  # YourSecretHere, ChangeMe, DummyValue, PasswordField
    if _ENV_NAME.fullmatch(name) is not None or _is_exported(lower, match.start() - len(name)):
        return True
    return (
        len(words) >= 2
        and not name.lower().startswith(_CODE_OWNERS)
        and not _is_keyword_argument(lower, match.start() - len(name))
    )


# A constant that names where a secret is rather than holding one: PASSWORD_ENV, API_KEY_NAME,
# DB_PASSWORD_FILE (SUPER_SECRET is a literal: it names nothing)
_SECRET_REFERENCE = re.compile(
    r"(?:[A-Z]{1,20}_){0,6}(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|KEY|CREDENTIALS?+)"
    r"_(?:ENV|ENVVAR|VAR|VARIABLE|NAME|FILE|PATH|FIELD|HEADER|PARAM|SETTING)"
)


def _is_password_file(value: str) -> bool:
    """Whether ``value`` is a password written as a file name (``hunter2.txt``), not a file
    named after the secret (``secrets2.yaml``)."""
    stem = value.rsplit(".", 1)[0]
    return is_secret_file_name(value) and not any(
        word.lower() in _NOT_PASSPHRASE_WORDS for word in name_words(stem)
    )


def _is_annotation(value: str) -> bool:
    """Whether a word after "name:" and before "," or ")" is a type rather than a password
    (``def f(token: object, ...)``, not ``credentials: kYYqhXHdO2x9, then run``)."""
    return value.isidentifier() and not (
        character_kinds(value) == 3 and reads_as_secret(value, strong=True)
    )


def _is_code(match: re.Match[str], value: str, end: int, name: str) -> bool:
    """Whether a bare value is a code expression or prose rather than a literal secret."""
    text, start, colon = match.string, match.start("bare"), match["sep"] == ":"
    after = text[end : end + 1]
    if (
        after in ("(", "[")  # call or subscript
        or value in _TYPE_WORDS
        or (_DOTTED_NAME.fullmatch(value) and not _is_password_file(value))  # attribute access
        or (_TYPE_NAME.fullmatch(value) and not _is_env_literal(match, name, value, end))
        or _SECRET_REFERENCE.fullmatch(value) is not None  # password=PASSWORD_ENV
        or (colon and after in (",", ")") and _is_annotation(value))  # def f(token: object, ...)
    ):
        return True
    if _VARIABLE.fullmatch(value) and (
        after in (",", ")", "}") or (not colon and text[start - 1] in " \t")
    ):
        return True  # a variable: f(password=db_password), self.passwd = password_mgr
    if colon and _VALUE_END.match(text, end) is None:  # more words follow: prose, or the secret
        return not reads_as_secret(value, name_strength(name) is Strength.STRONG)
    return False  # "Session token: expired soon", "api_key: <key> for staging"


# A character that may be one ``str.isdigit`` holds: outside ASCII any may be ("²").
_MAYBE_DIGIT = re.compile(r"[0-9]|[^\x00-\x7f]")


def _is_prose_word(text: str, lower: str, start: int, run_end: int) -> bool:
    """Whether the bare value at ``start`` after ":" is no secret of any name, as more words
    follow it and it holds no digit: ``_is_code`` calls such a value code unless it
    ``reads_as_secret``, and both ways to read so (high entropy, the three kinds of characters)
    need a character that ``str.isdigit``. A necessary condition, tested before the name."""
    end = _value_end(text, run_end)
    judged_end = min(end, start + _MAX_JUDGED_LENGTH)  # the value _is_code is given
    return _MAYBE_DIGIT.search(text, start, judged_end) is None and (
        _VALUE_END.match(lower, end) is None
    )


def _is_secret_flag(text: str, separator: int, name: str) -> bool:
    """Whether ``name`` before ``separator`` is a command's ``--secret`` option."""
    return text.endswith("--" + name, 0, separator) and compact(name) == "secret"


def _value_end(text: str, run_end: int) -> int:
    """Where a bare value whose run of value characters ends at ``run_end`` ends, with its
    tail (``Tr0ub4dor&3``)."""
    if text[run_end : run_end + 1] in _TAIL_STARTS:
        return _VALUE_TAIL.match(text, run_end).end()  # type: ignore[union-attr]
    return run_end


# What a weak name's value (judged to its run's end) cannot hold to be random: a character
# outside ``_RANDOM_CHARS``, or a "=" with another character after it ("=" only as padding).
_BREAKS_RANDOM = re.compile(r"[^A-Za-z0-9+/_\-%.~=]|=(?=[^=])")


def _bare_secret_end(text: str, match: re.Match[str], name: str, run_end: int) -> int:
    """Where the bare value at ``match`` ends if it is a secret of ``name``, else 0."""
    start = match.start("bare")
    strength = name_strength(name)
    if strength is Strength.NONE or (
        strength is Strength.WEAK
        and _BREAKS_RANDOM.search(text, start, min(run_end, start + _MAX_JUDGED_LENGTH))
    ):
        return 0  # no literal secret: not random ("key=key=..."), tested in C before the rest
    if _is_secret_flag(text, match.start(), name) and is_resource_name(text[start:run_end]):
        return 0  # gcloud's --secret=api-key: the secret's name
    end = _value_end(text, run_end)
    whole = judged = text[start : min(end, start + _MAX_JUDGED_LENGTH)]
    if end > run_end and name_strength(name) is not Strength.STRONG:
        judged = whole[: run_end - start]  # a weak name's value: by its random part (key=Xq7..&3)
    secret = is_literal_secret(name, judged) and not _is_code(match, whole, end, name)
    return end if secret else 0


def _quoted_secret_end(text: str, match: re.Match[str], name: str) -> int:
    """Where the quoted value of ``match`` ends if it is a secret of ``name``, else 0."""
    start, end = match.span("dq" if match["dq"] is not None else "sq")
    return end if is_quoted_secret(name, text[start : min(end, start + _MAX_JUDGED_LENGTH)]) else 0


# JSON inside a JSON string (logs, tool results): {\"password\": \"...\"}. The escaping
# backslashes are dropped from a copy, which is read like any text; its spans are mapped back.
# From the first backslash of a run only: a try from each of a run's backslashes would scan the
# rest of the run again (quadratic on a long run).
_ESCAPED_QUOTE = re.compile(r"(?<!\\)\\++(?=\")")


def redact_assignments(text: str) -> str:
    """Redact the literal values assigned to secret-looking names (also in escaped JSON), given
    as the value of a name/value pair, on the next line or as a call's next argument."""
    lower = lower_same_length(text)
    spans = _assignment_spans(text, lower)
    if ("=" in text or ":" in text) and "value" in lower:
        spans += _pair_spans(text, lower)
    if "\n" in text and ":" in text:
        spans += _next_line_spans(text, lower)
    if "(" in text:
        spans += _call_spans(text)
    text = redact_span(text, sorted(spans))
    if "\\" not in text or '\\"' not in text:
        return text
    kept: list[str] = []
    cuts: list[int] = []  # where each escaped quote is in the copy
    removed = [0]  # backslashes removed up to it
    done = 0
    for escape in _ESCAPED_QUOTE.finditer(text):
        kept.append(text[done : escape.start()])
        cuts.append(escape.start() - removed[-1])
        removed.append(removed[-1] + len(escape.group()))
        done = escape.end()
    kept.append(text[done:])
    unescaped = "".join(kept)
    spans = [
        (
            start + removed[bisect.bisect_right(cuts, start)],
            end + removed[bisect.bisect_left(cuts, end)],
        )
        for start, end in _assignment_spans(unescaped, lower_same_length(unescaped))
    ]
    return redact_span(text, spans)


def _assignment_spans(text: str, lower: str) -> list[tuple[int, int]]:
    """The literal values assigned to secret-looking names."""
    spans: list[tuple[int, int]] = []
    done = run_end = 0
    for match in _ASSIGNMENT.finditer(lower):
        if match["bare"] is None:
            start = match.start("dq" if match["dq"] is not None else "sq")
        else:
            start = match.start("bare")
            if start >= run_end:  # a new run; positions inside a run share its end
                run_end = _BARE_VALUE.match(text, start).end()  # type: ignore[union-attr]
            if run_end - start < _MIN_STRONG_LENGTH and text[run_end : run_end + 1] not in (
                _TAIL_STARTS
            ):
                continue  # too short for any literal secret ("key: key: key: ...")
            if match["sep"] == ":" and _is_prose_word(text, lower, start, run_end):
                continue  # "password: password: ...": not judged, not even named
        name = _name_before(text, match.start()) if start >= done else ""
        if not name:
            continue
        if match["bare"] is None:
            end = _quoted_secret_end(text, match, name)
        else:
            end = _bare_secret_end(text, match, name, run_end)
        if end and not is_public_name(text, text.rfind(name, 0, match.start()), name):
            spans.append((start, end))
            done = end
    return spans


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


# -- Name and value pairs ------------------------------------------------------------------

# Kubernetes and Compose env lists, ECS task definitions, work-list items: a secret name given as
# the "name" (or "key") of an object whose "value" is the secret.
#   - name: DB_PASSWORD            {"name": "DB_PASSWORD", "value": "..."}
#     value: Tr0ub4dor3
_PAIR_VALUE = re.compile(
    r"(?<![a-z0-9])value[\"']?[ \t]*+[:=][ \t]*+"
    r"(?:\"(?P<dq>[^\"\\\n]{6,512}+)\"|'(?P<sq>[^'\\\n]{6,512}+)'"
    r"|(?P<bare>[^\s\"',;{}\[\]]{6,512}+))"
)
_PAIR_NAME = re.compile(
    r"(?<![\w\-])(?:name|key)[\"']?[ \t]*+[:=][ \t]*+[\"']?(?P<name>[\w.\-]{1,80}+)[\"']?"
)
_PAIR_BREAK = re.compile(r"[{}]|\n[ \t]*+-[ \t]")  # another object or list item in between
_PAIR_WINDOW = 200


def _pair_spans(text: str, lower: str) -> Iterator[tuple[int, int]]:
    for match in _PAIR_VALUE.finditer(lower):
        group = next(group for group in ("dq", "sq", "bare") if match[group] is not None)
        start, end = match.span(group)
        value = text[start:end]
        if is_placeholder(value):
            continue
        names = list(_PAIR_NAME.finditer(text, max(0, match.start() - _PAIR_WINDOW), match.start()))
        judge = _is_plain_secret if group == "bare" else is_quoted_secret
        if (
            names
            and not _PAIR_BREAK.search(text, names[-1].end(), match.start())
            and judge(names[-1]["name"], value)
        ):
            yield start, end


# -- Values on the next line ---------------------------------------------------------------

# YAML: "password: |" (a block scalar) or "password:" with its value on the next, deeper line.
_NEXT_LINE_VALUE = re.compile(
    r":(?=[^\n]{0,8}+\n)"  # a cheap check first: the line ends soon after the ":"
    rf"(?<={_NAME_END}:)[ \t]*+(?P<block>[|>][\-+0-9]{{0,2}}+)?[ \t]*+\r?\n"
    r"(?P<indent>[ \t]++)"
    r"(?(block)|(?!-[ \t]|[^\n]*:(?:[ \t]|\r?\n|\Z)))"  # a plain value: no list item, no mapping
    r"(?P<value>[^\s#][^\n]{0,512}+)"
)


def _is_plain_secret(name: str, value: str) -> bool:
    return is_literal_secret(name, value) and not looks_like_code(value)


def _next_line_spans(text: str, lower: str) -> Iterator[tuple[int, int]]:
    for match in _NEXT_LINE_VALUE.finditer(lower):
        name = _name_before(text, match.start())
        if not name or name_strength(name) is Strength.NONE:
            continue
        line_start = text.rfind("\n", 0, match.start()) + 1
        line = text[line_start : match.start()]
        if line.strip().removeprefix("- ").strip("\"'") != name:
            continue  # not a YAML key alone on its line: "if token:" (code), prose
        if len(line) - len(line.lstrip(" \t")) >= len(match["indent"]):
            continue  # not deeper: the next key of the same mapping
        value = text[match.start("value") : match.end("value")].rstrip()
        judged = value[1:-1] if value[:1] in "\"'" and value[-1:] == value[:1] else value
        block = match["block"] is not None
        if is_quoted_secret(name, judged) if block else _is_plain_secret(name, judged):
            start = match.start("value")
            yield start, start + len(value)


# A secret name given as a call's first argument, the literal as its second:
# os.environ.setdefault("DB_PASSWORD", "..."), config.set("api_key", "...").
_CALL_PAIR = re.compile(
    r"\([ \t]*+[\"'](?P<name>[\w.\-]{1,80}+)[\"'][ \t]*+,[ \t]*+"
    r"(?:\"(?P<dq>[^\"\\\n]{1,512}+)\"|'(?P<sq>[^'\\\n]{1,512}+)')"
)


def _call_spans(text: str) -> Iterator[tuple[int, int]]:
    for match in _CALL_PAIR.finditer(text):
        group = "dq" if match["dq"] is not None else "sq"
        value = match[group]
        if (
            is_literal_secret(match["name"], value)
            and looks_like_password(value)
            and not looks_like_code(value)
        ):
            yield match.span(group)
