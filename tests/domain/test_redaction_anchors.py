"""The anchors checked before each redaction rule (``redaction_anchors``) change no output.

A rule is skipped only when its anchor says the text lacks what the rule needs. Checked two
ways on the labelled corpus, the bench's texts, every string of the redaction tests, generated
text built from fragments of secret formats (with look-alikes, case-folding letters, invisible
characters and line breaks) and short names:

* rule by rule, along the whole chain of rules and on the folded copy too: where an anchor says
  no, the rule finds nothing (no span noted, the text returned as it is);
* end to end: ``redact_secrets`` gives what the reference gives, the path as it was before the
  anchors, every rule run on every text (kept below).
"""

# ruff: noqa: RUF001  (look-alike letters are the point here)
from __future__ import annotations

import ast
import string
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aletheia_mem.domain import redaction, redaction_anchors, redaction_names
from aletheia_mem.domain.redaction import redact_secrets
from aletheia_mem.domain.redaction_anchors import anchor_case
from aletheia_mem.domain.redaction_fold import fold
from aletheia_mem.domain.redaction_trail import recording, replaced_regions
from aletheia_mem.domain.redaction_values import redact_span

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import redaction_bench
from redaction_corpus import VENDORS, load_corpus

ROOT = Path(__file__).resolve().parents[2]

RULES: list[Callable[[str], str]] = [rule for rule, _ in redaction._RULES]


def _chain(text: str) -> str:
    for rule in RULES:
        text = rule(text)
    return text


def reference_redact(text: str) -> str:
    """``redact_secrets`` before the anchors: every rule on every text, folded copy first."""
    if not text:
        return text
    folded = fold(text)
    if folded is not None:
        with recording() as notes:
            redacted = _chain(folded.text)
        if redacted == folded.text:
            text = folded.source
        else:
            regions = replaced_regions(len(folded.text), notes)
            spans = sorted(folded.original_span(*region) for region in regions)
            text = redact_span(folded.source, spans)
    return _chain(text)


def wrongly_skipped(text: str) -> list[str]:
    """The rules whose anchor says no to a text they find something in, along the chain of
    rules from ``text`` and from its folded copy."""
    folded = fold(text)
    starts = [text] if folded is None else [folded.text, text]
    wrong = []
    for current in starts:
        for rule, may_change in redaction._RULES:
            with recording() as notes:
                after = rule(current)
            if (notes or after != current) and not may_change(current, anchor_case(current)):
                wrong.append(f"{rule.__name__}: {current!r}")
            current = after
    return wrong


