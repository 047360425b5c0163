"""What a text must hold for each redaction rule to change it: cheap checks run before the rule.

Every save and search redacts the project name and each text, most of them short and without a
secret. Each check below is a NECESSARY condition of its rule: when it is false, the rule finds
no span (so notes none for the folded copy) and returns the text unchanged, and skipping it
changes no output. A text that passes a check runs its rule exactly as before. Each check reads
the text the rule would read (the folded copy, or the text an earlier rule redacted), and its
docstring says why it is necessary; ``tests/domain/test_redaction_anchors.py`` checks the claim
rule by rule on the corpus, the redaction tests' inputs and generated text, and checks the
output against every rule run on every text.

A check is a few ``in`` tests: each is a scan in C, from two to four instructions a character
and a fraction of one for a single character, where one regular expression costs a hundred or
more; a rare character is tested first where a word needs it (":" before "pass:").

Case: the rules look for their words in ``lower_same_length(text)``, in the lower-cased text of
a slice, or with ``(?i:...)`` at positions found in one of those. The checks read
:func:`anchor_case`, which holds every ASCII word any of those holds.
"""

from __future__ import annotations

import functools

from aletheia_mem.domain.redaction_values import lower_same_length

# A secret's name: the rules of names and command-line options redact a value only for a name
# whose ``name_strength`` is not NONE. That holds when the name, lower-cased without "_", "-",
# "." and " " (``compact``), ends with one of the strong or weak suffixes, or when its last
# word is "pwd", "pass", "pw" or "sig". Each of those suffixes and words holds one of these
# (tests/domain/test_redaction_anchors.py checks it against redaction_names' lists):
# password/passwd/passphrase/passcode "pass"; pwd "pw"; signature "sig"; secret, token,
# credential(s); apikey, accesskey, ...key, privatekeyid "key"; auth, authkey "auth" or "key";
# seed; salt; session, sessionid, sessid, sess "sess"; sid; cookie.
# A name is a run of the text, so its compact lower case is a run of the text's: the anchor is
# in the text's, which is why the text is compacted too ("k-e-y  = <random>" names a key).
_NAME_ANCHORS = (
    "pass", "pw", "sig", "secret", "token", "credential", "key", "auth", "seed", "salt", "sess",
    "sid", "cookie",
)  # fmt: skip
# The least length of a run of token characters a vendor token (redaction_vendors._MIN_RUN: 20)
# or a base64 word that wraps one (28) is found in.
_MIN_TOKEN_RUN = 20
_PGPASS_MIN_COLONS = 4  # redaction_lines: host:port:database:user:password
# The one character whose lower case is longer (tests/domain/test_redaction_anchors.py): "İ"
_LONGER_LOWER = "\u0130"


def anchor_case(text: str) -> str:
    """``text`` lower-cased for the checks: ``text.lower()``, where each character is lowered
    alone (only a final sigma depends on its neighbours, and it lowers to no ASCII letter), so
    that it holds the lower case of every slice. That is ``lower_same_length(text)``, cached for
    the rules too, unless ``text`` holds the one character whose lower case is longer
    (``_LONGER_LOWER``): then ``lower_same_length`` lowers only ASCII letters, and each of its
    ASCII runs is in ``text.lower()`` too. Where ``(?i:...)`` matches more (the long s, the
    dotless i), it only matches at positions found in those."""
    return text.lower() if _LONGER_LOWER in text else lower_same_length(text)


@functools.lru_cache(maxsize=4)
def _names_a_secret(lower: str) -> bool:
    """Whether some run of the text lower-cased as ``lower`` may be a name whose values are
    secrets (see ``_NAME_ANCHORS``)."""
    compacted = lower.replace("_", "").replace("-", "").replace(".", "").replace(" ", "")
    return any(anchor in compacted for anchor in _NAME_ANCHORS)


def may_hold_block(text: str, lower: str) -> bool:
    """``redact_blocks`` reads a block only after these very tests: "PRIVATE KEY" (PEM),
    "Private-" (PuTTY), "Secret" and "ata:" (a Kubernetes Secret's data)."""
    return "PRIVATE KEY" in text or "Private-" in text or ("Secret" in text and "ata:" in text)


