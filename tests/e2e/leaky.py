"""Secrets an agent might send to the memory, spread over every field a write path takes.

The fake tokens are split after their vendor prefix ("ghp_" + "...") so that secret scanners do
not flag this file; they are random and were never valid credentials.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

GITHUB = "ghp_" + "u8jzPde0IgxLd6GncfBAepfJBd0Kh8oOOL8d"
AWS = "AKIA" + "Z7QWERTYUIOP1234"
GITLAB = "glpat-" + "x1Y2z3A4b5C6d7E8f9G0"
HUGGING_FACE = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYzAbCdEfGh"
SENDGRID = "SG." + "Ab3dEfGh1jKlMn0pQrStUv.Ab3dEfGh1jKlMn0pQrStUvWxYz0123456789AbCdEfG"
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
SLACK_APP = "xapp-" + "1-A0123456789-0123456789012-abcdef0123456789"
DIGITALOCEAN = "dop_v1_" + "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"
HUB = "alt_" + "Xk9_2mQpL7vR-tY4wZ8aB3cD5eF6gH1j"  # an Aletheia hub token, with no keyword by it
HUB_DASHED = "alt_" + "w7N-qRz2_Lk5YbH8mT0vC4xJ9sPdG3f-"  # one ending with "-"
CURL_PASSWORD = "Cu7lPassw0rd"
URL_PASSWORD = "p@ss/w#rd9Z"
PROSE_PASSWORD = "Tr0ub4dor&3x"
LIST_PASSWORD = "L1stS3cretPw"
MYSQL_PASSWORD = "MyS9lPass"
HEADER_KEY = "PLCM7HUF" + "pk5acdIbzlpk"  # an API key in a header line, as a fact's subject
PRIVATE_NOTE = "InnerPrivateNote"
OUTER_PRIVATE_NOTE = "OuterPrivateTail"

SECRETS = (
    GITHUB,
    AWS,
    GITLAB,
    HUGGING_FACE,
    SENDGRID,
    STRIPE,
    SLACK_APP,
    DIGITALOCEAN,
    HUB,
    HUB_DASHED,
    CURL_PASSWORD,
    URL_PASSWORD,
    PROSE_PASSWORD,
    LIST_PASSWORD,
    MYSQL_PASSWORD,
    HEADER_KEY,
)

TEXT = (
    f"Deploy notes: curl -u admin:{CURL_PASSWORD} https://api.example.com/deploy works,"
    f" DATABASE_URL=postgres://app:{URL_PASSWORD}@db.internal/prod, and the CI uses {GITHUB}."
    f" The password for the staging db is {PROSE_PASSWORD}. Use {HUB} for the shop hub."
)
TITLE = f"Deploy notes: rotate {AWS} today"
FACTS: list[Any] = [
    {"subject": "ci", "predicate": "token", "object": GITLAB},
    {"subject": f"svc X-Api-Key: {HEADER_KEY}", "predicate": "uses", "object": "postgres"},
    f"the model registry token is {HUGGING_FACE}",
]
FILES = [f"config/{SENDGRID}.env"]
PROJECT = f"acme-{AWS}"
LIST_NAME = f"deploy {STRIPE}"
LIST_ITEMS: list[Any] = [
    f"export STRIPE_KEY={STRIPE}",
    {"password": LIST_PASSWORD},
    f"hub: {HUB_DASHED}",
]
RULE_THEN = f"Post releases with the bot token {SLACK_APP}"
RULE_WHEN = f"you run mysql -u root -p{MYSQL_PASSWORD}"
DISMISS_REASON = f"duplicate; leaked {DIGITALOCEAN}"
PROMPT = (
    f"Deploy with curl -u admin:{CURL_PASSWORD} and {GITHUB}."
    f" <private>hide <private>{PRIVATE_NOTE}</private> {OUTER_PRIVATE_NOTE}</private> thanks,"
    f" then sync with {HUB}"
)


def leaked(*outputs: str) -> list[str]:
    """The secrets found in any of ``outputs``."""
    joined = "\n".join(outputs)
    return [secret for secret in SECRETS if secret in joined]


def leaked_in_store(data_dir: Path) -> list[str]:
    """The secrets found anywhere in the store's files, byte for byte (tables, indexes, WAL)."""
    raw = b"".join(path.read_bytes() for path in data_dir.glob("aletheia.db*"))
    return [s for s in SECRETS if s.encode() in raw or s.lower().encode() in raw]
