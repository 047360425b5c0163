"""Secret names with every separator and tail, file-name-like values, and resource names.

``api_key: <key> for staging`` (a colon, then more words), ``credentials is <key>``,
``STRIPE_KEY -> <key>``; a password hidden in a file name (``password=hunter2.txt``); and the
look-alikes kept: a Kubernetes or Secret Manager secret's name (``kubectl get secret db-creds``,
``--secret=api-key``), a digest after an identifier's name (``cache_key=<sha1>``).
"""

from __future__ import annotations

import itertools

import pytest

from aletheia_mem.domain.redaction import REDACTED, redact_secrets

R = REDACTED
KEY20 = "PLCM7HUFpk5acdIbzlpk"
KEY40 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzz9Q2b8Lk1"
SHA1 = "3f786850e387550fdab836ed7e6dc881de23001b"
NAMES = (
    "api_key", "API_KEY", "X-Api-Key", "access_key", "secret_key", "private_key",
    "AWS_SECRET_ACCESS_KEY", "STRIPE_KEY", "signing_key", "encryption_key", "credentials",
    "passwd", "password", "token", "secret", "client_secret", "apikey", "credential",
)  # fmt: skip
SEPARATORS = (": ", " : ", "=", " is ", " -> ")
TAILS = ("", " for staging", ", then run", ".")


@pytest.mark.parametrize(
    ("name", "separator", "tail", "secret"),
    list(itertools.product(NAMES, SEPARATORS, TAILS, (KEY20, KEY40))),
)
def test_a_random_value_after_a_secret_name_is_redacted_whatever_the_separator_and_tail(
    name: str, separator: str, tail: str, secret: str
) -> None:
    text = f"staging creds: {name}{separator}{secret}{tail}"
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert redacted.startswith(f"staging creds: {name}{separator}{R}")
    assert redact_secrets(redacted) == redacted


@pytest.mark.parametrize(
    "text",
    [
        "use api_key: kYYqhXHdO2x9 for staging",
        "credentials: kYYqhXHdO2x9, then run",
        "the signing_key is kYYqhXHdO2x9 for now",
        "AWS_SECRET_ACCESS_KEY : kYYqhXHdO2x9 for the deploy user",
    ],
)
def test_a_password_like_value_after_a_strong_name_and_a_separator_is_redacted(text: str) -> None:
    assert redact_secrets(text) == text.replace("kYYqhXHdO2x9", R)


@pytest.mark.parametrize(
    "text",
    [
        "api_key: from the environment, not the repo",
        "credentials: OAuth2-based with a refresh token",
        "secret_key: Kubernetes-managed for staging",
        "api_key: AWS_PROFILE in CI",
        "credentials is required for staging",
        "the api_key is stored in vault for staging",
        "STRIPE_KEY: see 1Password, then run",
        f"cache_key: {SHA1} for the build",
        "signing_key -> rotate monthly",
        "encryption_key: AES256 for backups",  # algorithms, key files, names
        "signing_key is HMAC-SHA256 based",
        "private_key: id_ed25519 for github",
        "credentials: gcp-sa-2024 for ci",
        "secret_key: v1.2.3 released today",
        "token: gpt-4o-mini for summaries",
    ],
)
def test_prose_after_a_secret_name_and_a_separator_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('files=["src/password=kYYqhXHdO2x9.py"]', "kYYqhXHdO2x9.py"),
        ("password=hunter2.txt", "hunter2.txt"),
        ("password=kYYqhXHdO2x9.py", "kYYqhXHdO2x9.py"),
        (f"src/client_secret={KEY40}.py", f"{KEY40}.py"),
        ("src/client_secret=Zk3Pq8Vw2Lm9Xr4Tb7Nc1Hd6Jf0Gs5Ay8Ue3Wi2O.py", "Zk3Pq8Vw2Lm9"),
    ],
)
def test_a_secret_in_a_file_name_after_a_secret_name_is_redacted(text: str, secret: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted
    assert R in redacted


@pytest.mark.parametrize(
    "text",
    [
        "password=password_reset.py",
        "template: password_reset.py",
        "token=config.py",
        "password=MyConfig.py",
        "password=reset_v2.py",
        "secret=secrets2.yaml",
        "secret=secrets/db/password.txt",
        "password_file=uploads/2024/01/Report2.pdf",
        "self.password = settings.DB_PASSWORD",
        "token = request.token",
    ],
)
def test_a_real_path_or_code_after_a_secret_name_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    "text",
    [
        "kubectl get secret db-creds -o yaml",
        "kubectl describe secret my-app-tls",
        "kubectl delete secret my-app-tls-2024 -n prod",
        "kubectl get secret db-creds-7f9k2 -o yaml",
        "gcloud secrets versions access latest --secret=api-key",
        "gcloud secrets describe db-password",
        "the secret db-creds holds the password",
        f"cache_key={SHA1}",
        "cache_key: 9c1b7e4d5f60718293a4b5c6d7e8f901",
        f"etag={SHA1}",
        f"idempotency_key={SHA1}{SHA1[:24]}",
    ],
)
def test_a_secret_s_name_or_an_identifier_s_digest_is_kept(text: str) -> None:
    assert redact_secrets(text) == text


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("kubectl create secret generic db --from-literal=password=S3cretPw9", "S3cretPw9"),
        ("the secret is xk9p-2mqz-77aa", "xk9p-2mqz-77aa"),
        ("gcloud ... --secret=Xk9pLm2QrT7vWz4", "Xk9pLm2QrT7vWz4"),
        ("open secret Xk9pLm2QrT7vWz for staging", "Xk9pLm2QrT7vWz"),
        (f"key={SHA1}", SHA1),  # a bare "key" may hold a vendor's hex key
        (f"api_key={SHA1}", SHA1),
    ],
)
def test_secrets_near_resource_names_and_digests_are_still_redacted(text: str, secret: str) -> None:
    assert secret not in redact_secrets(text)
