"""Redact secrets from free text before it enters the shared memory.

:func:`redact_secrets` replaces every secret it recognises with :data:`REDACTED` and keeps the
context around it (``password=[REDACTED]``, ``postgres://app:[REDACTED]@db/prod``,
``Authorization: Bearer [REDACTED]``), so that notes stay useful to the next agent.

The rules, each in its own module:

* blocks (:mod:`~aletheia_mem.domain.redaction_blocks`): PEM, PGP and PuTTY private keys
  (also as string literals, comments, quotes, numbered or diff lines), the ``data:`` values of
  Kubernetes Secrets;
* lines (:mod:`~aletheia_mem.domain.redaction_lines`): URL and DSN passwords (IPv6 hosts too),
  webhook URLs, ``Authorization`` and ``Cookie`` headers and ``Bearer`` tokens, command-line
  options (``--password X``, ``curl -u user:pass``, ``mysql -pX``, ``sshpass -p X``,
  ``mongo -p X``, ``ldapsearch -w X``, ``smbclient -U u%X``, ``htpasswd -b``, ``net user``,
  ``IDENTIFIED BY``, ``echo X | docker login --password-stdin``), passwords written in
  sentences and prompts, random values after a strong name and blanks, a table cell, "is",
  ":" or "->" with more words after them (``aws configure set aws_secret_access_key X``,
  ``api_key: X for staging``, ``STRIPE_KEY is X``), a vendor's hex key in prose (``the datadog
  key 3f9a...``), ``.pgpass`` lines;
* vendors (:mod:`~aletheia_mem.domain.redaction_vendors`): 81 token formats with a documented
  shape (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, Hugging Face, Vault,
  DigitalOcean, Databricks, Doppler, SendGrid, Twilio, age..., Aletheia's own hub tokens), also
  wrapped in base64 or glued
  to each other or to a word with no separator, and the AWS secret key beside its key ID
  (names made of words after a prefix that begins names too are kept: ``alt_``, ``hf_``,
  ``oat_``);
* names (:mod:`~aletheia_mem.domain.redaction_names`): literal values given to secret-looking
  names in code, subscripts, YAML (also on the next line), INI, dotenv, JSON (also escaped
  inside a JSON string), XML, Terraform variables, name/value pairs, call arguments, cookies
  and query strings, with an entropy check for weak names (``key``, ``session``, ``seed``),
  quoted passphrases given to password names, and CamelCase passphrases in .env and shell
  assignments (``DB_PASSWORD=CorrectHorseBatteryStaple``, ``export db_password=Sunshine;``),
  and a password written as a file name (``password=hunter2.txt``);
* phrases (:mod:`~aletheia_mem.domain.redaction_phrases`): passphrases written bare after a
  password name at a line's start, in lower-case or Title Case words or CamelCase
  (``password: correct horse battery staple``, ``password: CorrectHorseBatteryStaple``) or in
  a sentence (``the wifi password is Correct Horse Battery Staple.``), not prose (``password:
  the one in the vault``), titles or types (``password: SecretStr``).

The rules read the text as a reader or a normalising tool would
(:mod:`~aletheia_mem.domain.redaction_fold`): NFKC-folded (full-width letters, digits and
separators, mathematical letters, ligatures), without zero-width and other invisible
characters, with Cyrillic and Greek letters that look like Latin ones read as those in a run of
non-blank characters where one stands beside a Latin letter or digit or as a name ("p" +
Cyrillic "a" + "ssword=", a name wholly in look-alikes before "=", ":", a quote or ">"),
without the combining marks and no-break spaces inside a vendor token, and with a token cut by
a shell line continuation joined. What they find there is redacted in the original text, whose
other characters are kept byte for byte: a secret's span ends at its own last character.

Kept: placeholders (``${DB_PASSWORD}``, ``<your-token>``, ``xxxx``) and status words
(``Password: required``), code expressions, paths and resource names (``password_reset.py``,
``kubectl get secret db-creds``, ``--secret=api-key``), git SHAs, UUIDs, ULIDs and hex digests
named as identifiers (``Idempotency-Key``, ``cache_key=<sha1>``), digests, tokenizer and model
names after "token", public keys, fingerprints and certificates. Every pattern is bounded or
possessive, so the cost stays linear on adversarial input. The output is a fixed point:
redacting it again changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from aletheia_mem.domain.redaction_anchors import (
    anchor_case,
    may_hold_assignment,
    may_hold_authorization,
    may_hold_block,
    may_hold_command_secret,
    may_hold_passphrase,
    may_hold_prose_secret,
    may_hold_terraform_secret,
    may_hold_url_secret,
    may_hold_vendor_token,
    may_hold_xml_secret,
)
from aletheia_mem.domain.redaction_blocks import redact_blocks
from aletheia_mem.domain.redaction_fold import Folded, fold, folded_text
from aletheia_mem.domain.redaction_lines import (
    redact_authorization,
    redact_command_lines,
    redact_prose,
    redact_urls,
)
from aletheia_mem.domain.redaction_names import (
    is_literal_secret,
    redact_assignments,
    redact_terraform_variables,
    redact_xml,
)
from aletheia_mem.domain.redaction_phrases import redact_bare_passphrases
from aletheia_mem.domain.redaction_trail import recording, replaced_regions
from aletheia_mem.domain.redaction_values import REDACTED, redact_span
from aletheia_mem.domain.redaction_vendors import redact_vendor_tokens

__all__ = ["REDACTED", "redact_named_value", "redact_secrets"]

# Order matters: structured secrets first, so later rules see [REDACTED] and leave it alone.
# Each rule runs only on a text that holds what it needs (redaction_anchors), given the text and
# its lower case: it would return any other text unchanged, as it does most names and notes.
_RULES: tuple[tuple[Callable[[str], str], Callable[[str, str], bool]], ...] = (
    (redact_blocks, may_hold_block),
    (redact_urls, may_hold_url_secret),
    (redact_vendor_tokens, may_hold_vendor_token),
    (redact_authorization, may_hold_authorization),
    (redact_command_lines, may_hold_command_secret),
    (redact_assignments, may_hold_assignment),
    (redact_terraform_variables, may_hold_terraform_secret),
    (redact_xml, may_hold_xml_secret),
    (redact_bare_passphrases, may_hold_passphrase),
    (redact_prose, may_hold_prose_secret),
)


def _apply_rules(text: str) -> str:
    lower = anchor_case(text)
    for rule, may_change in _RULES:
        if may_change(text, lower):
            redacted = rule(text)
            if redacted is not text:
                text, lower = redacted, anchor_case(redacted)
    return text


def redact_secrets(text: str) -> str:
    """Replace the secrets in ``text`` with :data:`REDACTED`, keeping their context.

    Args:
        text: Free text: notes, logs, code, configuration, markdown.

    Returns:
        ``text`` with each recognised secret replaced; innocent text is returned unchanged.
        Redacting the result again returns it unchanged.
    """
    if not text:  # a save without a title redacts "": no rule finds anything in it
        return text
    folded = fold(text)
    if folded is not None:  # what the folded copy shows first, then the original as it is
        text = _redact_folded(folded)
    return _apply_rules(text)


def _redact_folded(folded: Folded) -> str:
    """The original text with what the rules find in its folded copy redacted."""
    with recording() as notes:
        redacted = _apply_rules(folded.text)
    if redacted == folded.text:
        return folded.source
    regions = replaced_regions(len(folded.text), notes)
    return redact_span(folded.source, sorted(folded.original_span(*region) for region in regions))


def redact_named_value(name: str, value: str) -> str:
    """``value`` as stored under ``name`` (a fact's predicate, a form field).

    A literal given to a secret-looking name (``password`` = ``Tr0ub4dor&3``) is replaced whole;
    any other value goes through :func:`redact_secrets`.
    """
    stripped = folded_text(value).strip()
    if is_literal_secret(folded_text(name, name=True).strip(), stripped):
        return REDACTED
    return redact_secrets(value)