def _strings_of(path: Path) -> set[str]:
    """The string constants of a test module, with constant "+" and "*" worked out."""

    def value(node: ast.AST) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = value(node.left), value(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            left, times = value(node.left), node.right
            if left is not None and isinstance(times, ast.Constant) and type(times.value) is int:
                return left * min(times.value, 5_000)
        return None

    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {found for node in ast.walk(tree) if (found := value(node))}


def _known_texts() -> list[str]:
    tests = sorted((ROOT / "tests" / "domain").glob("test_redaction*.py"))
    tests += [ROOT / "tests" / "safety" / "test_redaction_shapes.py"]
    texts = {text for path in tests for text in _strings_of(path)}
    for case in load_corpus():
        texts |= {case.text, *case.secrets}
    bench = (
        redaction_bench.NOTE,
        redaction_bench.CONFIG,
        redaction_bench.LOOKALIKE_NOTE,
        redaction_bench.CYRILLIC_NOTE,
        redaction_bench.MIXED_SCRIPT_NOTE,
    )
    texts |= {*bench, *(text[:size] for text in bench for size in (4, 60, 600))}
    texts |= {unit * 40 for unit in redaction_bench.ADVERSARIAL.values()}
    return sorted(texts)


KNOWN = _known_texts()
SECRET_FORMATS = sorted({case_secret for case in load_corpus() for case_secret in case.secrets})
# Pieces of every rule's shape, the anchors themselves in other cases and split by separators,
# and characters that case-fold or normalise to ASCII letters (Kelvin sign, dotted and dotless
# I, long s, full-width letters, Cyrillic look-alikes) or print as nothing.
FRAGMENTS = [
    *(prefix for _, prefix, _, _, _ in VENDORS),
    "PRIVATE KEY", "-----BEGIN RSA PRIVATE KEY-----\n", "\n-----END RSA PRIVATE KEY-----",
    "Private-Lines: 1\n", "Private-MAC: ", "kind: Secret\n", "data:\n", "  k: ", "Secret", "ata:",
    "://", "https://u:", "@", "@db/x", "hooks.slack.com/services/", "%2F%2F", "%2f%2f", "%3A",
    "%40", "@tcp(", "@unix(", "Bearer ", "bEaReR ", "Authorization: ", "authorization=",
    "Cookie: ", "set-cookie: ", "document.cookie = ", "curl ", " -b ", "--cookie ", " -u ",
    "-U ", "admin:", "admin%", "--password ", "--api-key=", "--password-stdin", "--secret=",
    " -p", " -a", " -w", "-p", "-a", "mysql ", "sshpass ", "docker login ", "redis-cli ",
    "ldapsearch ", "mongo ", "smbclient ", "htpasswd -b f u ", "net user bob ", "IDENTIFIED BY ",
    "CREATE USER ", "echo ", " | ", "pass:", "openssl -pass ", " is ", " was ", " now ", ": ",
    "=", ":", "==", "=>", "->", "  =", " = ", "(", ",", ")", '"', "'", "`", "[", "]", "{", "}",
    "<", ">", "</", "<password>", "</password>", 'value="', 'VALUE="', 'Value="', 'key="',
    "variable ", '"db_password"', " {", "default = ", "\\", '\\"', "\n", "\r\n", "\\\n", "\t",
    ":AA", "123456789:", "localhost:5432:*:postgres:", "*:*:", "|", ";", "&", "#", "export ",
    "password", "Password", "PASSWORD", "pass_word", "Pass-Word", "passphrase", "passwd", "pwd",
    "pw", "p.w", "secret", "s_e_c_r_e_t", "token", "to-ken", "credential", "apikey", "api key",
    "api_key", "key", "k-e-y", "Key", "KEY", "auth", "seed", "salt", "session", "sess", "sid",
    "cookie", "sig", "signature", "value", "name: ", "- name: ", "self.", "public_key",
    "cache_key", "Tr0ub4dor&3", "hunter22", "correct horse battery staple",
    "Correct Horse Battery Staple", "CorrectHorseBatteryStaple", "Xq7Rand0mValue12345678ab",
    "3f2a9c1b7e4d5f60718293a4b5c6d7e8", "[REDACTED]", "${TOKEN}", "<your-token>",
    "K", "İ", "ı", "ſ", "Σ", "ß", "ｐａｓｓ", "＝", "：", "р", "а", "ѕ", "е", "\u200b",
    "\u00ad", "\u00a0", "\u0301", "\ufeff", "🙂",
]  # fmt: skip
TOKEN_CHARS = string.ascii_letters + string.digits + "_-./+~="

fragment_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.sampled_from(SECRET_FORMATS),
        st.text(alphabet=TOKEN_CHARS, min_size=1, max_size=48),
        st.text(max_size=12),
    ),
    max_size=14,
).map("".join)
short_names = st.one_of(
    st.text(max_size=16),
    st.text(alphabet=string.printable, max_size=16),
    st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=3).map("".join),
)


def _no_rule_wrongly_skipped(texts: Iterable[str]) -> None:
    wrong = [found for text in texts for found in wrongly_skipped(text)]
    assert wrong == []


def _same_as_reference(texts: Iterable[str]) -> None:
    differ = [text for text in texts if redact_secrets(text) != reference_redact(text)]
    assert differ == []


@pytest.mark.parametrize("part", range(4))
def test_no_rule_is_skipped_where_it_finds_a_secret_in_known_texts(part: int) -> None:
    _no_rule_wrongly_skipped(KNOWN[part::4])


@pytest.mark.parametrize("part", range(4))
def test_known_texts_are_redacted_as_by_every_rule(part: int) -> None:
    _same_as_reference(KNOWN[part::4])


@settings(max_examples=1500, deadline=None)
@given(fragment_text)
def test_no_rule_is_skipped_where_it_finds_a_secret_in_generated_text(text: str) -> None:
    _no_rule_wrongly_skipped([text])
    _same_as_reference([text])


@settings(max_examples=1000, deadline=None)
@given(short_names)
def test_short_names_are_redacted_as_by_every_rule(name: str) -> None:
    _no_rule_wrongly_skipped([name])
    _same_as_reference([name, name.lower(), name.strip()])