def may_hold_url_secret(text: str, lower: str) -> bool:
    """``redact_urls``: a URL's password or token user is read only after "://" when the text
    holds "@" (each pattern has both); every webhook pattern holds "://" and "hook"; an
    encoded URL needs "%2F%2F" or "%2f%2f", a Go DSN "@tcp(" or "@unix(" (its own tests)."""
    if "@" in text and ("://" in text or "@tcp(" in text or "@unix(" in text):
        return True
    if "%" in text and ("%2F%2F" in text or "%2f%2f" in text):
        return True
    return "hook" in text and "://" in text


def may_hold_vendor_token(text: str, lower: str) -> bool:
    """``redact_vendor_tokens`` reads only blank-free words of 20 characters or more (a token's
    run, a base64 word of 28), and adds an AWS secret only beside a token it found."""
    return len(text) >= _MIN_TOKEN_RUN


def may_hold_authorization(text: str, lower: str) -> bool:
    """``redact_authorization`` matches from the lower-case positions of "earer" (Bearer),
    "uthorization" and "cookie", and reads curl's cookie flags only when "curl" is there."""
    return "earer" in lower or "uthorization" in lower or "cookie" in lower or "curl" in lower


def may_hold_command_secret(text: str, lower: str) -> bool:
    """``redact_command_lines``: a long option (``--name value``, ``--password-stdin``) counts
    only under a secret's name; ``-u user:pw`` needs "-u" or "-U" and ":", ``-U user%pw`` "%";
    the short flags (" -p", " -a" or " -w", "-p" or "-a" first), "htpasswd" (with its flags),
    "pass:" (openssl), "net user" and "identified" are its own tests."""
    if "-" in text and (
        ("--" in text and _names_a_secret(lower))
        or (" -" in text and (" -p" in text or " -a" in text or " -w" in text))
        or text.startswith(("-p", "-a"))
        or ((":" in text or "%" in text) and ("-u" in text or "-U" in text))
        or "htpasswd" in lower
    ):
        return True
    return (":" in text and "pass:" in text) or "net user" in lower or "identified" in lower


def may_hold_assignment(text: str, lower: str) -> bool:
    """``redact_assignments``: every value it redacts is given to a secret's name, after ":"
    or "=" (also in the unescaped copy of escaped JSON, which only loses backslashes), or as a
    call's second argument after "(" and ","."""
    separated = ":" in text or "=" in text or ("(" in text and "," in text)
    return separated and _names_a_secret(lower)


def may_hold_terraform_secret(text: str, lower: str) -> bool:
    """``redact_terraform_variables`` reads a ``variable`` block's ``default`` only, for a
    variable with a secret's name."""
    return "=" in text and "variable" in text and "default" in text and _names_a_secret(lower)


def may_hold_xml_secret(text: str, lower: str) -> bool:
    """``redact_xml``: an element (``</``) or a ``value="..."`` setting, of a secret's name."""
    element = "<" in text and "</" in text
    setting = "=" in text and ('value="' in text or 'VALUE="' in text or 'Value="' in text)
    return (element or setting) and _names_a_secret(lower)


def may_hold_passphrase(text: str, lower: str) -> bool:
    """``redact_bare_passphrases``: after ":" with "pass" or "pw" just before it, or after " is "
    or " was " in a text holding "pass"."""
    if ":" in text and ("pass" in lower or "pw" in lower):
        return True
    return (" is " in text or " was " in text) and "pass" in lower


def may_hold_prose_secret(text: str, lower: str) -> bool:
    """``redact_prose`` reads from the positions of its hint words (redaction_lines._HINTS), a
    Telegram token after ":AA" and a .pgpass line in a text of four ":" or more."""
    return (
        "pass" in lower
        or "pw" in lower
        or "secret" in lower
        or "token" in lower
        or "key" in lower
        or "credential" in lower
        or (":" in text and (":AA" in text or text.count(":") >= _PGPASS_MIN_COLONS))
    )
