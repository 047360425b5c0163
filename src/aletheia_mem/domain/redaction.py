"""Redact secrets from free text before it enters the shared memory.

:func:`redact_secrets` replaces every secret it recognises with :data:`REDACTED` and keeps the
context around it (``password=[REDACTED]``, ``postgres://app:[REDACTED]@db/prod``,
``Authorization: Bearer [REDACTED]``), so that notes stay useful to the next agent.

The rules, each in its own module:

* blocks (:mod:`~aletheia_mem.domain.redaction_blocks`): PEM and PuTTY private keys, the
  ``data:`` values of Kubernetes Secrets;
* lines (:mod:`~aletheia_mem.domain.redaction_lines`): URL and DSN passwords (IPv6 hosts too),
  webhook URLs, ``Authorization`` and ``Cookie`` headers and ``Bearer`` tokens, command-line
  options (``--password X``, ``curl -u user:pass``, ``mysql -pX``, ``sshpass -p X``,
  ``echo X | docker login --password-stdin``), passwords written in sentences and prompts,
  ``.pgpass`` lines;
* vendors (:mod:`~aletheia_mem.domain.redaction_vendors`): 80 token formats with a documented
  shape (AWS, GitHub, GitLab, Slack, Stripe, OpenAI, Anthropic, Google, Hugging Face, Vault,
  DigitalOcean, Databricks, Doppler, SendGrid, Twilio, age...);
* names (:mod:`~aletheia_mem.domain.redaction_names`): literal values given to secret-looking
  names in code, subscripts, YAML, INI, dotenv, JSON, XML, Terraform variables, cookies and
  query strings, with an entropy check for weak names (``key``, ``session``, ``seed``), and
  quoted passphrases given to password names.

Kept: placeholders (``${DB_PASSWORD}``, ``<your-token>``, ``xxxx``), code expressions, paths,
git SHAs, UUIDs, digests, public keys and certificates. Every pattern is bounded or possessive,
so the cost stays linear on adversarial input. The output is a fixed point: redacting it again
changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from aletheia_mem.domain.redaction_blocks import redact_blocks
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
from aletheia_mem.domain.redaction_values import REDACTED
from aletheia_mem.domain.redaction_vendors import redact_vendor_tokens

__all__ = ["REDACTED", "redact_named_value", "redact_secrets"]

# Order matters: structured secrets first, so later rules see [REDACTED] and leave it alone.
_RULES: tuple[Callable[[str], str], ...] = (
    redact_blocks,
    redact_urls,
    redact_vendor_tokens,
    redact_authorization,
    redact_command_lines,
    redact_assignments,
    redact_terraform_variables,
    redact_xml,
    redact_prose,
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


def redact_named_value(name: str, value: str) -> str:
    """``value`` as stored under ``name`` (a fact's predicate, a form field).

    A literal given to a secret-looking name (``password`` = ``Tr0ub4dor&3``) is replaced whole;
    any other value goes through :func:`redact_secrets`.
    """
    stripped = value.strip()
    if is_literal_secret(name.strip(), stripped):
        return REDACTED
    return redact_secrets(value)