# One text for each way a rule's anchor can hold, each redacted by that rule alone.
NEEDED = [
    "kind: Secret\ndata:\n  password: VHIwdWI0ZG9yJjN4\n",
    "https://bob:S3cretPw9@db.example.com/x",
    "https://hooks.slack.com/services/T000/B000/XXXXabcd1234",
    "next=https%3A%2F%2Falice%3AS3cretPw9%40host",
    "next=https%3a%2f%2falice%3aS3cretPw9%40host",
    "app:S3cretPw9@tcp(db:3306)/shop",
    "app:S3cretPw9@unix(/var/run/mysqld.sock)/shop",
    "GITHUB_TOKEN=ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d",
    "Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0",
    "Authorization: token 0f3a9c1b7e4d5f60",
    "Cookie: sid=Xq7Rand0mValue1234",
    "curl -b 'sid=Xq7Rand0mValue1234' https://app.example.com",
    "--password S3cretPw9",
    "curl -u admin:Cu7lPassw0rd https://api.example.com",
    "curl -U admin:S3cretPw9 https://h",
    "smbclient -U admin%S3cretPw9 //host/share",
    "mysql -pS3cretPass",
    "redis-cli -a S3cretPw9",
    "ldapsearch -x -w S3cretPw9",
    "openssl enc\t-pass pass:S3cretPw9",
    "htpasswd -b /etc/htpasswd bob S3cretPw9",
    "net user bob S3cretPw9 /add",
    "CREATE USER bob IDENTIFIED BY 'S3cretPw9'",
    "k-e-y  = Xq7Rand0mValue12345678ab",  # an anchor split by separators inside the name
    "pass_word=Tr0ub4dor&3x",
    "to-ken  : Tr0ub4dor3x",
    'os.environ.setdefault("DB_PASSWORD", "S3cretPw9")',
    'variable "db_password" {\n  default = "S3cretPw9"\n}',
    "<password>S3cretPw9</password>",
    '<add KEY="DbPassword" VALUE="S3cretPw9" />',
    '<add Key="DbPassword" Value="S3cretPw9" />',
    "password: correct horse battery staple",
    "pw: correct horse battery staple",  # a password name without "pass"
    "the wifi password is correct horse battery staple",
    "the wifi password was correct horse battery staple",
    "the password is hunter22",
    "123456789:AA" + "Hk3Rand0mValueXq7Rand0mValue12345",
    "db.example.com:5432:shop:app:Tr0ub4dor3x",
    "ＰＡＳＳＷＯＲＤ＝Tr0ub4dor&3",  # read in the folded copy only
    # a name with a Kelvin sign, which lower-cases to "k", beside a dotted I, which makes
    # lower_same_length lower ASCII letters only
    "<to\u212aen>Xq7Rand0mValue12345678ab</to\u212aen> \u0130",
]


@pytest.mark.parametrize("text", NEEDED)
def test_texts_each_rule_needs_pass_its_anchor_and_are_redacted(text: str) -> None:
    assert wrongly_skipped(text) == []
    assert redact_secrets(text) == reference_redact(text) != text


SECRET_NAMES = sorted(
    {
        *redaction_names._STRONG_SUFFIXES,
        *redaction_names._STRONG_WORDS,
        *redaction_names._WEAK_SUFFIXES,
    }
)


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_random_value_given_to_each_secret_name_is_redacted(name: str) -> None:
    text = f"db_{name}=Xq7Rand0mValue12345678ab"
    assert wrongly_skipped(text) == []
    assert redact_secrets(text) == reference_redact(text) != text


def test_every_secret_name_holds_a_name_anchor() -> None:
    """A name is strong or weak by its suffixes and last words (redaction_names); each holds an
    anchor, so a text without any holds no secret's name."""
    anchors = redaction_anchors._NAME_ANCHORS
    assert [name for name in SECRET_NAMES if not any(anchor in name for anchor in anchors)] == []


def test_the_dotted_capital_i_is_the_one_character_whose_lower_case_is_longer() -> None:
    longer = [chr(code) for code in range(sys.maxunicode + 1) if len(chr(code).lower()) != 1]
    assert longer == [redaction_anchors._LONGER_LOWER]


def test_the_anchors_hold_the_rules_own_words_and_bounds() -> None:
    from aletheia_mem.domain import redaction_lines, redaction_vendors

    prose = redaction_anchors.may_hold_prose_secret
    assert [hint for hint in redaction_lines._HINTS if not prose(hint, hint)] == []
    assert redaction_anchors._MIN_TOKEN_RUN == redaction_vendors._MIN_RUN
    assert redaction_anchors._PGPASS_MIN_COLONS == redaction_lines._PGPASS_MIN_COLONS


def test_short_plain_names_skip_every_rule() -> None:
    """What the anchors are for: a plain project name or short note meets no rule."""
    for text in ("acme", "billing-api", "web_frontend", "Acme Corp", "Fixed flaky test"):
        lower = anchor_case(text)
        assert [rule for rule, may_change in redaction._RULES if may_change(text, lower)] == []
