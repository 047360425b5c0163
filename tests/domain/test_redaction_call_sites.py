"""Redaction where names are keys: project keys, work-state list names and fact objects."""

from __future__ import annotations

import pytest

from aletheia_mem.domain.redaction import REDACTED, redact_named_value
from aletheia_mem.domain.worklists import list_key, list_name
from aletheia_mem.projects import normalize_project

AWS = "AKIA" + "Z7QWERTYUIOP1234"
LEGITIMATE_PROJECTS = [
    "aletheia", "payments-api", "secret-santa", "token-bucket", "api-key-rotator", "auth0-proxy",
    "password-manager", "k8s-secrets-operator", "ghp-tools", "sk-learn-demo", "my_project_v2",
    "3f2a9c1b", "123e4567-e89b-12d3-a456-426614174000", "session-store", "key-value", "vault",
    "oauth2-server", "jwt-decoder", "shop.example.com", "@acme/ui", "Ünïcödé-プロジェクト",
]  # fmt: skip


@pytest.mark.parametrize("name", LEGITIMATE_PROJECTS)
def test_a_legitimate_project_name_keeps_its_key(name: str) -> None:
    assert normalize_project(f"  {name} ") == name.strip().lower()


def test_a_secret_in_a_project_name_is_redacted_and_the_key_is_stable() -> None:
    key = normalize_project(f"acme-{AWS}")
    assert key == "acme-[redacted]"
    assert normalize_project(key) == key
    assert normalize_project(f"ACME-{AWS}") == key


def test_a_list_name_is_redacted_the_same_way_for_writes_and_reads() -> None:
    name = "deploy sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
    assert list_name(name) == f"deploy {REDACTED}"
    assert list_key(name) == list_key(list_name(name)) == f"list:deploy {REDACTED}"
    assert list_name("todo") == "todo"


def test_a_fact_object_named_like_a_secret_is_redacted_whole() -> None:
    assert redact_named_value("password", "Tr0ub4dor&3") == REDACTED
    assert redact_named_value("db password", "hunter22x") == REDACTED
    assert redact_named_value("database", "PostgreSQL 16") == "PostgreSQL 16"
    assert redact_named_value("password policy", "12 characters") == "12 characters"
    assert redact_named_value("token", "${GITHUB_TOKEN}") == "${GITHUB_TOKEN}"
